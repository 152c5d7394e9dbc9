"""PPO from scratch against level-3 bots on st_t2p2, 180,000 env steps: the default config's settings with the bots
as the only opponent (the default until the league recipe; zoo/st_t2p2_scratch_s*), and the reward and discount its
published runs had: 'log_score' and 0.99 (the recipe's are 'log_ratio' and 0.995).

Trained and measured in docs/results.md ("PPO from scratch against the bots"): 3 run seeds won 0.94-0.98 of 100
held-out games against level-3 bots. DI-engine's stock PPO and MAPPO run the same work as the baseline
(config/ding_mappo_config.py, config/ding_ppo_config.py), and the throughput benchmarks time it.
"""
from copy import deepcopy

from gobigger_ppo_config import create_config, main_config as _recipe

main_config = deepcopy(_recipe)
main_config.exp_name = 'exp/gobigger_ppo_vs_bots_st_t2p2'
main_config.max_env_step = 180_000  # 1.44M game frames: the published runs
main_config.env.opponent = 'bot'
main_config.pop('league')  # no league
main_config.env.reward = 'log_score'  # the published runs' reward and discount (docs/results.md)
main_config.policy.learn.discount_factor = 0.99
