"""The recipe on st_t3p2 (three teams of 2; rank 1 is the goal): the defaults with twice the budget. Each other team
is drawn on its own; the in-training evaluations play two teams of level-3 bots."""
from easydict import EasyDict

from gobigger_ppo_config import create_config  # noqa: F401  (DI-engine's pair)

main_config = EasyDict(dict(
    exp_name='exp/gobigger_ppo_st_t3p2',
    max_env_step=720_000,
    env=dict(preset='st_t3p2'),
    policy=dict(eval=dict(evaluator=dict(eval_freq=72_000))),
))
