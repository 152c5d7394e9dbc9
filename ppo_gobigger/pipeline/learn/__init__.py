"""Learning from games: the learner that runs the policy's learn mode and writes checkpoints (learner.py), the
checkpoint format (checkpoint.py), the kickstart that imitates the bots before PPO (pretrain.py) and the weight
average of sibling policies (averaging.py)."""
