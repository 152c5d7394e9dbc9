"""Target 2's recipe as one curve per run seed: `python benchmarks/past_teacher_curve.py [--prefix TAG]`.

Draws benchmarks/results/past_teacher_<prefix>.png from the five results files that benchmarks/past_teacher.py's
steps write (learning_<tag>.json): the 8-game in-training evaluations of each phase, placed where that phase starts
in the lineage (self-play from its kickstart; the falling-weight phase and the level-2 phase both from the self-play
agent; the longer level-2 phase from the first one), against env steps and against training wall time (evaluations
excluded); then the average's 100 final games against the level-3 and the level-2 bots at the lineage's whole
training cost, and each seed's kickstart alone on the same games. Nothing is trained or played.
"""
import argparse
import json
import os
from typing import Dict, List, NamedTuple, Optional

from matplotlib.figure import Figure
from matplotlib.lines import Line2D

import learning  # benchmarks/learning.py: where each tag's results are and what its runs are named
from past_teacher import PRESET, PUBLISHED_PREFIX, SEEDS, prefix_problem, recipe
from ppo_gobigger.pipeline.monitor.learning_curve import (GRID_COLOURS, GRID_COLUMNS, GRID_ROWS, curve_grid,
                                                          finish_curve_grid, save_figure_atomically)

WIN_RATE_BARS = {'level-3 bots': 0.95, 'level-2 bots': 0.8}  # target 2's win-rate bars


class Segment(NamedTuple):
    phase: str
    opponents: str  # who the in-training evaluations played
    env_steps: List[float]  # in the lineage: the phase's own env steps plus where it starts
    wall_time_s: List[float]
    win_rate: List[float]
    score_ratio_mean: List[float]


class Lineage(NamedTuple):
    run: int
    segments: List[Segment]
    env_steps: float  # all the training behind the average: self-play and both phases
    wall_time_s: float
    final: Optional[Dict]  # the average's final rows: 'level-3 bots' / 'level-2 bots' -> row
    kickstart: Optional[Dict]  # the kickstart alone on the same games against the level-3 bots


def load_run(tag: str, run: int) -> Optional[Dict]:
    """The run of seed `run` in learning_<tag>.json, or None where that step has not run."""
    path = learning.results_path(tag)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)['runs'].get(learning.run_name(tag, run, several=True))


def segment(phase: str, opponents: str, run: Dict, start_steps: float, start_wall: float) -> Segment:
    curve = run['curve']
    return Segment(phase, opponents, [start_steps + p['env_steps'] for p in curve],
                   [start_wall + p['wall_time_s'] for p in curve], [p['win_rate'] for p in curve],
                   [p['score_ratio_mean'] for p in curve])


def lineage(run: int, prefix: str = PUBLISHED_PREFIX) -> Optional[Lineage]:
    """Run seed `run`'s phases placed end to end, as far as they have run (None before self-play's first point)."""
    selfplay, fall, level2, level2_long, average = (load_run(step.tag, run) for step in recipe(run, prefix))
    if not selfplay or not selfplay['curve']:
        return None
    segments = [segment('self-play', 'level-3 bots', selfplay, 0, 0)]
    end_steps, end_wall = segments[0].env_steps[-1], segments[0].wall_time_s[-1]
    if fall and fall['curve']:
        segments.append(segment('the falling-weight phase', 'level-3 bots', fall, end_steps, end_wall))
    start_steps, start_wall = end_steps, end_wall
    for phase in (level2, level2_long):  # the longer phase goes on from the first one's end
        if phase and phase['curve']:
            segments.append(segment('the level-2 phase', 'level-2 bots', phase, start_steps, start_wall))
            start_steps, start_wall = segments[-1].env_steps[-1], segments[-1].wall_time_s[-1]
    trained = [phase['curve'][-1] for phase in (selfplay, fall, level2, level2_long) if phase and phase['curve']]
    steps, wall = sum(p['env_steps'] for p in trained), sum(p['wall_time_s'] for p in trained)
    final = kickstart = None
    if average and 'final' in average:
        final = {'level-3 bots': average['final']}
        final.update((name[len('vs '):], row) for name, row in average.get('final_vs', {}).items())  # 'vs level-2 bots'
        kickstart = average.get('kickstart')
    return Lineage(run, segments, steps, wall, final, kickstart)


