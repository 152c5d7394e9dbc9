"""The learning curve: the evaluator's win rate, score ratio and reward against training env steps, as a PNG.

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
    ('reward_mean', 'reward_mean ± reward_std (score gained / env.reward_scale)', None),
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


def save_figure_atomically(fig: Figure, path: str) -> None:
    """A viewer refreshing the file never reads half a PNG."""
    with replaced_atomically(path) as tmp:
        fig.savefig(tmp, dpi=100)  # the format from tmp's extension, which is path's
