"""Head to head: checkpoint A's team against checkpoint B's (gobigger-eval --ckpt A --vs B).

The games are the evaluator's held-out games of A's config: its seed, n_evaluator_episode games on
evaluator_env_num envs, game seeds 2 * ((seed + env) * SEED_STRIDE + k) + 1 (see envs/gobigger_env.py), so a
head-to-head plays the very games A's evaluation against the bots played. They are played by the league tool's
RoundRobin (round_robin.py): greedy play, each checkpoint at the decision rate it was trained with.

Seats: in game j, A plays team j % G and B every other team (on a multi-team preset B's policy plays them all),
so that neither side always plays the same team.

Each side is reported from its own point of view, by its best-placed team of each game:

    win_rate            the share of games in which the side finished first (ties share first place)
    score_ratio_mean    the side's best final score / the other side's best, mean and median over the games
    score_ratio_median  (the mean rides on blow-outs)
    rank_mean           the rank of the side's best team (1 = first)
    final_score_mean    the side's best final score

A's figures are what the evaluator reports for A against the bots, with B in the bots' place.
"""
import copy
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
from tabulate import tabulate

from ...config import ConfigError, compile_config
from ..learn.checkpoint import CheckpointError
from .round_robin import load_checkpoints, play_league

SIDES = ('A', 'B')
SIDE_FIELDS = ('games', 'win_rate', 'score_ratio_mean', 'score_ratio_median', 'rank_mean', 'final_score_mean')


def head_to_head(ckpt_a: str, ckpt_b: str, episodes: Optional[int] = None, seed: Optional[int] = None,
                 env_num: Optional[int] = None, overrides: Sequence[str] = (),
                 progress: Optional[bool] = None) -> Dict[str, Any]:
    """Play A's team against B's on A's evaluation games. Returns {'A': side report, 'B': side report (SIDE_FIELDS),
    'ckpt': {side: path}, 'preset', 'seed', 'env_num', 'games': each game's record (round_robin.RoundRobin.play)}.

    ``episodes``, ``seed``, ``env_num``: default A's config's n_evaluator_episode, seed and evaluator_env_num.
    ``overrides``: --set KEY=VALUE of the games' config (e.g. env.custom_cfg.frame_limit=200), applied over A's
    env.custom_cfg.
    Raises CheckpointError for a file that is not a loadable checkpoint, ConfigError for B of another preset or a
    bad setting."""
    (a, ), models_a = load_checkpoints([ckpt_a])
    (b, ), models_b = load_checkpoints([ckpt_b])
    if a.trained_env['preset'] != b.trained_env['preset']:
        raise ConfigError(f'--vs {ckpt_b} was trained on {b.trained_env["preset"]}, but --ckpt {ckpt_a} on '
                          f'{a.trained_env["preset"]}: a head to head needs two checkpoints of one preset')
    models = {'A': models_a[a.name], 'B': models_b[b.name]}
    a.name, b.name = SIDES  # the same file may play both sides
    cfg, _ = compile_config(copy.deepcopy(_stored_config(ckpt_a)))
    episodes = cfg.env.n_evaluator_episode if episodes is None else episodes
    seed = cfg.seed if seed is None else seed
    env_num = cfg.env.evaluator_env_num if env_num is None else env_num
    if episodes < 1:
        raise ConfigError(f'episodes must be >= 1; got {episodes}')
    env_num = min(env_num, episodes)
    if cfg.env.custom_cfg:  # A's games as its evaluation played them (a custom frame_limit...), then the user's
        overrides = [f'env.custom_cfg={dict(cfg.env.custom_cfg)!r}', *overrides]
    teams = _teams(a.trained_env['preset'], overrides)
    fixtures = [tuple(0 if g == j % teams else 1 for g in range(teams)) for j in range(episodes)]
    league = play_league([a, b], models, 1, seed, preset=a.trained_env['preset'], env_num=env_num,
                         overrides=overrides, progress=progress, fixtures=fixtures)
    report = {side: side_report(league.records, side) for side in SIDES}
    report.update(ckpt={'A': ckpt_a, 'B': ckpt_b}, preset=league.settings['preset'], seed=seed, env_num=env_num,
                  games=league.records)
    return report


def side_report(records: List[Dict[str, Any]], side: str) -> Dict[str, Any]:
    """One side's SIDE_FIELDS over the games' records, by its best-placed team of each game."""
    best, other = zip(*(_best_scores(r, side) for r in records))  # (games,), (games,)
    best, other = np.array(best), np.array(other)
    ranks = [min(rank for rank, who in zip(r['ranks'], r['participants']) if who == side) for r in records]
    ratio = best / np.maximum(other, 1e-9)
    return dict(games=len(records), win_rate=float(np.mean(np.array(ranks) == 1)),
                score_ratio_mean=float(ratio.mean()), score_ratio_median=float(np.median(ratio)),
                rank_mean=float(np.mean(ranks)), final_score_mean=float(best.mean()))


def format_head_to_head(report: Dict[str, Any]) -> str:
    """The two sides as a table, one column per side."""
    rows = [('checkpoint', report['ckpt']['A'], report['ckpt']['B'])]
    rows += [(k, *(f'{report[s][k]:.4g}' if isinstance(report[s][k], float) else report[s][k] for s in SIDES))
             for k in SIDE_FIELDS]
    title = f'head to head on {report["preset"]}, evaluation seed {report["seed"]} (held-out games)'
    return title + '\n' + tabulate(rows, headers=('', 'A (--ckpt)', 'B (--vs)'), tablefmt='simple')


def _best_scores(record: Dict[str, Any], side: str) -> Tuple[float, float]:
    """(the side's best final score, the other side's best) in one game."""
    mine = [s for s, who in zip(record['final_scores'], record['participants']) if who == side]
    theirs = [s for s, who in zip(record['final_scores'], record['participants']) if who != side]
    return max(mine), max(theirs)


def _stored_config(path: str) -> Dict:
    from ..learn.checkpoint import load_checkpoint
    config = load_checkpoint(path).get('config')
    if not isinstance(config, dict):
        raise CheckpointError(f'checkpoint {path} holds no config')
    return config


def _teams(preset: str, overrides: Sequence[str]) -> int:
    from ...config import apply_overrides
    from ...envs.game import team_num
    cfg, _ = compile_config(apply_overrides({'env': {'preset': preset}}, list(overrides)))
    if cfg.env.preset != preset:
        raise ConfigError(f'env.preset cannot be set for a head to head: both checkpoints play {preset}, the preset '
                          f'they were trained on; got {cfg.env.preset!r}')
    return team_num(cfg.env)