def plot(lineages: List[Lineage], title: str, path: str) -> None:
    """2 x 2 panels: win rate and score ratio (rows) against env steps and training wall time (columns)."""
    fig = Figure(figsize=(12, 7.5), layout='constrained')
    axes = curve_grid(fig)
    styles = {'self-play': '-', 'the falling-weight phase': '--', 'the level-2 phase': ':'}
    final_markers = {'level-3 bots': '*', 'level-2 bots': 'D'}
    for col, (x_key, _) in enumerate(GRID_COLUMNS):
        for row, (field, _) in enumerate(GRID_ROWS):
            ax = axes[row, col]
            for item in lineages:
                colour = GRID_COLOURS[item.run % len(GRID_COLOURS)]
                for seg in item.segments:
                    ax.plot(getattr(seg, x_key), getattr(seg, field), linestyle=styles[seg.phase], marker='o',
                            markersize=2.5, color=colour)
                end = getattr(item, x_key)
                for opponents, final_row in (item.final or {}).items():
                    ax.plot([end], [final_row[field]], marker=final_markers.get(opponents, 'X'), markersize=10,
                            color=colour, markeredgecolor='black', linestyle='none')
                if item.kickstart:
                    ax.plot([0], [item.kickstart[field]], marker='P', markersize=9, color=colour,
                            markeredgecolor='black', linestyle='none')
            if field == 'win_rate':
                for opponents, bar in WIN_RATE_BARS.items():
                    ax.axhline(bar, color='grey', linewidth=1, linestyle='--' if '3' in opponents else ':')
    finish_curve_grid(axes)
    handles = [Line2D([], [], color=GRID_COLOURS[item.run % len(GRID_COLOURS)], label=f'run seed {item.run}')
               for item in lineages]
    handles += [Line2D([], [], color='black', linestyle='-', label='self-play, 8 games vs level-3 bots'),
                Line2D([], [], color='black', linestyle='--', label='falling-weight phase, 8 games vs level-3 bots'),
                Line2D([], [], color='black', linestyle=':', label='level-2 phase, 8 games vs level-2 bots'),
                Line2D([], [], color='grey', marker='*', markersize=10, linestyle='none',
                       label='the average, 100 final games vs level-3 bots'),
                Line2D([], [], color='grey', marker='D', markersize=7, linestyle='none',
                       label='the average, 100 final games vs level-2 bots'),
                Line2D([], [], color='grey', marker='P', markersize=8, linestyle='none',
                       label='its kickstart alone, the same games vs level-3 bots'),
                Line2D([], [], color='grey', linestyle='--', linewidth=1, label='bar vs level-3 bots (0.95)'),
                Line2D([], [], color='grey', linestyle=':', linewidth=1, label='bar vs level-2 bots (0.8)')]
    fig.legend(handles=handles, loc='outside right center', fontsize=8)
    fig.suptitle(title, fontsize=11)
    save_figure_atomically(fig, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--prefix', default=PUBLISHED_PREFIX,
                        help=f'the tags\' prefix, as given to benchmarks/past_teacher.py (default: {PUBLISHED_PREFIX})')
    parser.add_argument('--out', help='the PNG to write (default: benchmarks/results/past_teacher_<prefix>.png)')
    args = parser.parse_args()
    if prefix_problem(args.prefix):
        parser.error(prefix_problem(args.prefix))
    lineages = [item for item in (lineage(run, args.prefix) for run in range(SEEDS)) if item]
    if not lineages:
        parser.error(f'no run of {args.prefix} has evaluations yet (benchmarks/results/learning_{args.prefix}.json)')
    path = args.out or os.path.join(learning.RESULTS, f'past_teacher_{args.prefix}.png')
    plot(lineages, f'{PRESET}, target 2\'s recipe ({args.prefix}): each phase from where it starts', path)
    for item in lineages:
        final = ', '.join(f'{row["win_rate"]:.2f} / {row["score_ratio_mean"]:.3f} vs {opponents}'
                          for opponents, row in (item.final or {}).items()) or 'no final rows yet'
        print(f'run seed {item.run}: {item.env_steps:,.0f} env steps, {item.wall_time_s:,.0f} s of training; '
              f'the average: {final}')
    print(f'wrote {path}')


if __name__ == '__main__':
    main()
