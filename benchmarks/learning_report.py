"""The tables and curves of a benchmarks/learning.py results file:
`python benchmarks/learning_report.py benchmarks/results/learning_<tag>.json [--plot]` reprints its tables and, with
--plot, redraws its curves beside it (learning_<tag>.png: win rate and score ratio against env steps and training
wall time).
"""
import argparse
import json
import os
from typing import Dict, List, Tuple

from ppo_gobigger.quiet import silence_third_party_noise

silence_third_party_noise()  # first: the imports below would print other packages' import-time notices

import numpy as np
from matplotlib.figure import Figure
from tabulate import tabulate

from learning_rows import run_rows
from ppo_gobigger.envs.teams import EAT_COUNTS
from ppo_gobigger.pipeline.monitor.learning_curve import (GRID_COLOURS, GRID_COLUMNS, GRID_ROWS, curve_grid,
                                                          finish_curve_grid, save_figure_atomically)

REFERENCE_STYLES = (':', '-.', '--', (0, (5, 1, 1, 1, 1, 1)))  # one line style per reference row, in turn


def plot(result: Dict, path: str) -> None:
    """2 x 2 panels: win rate and score ratio (rows) against env steps and training wall time (columns); each run's
    curve, its final row as a star, and each reference row as a grey line."""
    s = result['settings']
    fig = Figure(figsize=(11, 7), layout='constrained')
    axes = curve_grid(fig)
    for col, (x_key, _) in enumerate(GRID_COLUMNS):
        for row, (field, _) in enumerate(GRID_ROWS):
            ax = axes[row, col]
            for k, (run_tag, run) in enumerate(result['runs'].items()):
                points, colour = run.get('curve', []), GRID_COLOURS[k % len(GRID_COLOURS)]
                if not points:
                    continue
                x = [p[x_key] for p in points]
                ax.plot(x, [p[field] for p in points], marker='o', markersize=3, color=colour,
                        label=f'{run_tag} ({points[-1]["games"]} games each)')
                if 'final' in run:
                    ax.plot([x[-1]], [run['final'][field]], marker='*', markersize=12, color=colour,
                            linestyle='none', label=f'{run_tag} final, {run["final"]["games"]} new games')
            for k, (name, ref) in enumerate(result.get('references', {}).items()):
                ax.axhline(ref[field], color='grey', linestyle=REFERENCE_STYLES[k % len(REFERENCE_STYLES)],
                           linewidth=1, label=name)
    finish_curve_grid(axes)
    axes[0, 0].legend(fontsize=7, loc='upper left')
    fig.suptitle(f'{s["preset"]} vs {s["opponents"]}: {s.get("tag", "")}', fontsize=11)
    save_figure_atomically(fig, path)


def final_rows(result: Dict) -> List[Tuple[str, Dict]]:
    """(name, final row) of every final row of a results file: the runs', the --checkpoint agents', the
    references'."""
    rows = [(name, r) for run_tag, run in result.get('runs', {}).items() if 'final' in run
            for name, _, r in run_rows(run_tag, run)]
    for name, r in result.get('checkpoints', {}).items():
        rows.append((f'{name} ({os.path.basename(r["checkpoint"])})', r))
        rows += [(f'{name} {vs}', row) for vs, row in r.get('final_vs', {}).items()]
    rows += [(f'{name} (reference)', r) for name, r in result.get('references', {}).items()]
    return rows


def print_curves(result: Dict) -> None:
    for run_tag, run in ((t, r) for t, r in result.get('runs', {}).items() if r.get('curve')):
        print(f'\n{run_tag} (seed {run["seed"]}):')
        print(tabulate([(p['env_steps'], f'{p["wall_time_s"]:.0f}', p['games'], f'{p["win_rate"]:.2f}',
                         f'{p["score_ratio_mean"]:.3f}', f'{p["rank_mean"]:.2f}',
                         f'{p["reward_mean"]:.2f} ± {p["reward_std"]:.2f}') for p in run['curve']],
                       headers=('env steps', 'train s', 'games', 'win rate', 'score ratio', 'rank', 'reward')))


