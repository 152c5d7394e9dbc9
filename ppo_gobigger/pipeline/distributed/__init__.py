"""Where the games run (config ``distributed``): env managers of this process (local.py), rollout workers as Ray
actors (ray_actors.py), or N torchrun ranks that each run the loop on their share and average gradients
(torchrun.py)."""
