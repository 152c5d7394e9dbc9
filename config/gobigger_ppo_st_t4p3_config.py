"""Four teams of 3 (st_t4p3, 128x128 map, 12-minute games): the recipe (config/gobigger_ppo_config.py, a league from
scratch) with three other teams; rank 1 is the goal.

The default config's settings with rollouts of one whole game per collector env (a game is 1,800 decisions at
action_repeat 4: n_sample = 8 x 1,800) and three times its budget, 1,080,000 env steps. The in-training evaluations
play three teams of level-3 bots.
"""
from copy import deepcopy

from gobigger_ppo_config import create_config, main_config as _base

main_config = deepcopy(_base)
main_config.exp_name = 'exp/gobigger_ppo_st_t4p3'
main_config.env.preset = 'st_t4p3'
main_config.env.n_evaluator_episode = 2  # a game is 1,800 env steps
main_config.max_env_step = 1_080_000
main_config.policy.collect.n_sample = 14_400
main_config.policy.learn.batch_size = 900  # env steps of 3 players each: 16 minibatches per epoch
main_config.policy.eval.evaluator.eval_freq = 144_000
