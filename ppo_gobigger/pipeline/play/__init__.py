"""Games with a policy: DI-engine env managers that survive a lost env process (env_manager.py), the rollout
collector for training (collector.py) and the evaluator on held-out games (evaluator.py)."""
