"""Free-for-all on st_t4p3 (our team of 3 against three teams of level-3 bots): self-play from a level-2 kickstart.

The settings of the st_t4p3 self-play chain (docs/results.md, "Self-play from the level-2 kickstart on st_t4p3"),
with the rollouts of its best phase:
- policy.load_path: the published level-2 kickstart of st_t4p3 (41,400 env steps of level-2 bots' games imitated).
  Alone it finishes first in 0.24 of the final games; PPO against the level-3 bots with it distilled fell to 0.12.
- env.opponent='self', league.all_teams=True: all four teams play the current weights and every team's steps are
  learnt from (4 x 3 players' steps per env step); evaluations and final games are against level-3 bots.
- policy.learn.learning_rate=5e-4, no target_kl; the default's log_score reward with team spirit 0.5.
- 4 collector envs and n_sample = 4 x 1,800: every rollout is one whole game per env. The chain's first runs used 8
  envs and half a game each (the 8 games in step, so iterations alternated between first and second halves and the
  critic explained 0.53-0.69 of the second halves' returns); the same phase five with whole games finished first in
  44 of 50 games on each of run seeds 0 and 1, where the half-game one did in 29 and 35.
A chain of phases goes on with --from-runs and policy.load_learn_state=True (benchmarks/learning.py).
"""
from copy import deepcopy

from gobigger_ppo_st_t4p3_config import create_config, main_config as _base

main_config = deepcopy(_base)
main_config.exp_name = 'exp/gobigger_ppo_st_t4p3_selfplay'
main_config.max_env_step = 540_000
main_config.env.opponent = 'self'
main_config.env.collector_env_num = 4
main_config.league = dict(all_teams=True)
main_config.policy.load_path = 'benchmarks/results/checkpoints/st_t4p3_kickstart_kickstart.pth.tar'
main_config.policy.learn.learning_rate = 5e-4
main_config.policy.collect.n_sample = 7_200
main_config.policy.eval.evaluator.eval_freq = 54_000
