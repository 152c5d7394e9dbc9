"""The recipe on st_t4p3 (four teams of 3, a 128x128 map, 12-minute games; rank 1 is the goal): the defaults with
three times the budget and rollouts of one whole game (1,800 decisions) per collector env."""
from easydict import EasyDict

from gobigger_ppo_config import create_config  # noqa: F401  (DI-engine's pair)

main_config = EasyDict(dict(
    exp_name='exp/gobigger_ppo_st_t4p3',
    max_env_step=1_080_000,
    env=dict(preset='st_t4p3', n_evaluator_episode=2),
    policy=dict(
        learn=dict(batch_size=900),  # 16 minibatches of a rollout, as on st_t2p2
        collect=dict(n_sample=14_400),  # 8 envs x 1,800
        eval=dict(evaluator=dict(eval_freq=144_000)),
    ),
))
