"""Evaluator: plays n_episode whole games against the opponents and reports what a GoBigger player cares about.

Written here rather than using DI-engine's InteractionSerialEvaluator because every evaluation must replay the
same held-out games (the envs are re-seeded before each evaluation) and the report carries the game's outcome
(win rate, score ratio, rank) next to DI-engine's reward statistics, under the names DI-engine uses.
"""
import json
import logging
import os
import time
from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np
from tabulate import tabulate

from ..progress import Progress
from .env_manager import SplitStep, env_groups, wait_until_idle

# The report's fields, in order. DI-engine's evaluator fields first, then the game's outcome.
REPORT_FIELDS = (
    'train_iter', 'ckpt_name', 'episode_count', 'envstep_count', 'avg_envstep_per_episode', 'evaluate_time',
    'avg_envstep_per_sec', 'avg_time_per_episode', 'reward_mean', 'reward_std', 'reward_max', 'reward_min',
    'win_rate', 'score_ratio_mean', 'score_ratio_median', 'rank_mean', 'final_score_mean', 'opponent_score_mean', 'collector_envstep'
)


def selection_key(report: Mapping[str, Any]) -> Tuple[float, float]:
    """What makes one evaluation better than another (ckpt_best): the win rate (first place on multi-team presets),
    ties broken by the median score ratio; not reward_mean, whose meaning changes with env.reward."""
    return report['win_rate'], report['score_ratio_median']


class Evaluator:

    def __init__(self, env_manager, policy, n_episode: int, seed: int, report_path: Optional[str] = None,
                 progress: Optional[bool] = None) -> None:
        """
        Arguments:
            env_manager: a launched DI-engine env manager whose envs have is_evaluator=True (held-out seeds).
            policy: the policy's eval_mode.
            n_episode: games per evaluation, spread evenly over the envs.
            seed: the evaluation seed; the same games are played at every evaluation.
            report_path: JSON-lines file that every report is appended to.
            progress: show the games played as a bar (None: on a terminal; else log lines, see progress.py).
        """
        self._env = env_manager
        self._policy = policy
        self._n_episode = n_episode
        self._seed = seed
        self._report_path = report_path
        self._progress = progress
        # the last evaluation's games, by game seed: each game's seed and our team's outcome (the env's
        # episode_info), so that two checkpoints' games on the same seeds can be compared one by one
        self.games: List[Dict[str, Any]] = []

    def eval(self, train_iter: int = 0, collector_envstep: int = 0) -> Dict[str, Any]:
        env_num = self._env.env_num
        # env i plays quota[i] games; the quotas are fixed up front so that fast games do not bias the mean
        quota = [self._n_episode // env_num + (1 if i < self._n_episode % env_num else 0) for i in range(env_num)]
        self._env.seed(self._seed, dynamic_seed=True)
        self._env.reset()
        start = time.time()
        episodes: List[Dict[str, Any]] = []
        played = [0] * env_num
        envstep = 0
        # With two halves of envs (a subprocess manager), one half's forward pass runs while the other half steps.
        groups, envs = env_groups(self._env), SplitStep(self._env)
        sent: List[List[int]] = [[] for _ in groups]  # per group, the envs stepping (sent, not received)
        g = 0
        with Progress('evaluation', self._n_episode, 'game', self._progress, leave=False) as progress:
            while True:
                if sent[g]:
                    timesteps = envs.receive(sent[g])
                    sent[g] = []
                    games_before = len(episodes)
                    for i, timestep in timesteps.items():
                        if played[i] >= quota[i]:  # envs past their quota keep playing, not counted
                            continue
                        if timestep.info.get('abnormal', False):
                            logging.warning(f'evaluator env {i} returned an abnormal step ({timestep.info}); replaying')
                            self._env.reset({i: None})
                            continue
                        envstep += 1
                        if timestep.done:
                            played[i] += 1
                            episodes.append(timestep.info)
                    progress.update(len(episodes) - games_before, postfix=f'{envstep} env steps')
                if all(played[i] >= quota[i] for i in range(env_num)):
                    break
                ready = {i: obs for i, obs in self._env.ready_obs.items() if i in groups[g]}
                if ready:
                    output = self._policy.forward(ready)
                    envs.send({i: out['action'] for i, out in output.items()})
                    sent[g] = list(ready)
                elif not any(sent):
                    time.sleep(0.001)  # every env is resetting
                g = (g + 1) % len(groups)
        for ids in sent:  # steps past every quota: read, so that the envs are idle again
            if ids:
                envs.receive(ids)
        duration = time.time() - start
        wait_until_idle(self._env)  # the last games' resets run in the background: let them end
        self.games = sorted((dict(game_seed=e['game_seed'], **e['episode_info']) for e in episodes),
                            key=lambda game: game['game_seed'])
        return self._report(episodes, envstep, duration, train_iter, collector_envstep)

    def _report(self, episodes, envstep, duration, train_iter, collector_envstep) -> Dict[str, Any]:
        reward = np.array([e['eval_episode_return'] for e in episodes], dtype=np.float64)
        report = {
            'train_iter': train_iter,
            'ckpt_name': f'iteration_{train_iter}.pth.tar',
            'episode_count': len(episodes),
            'envstep_count': envstep,
            'avg_envstep_per_episode': envstep / max(len(episodes), 1),
            'evaluate_time': duration,
            'avg_envstep_per_sec': envstep / max(duration, 1e-9),
            'avg_time_per_episode': duration / max(len(episodes), 1),
            'reward_mean': float(reward.mean()),
            'reward_std': float(reward.std()),
            'reward_max': float(reward.max()),
            'reward_min': float(reward.min()),
            'win_rate': float(np.mean([float(e['win']) for e in episodes])),
            'score_ratio_mean': float(np.mean([e['score_ratio'] for e in episodes])),
            'score_ratio_median': float(np.median([e['score_ratio'] for e in episodes])),
            'rank_mean': float(np.mean([e['rank'] for e in episodes])),
            'final_score_mean': float(np.mean([e['final_score'] for e in episodes])),
            'opponent_score_mean': float(np.mean([e['opponent_score'] for e in episodes])),
            'collector_envstep': collector_envstep,
        }
        assert tuple(report) == REPORT_FIELDS
        if self._report_path:
            append_report(self._report_path, report)
        return report


def append_report(path: str, report: Dict[str, Any]) -> None:
    """Append a report to a JSON-lines file (evaluator.jsonl)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, 'a') as f:
        f.write(json.dumps(report) + '\n')


def format_report(report: Dict[str, Any]) -> str:
    """The report's figures as a two-column table, numbers rounded for reading (evaluate()'s per-game list left out)."""
    rows = [(k, f'{v:.4g}' if isinstance(v, float) else v) for k, v in report.items() if k in REPORT_FIELDS]
    return tabulate(rows, headers=('evaluator', 'value'), tablefmt='simple')
