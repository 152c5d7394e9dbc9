"""Learning from games: the learner that runs the policy's learn mode and writes checkpoints (learner.py) and the
checkpoint format (checkpoint.py)."""
