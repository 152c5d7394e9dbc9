"""Learning from games: the learner that runs the policy's learn mode and writes checkpoints (learner.py), the
checkpoint format (checkpoint.py) and the kickstart that imitates the bots before PPO (pretrain.py)."""
