"""Three teams of 2 (st_t3p2): the recipe (config/gobigger_ppo_config.py, a league from scratch) with two other teams;
rank 1 is the goal.

The default config's settings (games are as long as st_t2p2's: 450 decisions) with twice its budget, 720,000 env
steps: each other team is drawn on its own (the current weights in half the draws, else a pool member), and every
team's steps are learnt from in the games where both are the current weights. The in-training evaluations play two
teams of level-3 bots.
"""
from copy import deepcopy

from gobigger_ppo_config import create_config, main_config as _base

main_config = deepcopy(_base)
main_config.exp_name = 'exp/gobigger_ppo_st_t3p2'
main_config.env.preset = 'st_t3p2'
main_config.max_env_step = 720_000
main_config.policy.eval.evaluator.eval_freq = 72_000
