"""The learning curve: the evaluator's win rate, score ratio and reward against training env steps, as a PNG; and the
benchmarks' 2 x 2 grid (win rate and score ratio against env steps and wall time) that several runs are drawn on.

Drawn with matplotlib's object API on an Agg canvas (no pyplot, no display, no global backend switch).
"""
from typing import Any, Mapping, Optional, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter

from ...files import replaced_atomically

# (report field, panel title, y limits or None); reward_mean is drawn with its ± reward_std band
PANELS = (
    ('win_rate', 'win rate (share of games our team finished first)', (-0.05, 1.05)),
    ('score_ratio_mean', 'score ratio (our final score / best other team\'s; dashed: equal scores)', None),
    ('reward_mean', 'reward_mean ± reward_std (the training reward per game)', None),
)


def plot_learning_curve(
        reports: Sequence[Mapping[str, Any]], path: str, title: str = '', x_max: Optional[float] = None
) -> None:
    """Write the curve of ``reports`` (evaluator reports, any order) to ``path``, replacing it atomically.
    ``x_max``: the run's max_env_step, so that the x axis spans the whole run while it grows."""
    reports = sorted(reports, key=lambda r: r['collector_envstep'])
    x = np.array([r['collector_envstep'] for r in reports], dtype=np.float64)
    fig = Figure(figsize=(7, 7.5), layout='constrained')
    axes = fig.subplots(len(PANELS), 1, sharex=True)
    for ax, (field, label, ylim) in zip(axes, PANELS):
        y = np.array([r[field] for r in reports], dtype=np.float64)
        ax.plot(x, y, marker='o', markersize=4, color='tab:blue')
        if field == 'reward_mean':
            std = np.array([r['reward_std'] for r in reports], dtype=np.float64)
            ax.fill_between(x, y - std, y + std, color='tab:blue', alpha=0.2, linewidth=0)
        if field == 'score_ratio_mean':
            ax.axhline(1.0, color='grey', linestyle='--', linewidth=1)  # above 1: our team outscored every other
            ax.set_ylim(bottom=0)
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.set_title(label, fontsize=10, loc='left')
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel('training env steps')
    axes[-1].xaxis.set_major_formatter(EngFormatter(sep=''))
    if reports:
        right = max(x.max(), x_max or 0) or 1000.0  # a lone first evaluation at env step 0: any scale will do
        axes[-1].set_xlim(-0.03 * right, 1.03 * right)  # markers at the ends stay whole
        games = int(reports[-1]['episode_count'])
        fig.suptitle(f'{title}{" - " if title else ""}evaluation over {games} held-out games', fontsize=11)
    save_figure_atomically(fig, path)


# the benchmarks' 2 x 2 grid of run curves: rows (curve point field, y label), columns (x key, x label)
GRID_ROWS = (('win_rate', 'win rate'), ('score_ratio_mean', 'score ratio'))
GRID_COLUMNS = (('env_steps', 'training env steps'), ('wall_time_s', 'training wall time (s, evaluations excluded)'))
GRID_COLOURS = ('tab:blue', 'tab:orange', 'tab:green', 'tab:purple', 'tab:brown')  # one per run, in turn


def curve_grid(fig: Figure) -> np.ndarray:
    """The (2, 2) axes of GRID_ROWS against GRID_COLUMNS, each row sharing its y axis."""
    return fig.subplots(len(GRID_ROWS), len(GRID_COLUMNS), sharey='row')


def finish_curve_grid(axes: np.ndarray) -> None:
    """Labels, grid lines and y limits of a drawn curve_grid (after the drawing: limits set before it would fix
    the autoscaled top)."""
    for row, (_, y_label) in enumerate(GRID_ROWS):
        for col, (x_key, x_label) in enumerate(GRID_COLUMNS):
            ax = axes[row, col]
            ax.set_xlabel(x_label)
            ax.set_ylabel(y_label)
            ax.grid(alpha=0.3)
            if x_key == 'env_steps':
                ax.xaxis.set_major_formatter(EngFormatter(sep=''))
    axes[0, 0].set_ylim(-0.05, 1.05)
    axes[1, 0].set_ylim(bottom=0)


def save_figure_atomically(fig: Figure, path: str) -> None:
    """A viewer refreshing the file never reads half a PNG."""
    with replaced_atomically(path) as tmp:
        fig.savefig(tmp, dpi=100)  # the format from tmp's extension, which is path's
