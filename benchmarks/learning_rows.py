"""The final rows of benchmarks/learning.py: greedy games on a seed block that no run trained or was evaluated on.

Training games have even game seeds, evaluation games odd ones, and the final games take env seed
``seed + FINAL_SEED_OFFSET`` (the config's seed: the same games for every run and every row). On them play each
run's last checkpoint ('final'), each --checkpoint agent, each of those against other bot levels (--vs-level), and
the reference rows: our side played by a random team, by GoBigger's level-1, level-2 and level-3 bots and by our
scripted players' two variants (env.stand_in; envs/scripted.py) against the same opponents. Every row keeps each game's
outcome by game seed, so that two rows compare game by game, and the median score ratio beside the mean (the mean
rides on blow-outs).
"""
import logging
import os
from typing import Callable, Dict, List, Optional

import numpy as np

import learning_runs as runs
from ppo_gobigger.config import apply_overrides
from ppo_gobigger.pipeline.evaluate import evaluate
from ppo_gobigger.pipeline.learn.checkpoint import export_weights, load_checkpoint

FINAL_SEED_OFFSET = 1000  # final games: env seed = the config's seed + this
BOOTSTRAP_SAMPLES = 10_000  # resamples of the paired final games behind paired_comparison's interval
SUMMARY_FIELDS = ('win_rate', 'score_ratio_mean', 'score_ratio_median', 'rank_mean')
REFERENCES = {  # name -> env overrides: who plays our team's side instead of the policy
    'random team': ['env.stand_in=random'],
    'level-1 bots': ['env.stand_in=bot', 'env.stand_in_bot_level=1'],
    'level-2 bots': ['env.stand_in=bot', 'env.stand_in_bot_level=2'],
    'level-3 bots': ['env.stand_in=bot', 'env.stand_in_bot_level=3'],
    'scripted players (hunter)': ['env.stand_in=scripted', 'env.scripted_variant=hunter'],
    'scripted players (holdout)': ['env.stand_in=scripted', 'env.scripted_variant=holdout'],
}


def final_row(report: Dict) -> Dict:
    """A final row from an evaluate() report: the figures, the median score ratio, and each game's outcome by game
    seed (for paired_comparison)."""
    return dict(games=report['episode_count'], **{k: report[k] for k in runs.CURVE_FIELDS},
                score_ratio_median=float(np.median([g['score_ratio'] for g in report['games']])),
                game_outcomes=report['games'])


def play(path: str, final_games: int, final_seed: int, overrides: Optional[List[str]] = None,
         main_config: Optional[Dict] = None) -> Dict:
    """The final row of checkpoint ``path`` (its own config, or ``main_config``; then ``overrides``)."""
    return final_row(evaluate(path, main_config=main_config, episodes=final_games, seed=final_seed,
                              overrides=overrides or None))


def paired_comparison(row: Dict, baseline: Dict) -> Optional[Dict]:
    """``row`` against ``baseline`` game by game on the same games (matched by game seed): in how many its score
    ratio is higher, the games it won that the baseline lost and the other way round, and the mean of the score
    ratio differences with a 90% bootstrap interval (the games resampled with replacement, pairs kept together).
    None when a row has no per-game outcomes."""
    if 'game_outcomes' not in row or 'game_outcomes' not in baseline:
        return None
    ours = {game['game_seed']: game for game in row['game_outcomes']}
    theirs = {game['game_seed']: game for game in baseline['game_outcomes']}
    if ours.keys() != theirs.keys():
        raise ValueError(f'the rows played different games: {len(ours.keys() - theirs.keys())} of {len(ours)} game '
                         f'seeds are not in the baseline\'s {len(theirs)}')
    seeds = sorted(ours)
    diff = np.array([ours[seed]['score_ratio'] - theirs[seed]['score_ratio'] for seed in seeds])  # (games,)
    picks = np.random.default_rng(0).integers(0, len(diff), size=(BOOTSTRAP_SAMPLES, len(diff)))
    resampled_means = diff[picks].mean(axis=1)  # (BOOTSTRAP_SAMPLES,)
    low, high = np.quantile(resampled_means, [0.05, 0.95])
    return dict(games=len(seeds), higher_score_ratio=int((diff > 0).sum()),
                won_where_baseline_lost=sum(ours[seed]['win'] and not theirs[seed]['win'] for seed in seeds),
                lost_where_baseline_won=sum(theirs[seed]['win'] and not ours[seed]['win'] for seed in seeds),
                score_ratio_difference_mean=float(diff.mean()), score_ratio_difference_90=[float(low), float(high)])


def vs_level(level: int) -> str:
    """A row's key for its final games against level-``level`` bots (--vs-level)."""
    return f'vs level-{level} bots'


def log_row(name: str, row: Dict) -> None:
    logging.info(f'{name}: win rate {row["win_rate"]:.2f}, score ratio {row["score_ratio_mean"]:.3f} (median '
                 f'{row["score_ratio_median"]:.3f}), rank {row["rank_mean"]:.2f} over {row["games"]} final games')


