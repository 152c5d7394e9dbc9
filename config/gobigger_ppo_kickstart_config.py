"""PPO past its teacher: the default run (st_t2p2 against level-3 bots, 180,000 env steps) started from a kickstart.

Level-2 bots play our side for the first 36,000 env steps (80 whole games, in the run's budget); the actor learns
their moves by cross-entropy over 16 epochs (learning rate 1e-3) and the critic those games' returns; PPO with no imitation term takes
it from there for the other 144,000 env steps. The kickstart alone (the weights before the
first PPO update, <exp>/ckpt/kickstart.pth.tar) is what PPO has to beat: benchmarks/learning.py plays both on the
same final games (docs/results.md, "PPO past its teacher").
- policy.model.actor_head='discrete': a logit per action learns the bots' moves (accuracy 0.79 after the 16 epochs).
  The default's directional head, slow on the tiny data of tests/test_training.py, imitates these games as well
  (0.82); PPO from it did no better (docs/results.md, "What was tried next").
- env.reward='log_ratio', env.team_spirit=1: each step pays the change of ln(our team's score / the best other
  team's), a game's return is ln(its final score ratio), > 0 when won. With the default's log_score (half the
  player's own), PPO raised that reward and lost games the kickstart won: greedy evaluations went from 8 of 8 to
  5 of 8 in 108,000 env steps of PPO (docs/results.md, "PPO past its teacher").
- policy.learn.learning_rate=1e-4, target_kl=0.02: PPO with the default's 1e-3 moved the imitated policy by an
  approx_kl of 0.1-0.3 an iteration and took the greedy team from 8 of 8 wins (score ratio 15.2) to 5 of 8 (3.1)
  in 36,000 env steps (docs/results.md, "PPO past its teacher").
"""
from copy import deepcopy

from gobigger_ppo_config import create_config, main_config as _base

main_config = deepcopy(_base)
main_config.exp_name = 'exp/gobigger_ppo_kickstart_st_t2p2'
main_config.pretrain = dict(env_steps=36_000, bot_level=2, epochs=16, learning_rate=1e-3)  # the PPO steps' is 1e-4
main_config.env.reward = 'log_ratio'
main_config.env.team_spirit = 1.0
main_config.policy.model.actor_head = 'discrete'
main_config.policy.learn.learning_rate = 1e-4
main_config.policy.learn.target_kl = 0.02
