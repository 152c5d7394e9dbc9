"""Four teams of 3 (st_t4p3, 128x128 map, 12-minute games): our team against three teams of level-3 bots."""
from copy import deepcopy

from gobigger_ppo_config import create_config, main_config as _base

main_config = deepcopy(_base)
main_config.exp_name = 'exp/gobigger_ppo_st_t4p3'
main_config.env.preset = 'st_t4p3'
main_config.env.n_evaluator_episode = 2  # a game is 7,200 env steps
main_config.max_env_step = 500_000
main_config.policy.collect.n_sample = 6144
main_config.policy.learn.batch_size = 768  # env steps of 3 players each
main_config.policy.eval.evaluator.eval_freq = 100_000