def publish(run_tag: str, run: Dict) -> None:
    """A trained run's last weights and config as PUBLISHED/<run tag>.pth.tar (run['published'], relative to
    HERE): what its final games play. Written once; on a clone that lacks it (PUBLISHED is not committed), written
    again from the run's kept state where there is one (a run stopped in its final games), whose latest checkpoint
    is the run's last."""
    published = os.path.join(runs.PUBLISHED, f'{run_tag}.pth.tar')
    if 'published' not in run:
        export_weights(run['checkpoint'], published)
        run['published'] = os.path.relpath(published, runs.HERE)
        run['checkpoint'] = os.path.relpath(run['checkpoint'], runs.HERE)
    kept = os.path.join(runs.RUN_STATE, run_tag, runs.LATEST)
    if not os.path.isfile(published) and os.path.isfile(kept):
        export_weights(kept, published)


def play_final_games(run_tag: str, run: Dict, final_games: int, final_seed: int, levels: List[int],
                     save: Callable[[], None]) -> None:
    """The final rows of a trained run that it lacks: its last checkpoint ('final') and its last checkpoint against
    each of ``levels`` ('final_vs'). ``save`` is
    called after each row: a long evaluation stopped half way loses only its own row; --resume plays the rest."""
    published = os.path.join(runs.HERE, run['published'])
    if 'final' not in run:
        run['final'] = play(published, final_games, final_seed)
        log_row(f'run {run_tag}', run['final'])
        save()
    for level in levels:
        if vs_level(level) not in run.setdefault('final_vs', {}):
            run['final_vs'][vs_level(level)] = play(published, final_games, final_seed, [f'env.bot_level={level}'])
            log_row(f'run {run_tag} against level-{level} bots', run['final_vs'][vs_level(level)])
            save()


def checkpoint_config(path: str, overrides: List[str]) -> Dict:
    """The config an existing agent plays its final games with: its own, with the command's --set ``overrides``."""
    return apply_overrides(load_checkpoint(path)['config'], overrides)


def play_checkpoints(rows: Dict[str, Dict], agents: Dict[str, str], overrides: List[str], final_games: int,
                     final_seed: int, levels: List[int], save: Callable[[], None]) -> None:
    """--checkpoint NAME=PATH: each agent (``agents``: name -> path) with its own config and ``overrides`` on the
    final games, and against each of ``levels``; ``rows`` gets the rows it lacks (a row of another path is played
    again), each after the first compared game by game with the first ('against_first')."""
    for name, path in agents.items():
        row = rows.get(name)
        if row is None or row['checkpoint'] != path or row['games'] != final_games:
            config = checkpoint_config(path, overrides)
            rows[name] = row = dict(checkpoint=path, preset=config['env']['preset'],
                                    **play(path, final_games, final_seed, main_config=config))
            log_row(name, row)
            save()
        for level in levels:
            if vs_level(level) not in row.setdefault('final_vs', {}):
                row['final_vs'][vs_level(level)] = play(path, final_games, final_seed, [f'env.bot_level={level}'],
                                                        main_config=checkpoint_config(path, overrides))
                log_row(f'{name} against level-{level} bots', row['final_vs'][vs_level(level)])
                save()
    first, *others = agents
    for name in others:
        rows[name]['against_first'] = dict(checkpoint=first, **paired_comparison(rows[name], rows[first]))


def play_references(references: Dict[str, Dict], agent: str, config: Dict, final_games: int, final_seed: int,
                    save: Callable[[], None]) -> None:
    """The reference rows ``references`` lacks, on the final games of ``agent`` with ``config`` (played once per
    results file: the stand-ins do not depend on the agent's weights)."""
    for name, overrides in REFERENCES.items():
        if name not in references:
            references[name] = play(agent, final_games, final_seed, overrides, main_config=config)
            log_row(f'{name} (reference)', references[name])
            save()


def summary(rows: List[Dict]) -> Dict:
    """Mean, min and max over the runs of each SUMMARY_FIELDS figure (rows without a median: left out of it)."""
    return {f'{stat}_{field}': float(fn([r[field] for r in rows]))
            for field in SUMMARY_FIELDS if all(field in r for r in rows)
            for stat, fn in (('mean', np.mean), ('min', np.min), ('max', np.max))}


def run_rows(run_tag: str, run: Dict) -> List[tuple]:
    """(name, summary key, final row) of each final row a run has: its last checkpoint, and its last checkpoint
    against other bot levels."""
    rows = [(f'{run_tag} (seed {run["seed"]}, {run["env_steps"]} env steps)', 'summary', run['final'])]
    rows += [(f'{run_tag} {name}', f'summary_{name.replace(" ", "_").replace("-", "")}', row)
             for name, row in run.get('final_vs', {}).items()]
    return rows


def opponents_of(cfg: Dict) -> str:
    """What the final games of a run with config ``cfg`` play: bots, also for self-play and league runs (their
    evaluator envs play 'bot'); 'random' and 'scripted' runs are evaluated against their own kind."""
    env = cfg['env']
    if env['opponent'] == 'scripted':
        return f'scripted {env.get("scripted_variant", "hunter")}'
    return 'random' if env['opponent'] == 'random' else f'bot level {env["bot_level"]}'