def print_eats(rows: List[Tuple[str, Dict]]) -> None:
    """What our side ate per game in each (name, final row), the mean over its games (rows played before the env
    counted them are left out)."""
    rows = [(name, r) for name, r in rows
            if r.get('game_outcomes') and EAT_COUNTS.keys() <= r['game_outcomes'][0].keys()]
    if rows:
        print('\nwhat our side ate per game (the mean over the final games; `eaten`: its balls eaten by anyone):')
        print(tabulate([(name, *(f'{np.mean([g[k] for g in r["game_outcomes"]]):.1f}' for k in EAT_COUNTS))
                        for name, r in rows], headers=('our side', *EAT_COUNTS)))


def format_paired(name: str, baseline: str, p: Dict) -> str:
    """One line of paired_comparison's figures."""
    low, high = p['score_ratio_difference_90']
    return (f'{name} against {baseline}, game by game on the same {p["games"]} games: higher score ratio in '
            f'{p["higher_score_ratio"]}, won {p["won_where_baseline_lost"]} that {baseline} lost and lost '
            f'{p["lost_where_baseline_won"]} that it won; score ratio difference mean '
            f'{p["score_ratio_difference_mean"]:+.3f} (90% bootstrap interval {low:+.3f} to {high:+.3f})')


def median(r: Dict) -> str:
    """A row's median score ratio (rows played before final rows kept it: from its games, or '-')."""
    if 'score_ratio_median' in r:
        return f'{r["score_ratio_median"]:.3f}'
    return f'{np.median([g["score_ratio"] for g in r["game_outcomes"]]):.3f}' if r.get('game_outcomes') else '-'


def print_tables(result: Dict) -> None:
    """The curves of the runs, the final rows (with the median score ratio), what each side ate, the paired
    comparisons and the summaries over the runs."""
    print_curves(result)
    s = result['settings']
    print(f'\nfinal: {s["final_games"]} games on held-out seeds (env seed {s["final_seed"]}), {s["preset"]} vs '
          f'{s["opponents"]} unless a row says otherwise, {"greedy" if s.get("greedy", True) else "sampled"} actions')
    rows = final_rows(result)
    print(tabulate([(name, f'{r["win_rate"]:.2f}', f'{r["score_ratio_mean"]:.3f}', median(r), f'{r["rank_mean"]:.2f}',
                     f'{r["final_score_mean"]:.0f}', f'{r["opponent_score_mean"]:.0f}') for name, r in rows],
                   headers=('our side', 'win rate', 'score ratio', 'median', 'rank', 'our score', 'best other'),
                   disable_numparse=True))
    print_eats(rows)
    for name, r in result.get('checkpoints', {}).items():
        if 'against_first' in r:
            print(format_paired(name, r['against_first']['checkpoint'], r['against_first']))
    finished = sum('final' in run for run in result.get('runs', {}).values())
    for key, m in ((k, v) for k, v in result.items() if k.startswith('summary')):
        medians = f', median score ratio {m["mean_score_ratio_median"]:.3f} (min {m["min_score_ratio_median"]:.3f})' \
            if 'mean_score_ratio_median' in m else ''
        print(f'{key} over {finished} runs, the mean (min) of each run\'s row: win rate {m["mean_win_rate"]:.2f} '
              f'({m["min_win_rate"]:.2f}), score ratio {m["mean_score_ratio_mean"]:.3f} '
              f'({m["min_score_ratio_mean"]:.3f}){medians}, rank {m["mean_rank_mean"]:.2f}')


def main(argv: List[str] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('results', help='a results file written by benchmarks/learning.py (learning_<tag>.json)')
    parser.add_argument('--plot', action='store_true', help='redraw its curves as the .png beside it')
    args = parser.parse_args(argv)
    if not os.path.isfile(args.results):
        parser.error(f'no results file {args.results}')
    with open(args.results) as f:
        result = json.load(f)
    if 'settings' not in result or not ({'runs', 'checkpoints'} & result.keys()):
        parser.error(f'{args.results} is not a benchmarks/learning.py results file: it has no settings and no runs')
    print_tables(result)
    if args.plot:
        if not any(run.get('curve') for run in result.get('runs', {}).values()):
            parser.error(f'{args.results} has no run with a curve to draw')
        path = os.path.splitext(args.results)[0] + '.png'
        plot(result, path)
        print(f'wrote {path}')


if __name__ == '__main__':
    main()
