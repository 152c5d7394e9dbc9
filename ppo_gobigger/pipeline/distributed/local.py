"""distributed.backend 'local': the collector envs of this process (under torchrun, of this rank) and, on rank 0,
the evaluator envs, in DI-engine env managers of this machine."""
import os
from typing import List, Optional

from easydict import EasyDict

from ...envs.game import team_num
from ...envs.opponents import POLICY_OPPONENTS
from ..league.pool import LeaguePool
from ..league.team_play import TeamPlay
from ..play.collector import RolloutCollector
from ..play.env_manager import build_env_managers, close_env_manager
from ..play.evaluator import Evaluator
from .torchrun import DistributedCollector, Rank


class LocalWorkers:
    """The collector envs of this process and, on rank 0, the evaluator envs, in DI-engine env managers.

    Under torchrun a rank runs its share ``envs`` of the collector envs; env i of all ranks plays the games that
    env i of a single process would (env seed = seed + i), so the ranks' games differ.
    """

    def __init__(self, cfg: EasyDict, create_cfg: EasyDict, policy, envs: range, first_episodes: List[int],
                 rank: Rank, exp_dir: str, progress: Optional[bool] = None,
                 league: Optional[LeaguePool] = None) -> None:
        """
        Arguments:
            cfg: this rank's config (torchrun.rank_config).
            policy: the policy whose collect and eval modes act.
            envs: the global indices of this rank's collector envs.
            first_episodes: games already played by each collector env of all ranks (a resumed run goes on).
            progress: show each evaluation's games as a bar (None: on a terminal; see progress.py).
            league: the pool that plays the other teams (env.opponent 'league').
        """
        self._cfg = cfg
        self._policy = policy
        self._envs = envs
        self._first_episodes = list(first_episodes)
        self._rank = rank
        self._progress = progress
        self._league = league
        self._report_path = os.path.join(exp_dir, 'evaluator.jsonl')
        self._collector_env, self._evaluator_env = build_env_managers(
            cfg, create_cfg, evaluate=rank.is_main, first_episodes=self._first_episodes[envs.start:envs.stop],
            first_env=envs.start
        )

    def start(self):
        """Launch the envs; returns (collector, evaluator or None on ranks other than 0)."""
        self._collector_env.seed(self._cfg.seed + self._envs.start, dynamic_seed=True)
        self._collector_env.launch()
        envs, teams_per_env = self._collector_env, 1
        if self._cfg.env.opponent in POLICY_OPPONENTS:  # the other teams are played here: see league/team_play.py
            envs = TeamPlay(envs, self._policy.collect_mode, team_num(self._cfg.env), self._league,
                            self._policy.collect_mode.get_attribute('device'))
            teams_per_env = envs.teams_per_env
        collector = RolloutCollector(envs, self._policy.collect_mode, self._cfg.policy.collect.n_sample, teams_per_env)
        collector.env_episodes = self._first_episodes[self._envs.start:self._envs.stop]
        if self._rank.world_size > 1:
            collector = DistributedCollector(collector, self._first_episodes)
        evaluator = None
        if self._evaluator_env is not None:
            self._evaluator_env.launch()
            evaluator = Evaluator(
                self._evaluator_env, self._policy.eval_mode, self._cfg.env.n_evaluator_episode, self._cfg.seed,
                self._report_path, self._progress
            )
        return collector, evaluator

    def close(self) -> None:
        close_env_manager(self._collector_env)
        close_env_manager(self._evaluator_env)
