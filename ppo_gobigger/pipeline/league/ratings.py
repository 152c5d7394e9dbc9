"""TrueSkill ratings of a played round robin (round_robin.py), and the files the league tool writes.

Each game is one TrueSkill match of G one-player teams ranked by the game's placings (ties share a rank), rated in
fixture order, so that the ratings follow from the records alone (and from the seed that made them), not from which
env finished first. TrueSkill (the ``trueskill`` package) with its defaults, mu 25 and sigma 25/3, and no draws
expected (GoBigger's final scores practically never tie; a tie that does happen widens both sigmas).

A rating is mu (the skill estimate) and sigma (its uncertainty); the table is sorted by the conservative rating
mu - 3 sigma, which a participant's true skill exceeds with ~99% probability: few games mean a low one.
"""
import csv
import os
from dataclasses import asdict
from typing import Any, Dict, List, Sequence

import numpy as np
import trueskill
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter
from tabulate import tabulate

from ...files import replaced_atomically, write_json
from .round_robin import League, Participant

TABLE_FIELDS = ('name', 'kind', 'mu', 'sigma', 'conservative', 'games', 'wins', 'mean_rank', 'envstep', 'run')
FILES = ('league.json', 'league.csv', 'league.png')


def trueskill_env() -> trueskill.TrueSkill:
    """The rating environment: TrueSkill's defaults (mu 25, sigma 25/3, beta 25/6, tau 25/300), no draws."""
    return trueskill.TrueSkill(draw_probability=0.0)


def rate(records: Sequence[Dict[str, Any]], names: Sequence[str]) -> Dict[str, trueskill.Rating]:
    """{name: rating} after the games of ``records`` (in fixture order) from the default rating of ``names``."""
    env = trueskill_env()
    ratings = {name: env.create_rating() for name in names}
    for record in sorted(records, key=lambda r: r['fixture']):
        players = record['participants']
        groups = env.rate([(ratings[name], ) for name in players], ranks=record['ranks'])
        for name, (rating, ) in zip(players, groups):
            ratings[name] = rating
    return ratings


def rating_table(participants: Sequence[Participant], records: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """One row per participant (TABLE_FIELDS), best conservative rating first. wins: games placed first;
    envstep: a checkpoint's training env steps (None for the bots and random); run: the run folder it came from
    (None for a checkpoint given alone, the bots and random)."""
    ratings = rate(records, [p.name for p in participants])
    rows = []
    for p in participants:
        ranks = [rank for r in records for name, rank in zip(r['participants'], r['ranks']) if name == p.name]
        rating = ratings[p.name]
        rows.append(dict(
            name=p.name,
            kind=p.kind,
            mu=rating.mu,
            sigma=rating.sigma,
            conservative=rating.mu - 3 * rating.sigma,
            games=len(ranks),
            wins=sum(rank == 1 for rank in ranks),
            mean_rank=float(np.mean(ranks)) if ranks else None,
            envstep=p.envstep,
            run=p.run,
        ))
    assert all(tuple(row) == TABLE_FIELDS for row in rows)
    return sorted(rows, key=lambda row: (-row['conservative'], row['name']))


def format_table(table: Sequence[Dict[str, Any]]) -> str:
    """The table for the console, numbers rounded for reading."""
    rows = [[f'{v:.4g}' if isinstance(v, float) else ('' if v is None else v) for v in row.values()] for row in table]
    return tabulate(rows, headers=TABLE_FIELDS, tablefmt='simple')


def write_league(folder: str, league: League, table: Sequence[Dict[str, Any]]) -> List[str]:
    """Write FILES to ``folder``, each whole or not at all: league.json (the settings, the participants, the table and
    every game's record), league.csv (the table) and league.png (ratings against training env steps). Returns their
    paths."""
    os.makedirs(folder, exist_ok=True)
    paths = [os.path.join(folder, name) for name in FILES]
    write_json(paths[0], dict(settings=league.settings, participants=[asdict(p) for p in league.participants],
                              table=list(table), games=league.records), indent=1)
    with replaced_atomically(paths[1]) as tmp, open(tmp, 'w', newline='') as f:
        writer = csv.DictWriter(f, fieldnames=TABLE_FIELDS)
        writer.writeheader()
        writer.writerows(table)
    plot_ratings(table, paths[2], title=f'{league.settings["preset"]}, {len(league.records)} games')
    return paths


def checkpoint_runs(table: Sequence[Dict[str, Any]]) -> Dict[str, List[Dict[str, Any]]]:
    """{run: its checkpoints' rows by env steps}, runs in table order: a run folder's checkpoints together; a
    checkpoint given alone is a run of one, named by itself. The bots and random are in none."""
    runs: Dict[str, List[Dict[str, Any]]] = {}
    for row in table:
        if row['envstep'] is not None:
            runs.setdefault(row['run'] or row['name'], []).append(row)
    return {run: sorted(rows, key=lambda r: r['envstep']) for run, rows in runs.items()}


def plot_ratings(table: Sequence[Dict[str, Any]], path: str, title: str = '') -> None:
    """Conservative rating and mu ± sigma against training env steps: one line per run folder (its checkpoints by
    env steps), one labelled point per checkpoint given alone (another run's: never joined to a line), and the bots
    and random as labelled horizontal lines at their conservative rating. Written atomically: a league that stops
    while it draws leaves the previous figure, never half of one."""
    runs = checkpoint_runs(table)
    fig = Figure(figsize=(9, 6), layout='constrained')
    ax = fig.subplots()
    line_colors = iter(['tab:blue', 'tab:cyan', 'tab:olive', 'tab:pink', 'navy', 'teal', 'darkkhaki', 'crimson'])
    for label, rows in runs.items():
        color = next(line_colors, 'black')
        alone = len(rows) == 1
        x = np.array([r['envstep'] for r in rows], dtype=np.float64)
        mu = np.array([r['mu'] for r in rows])
        sigma = np.array([r['sigma'] for r in rows])
        ax.errorbar(x, mu, yerr=sigma, color=color, alpha=0.5, linestyle='none' if alone else ':', marker='s',
                    markersize=3, capsize=3)
        ax.plot(x, mu - 3 * sigma, marker='D' if alone else 'o', markersize=5, color=color,
                linestyle='none' if alone else '-',
                label=f'{label}: {rows[0]["conservative"]:.1f} (mu {rows[0]["mu"]:.1f} ± {rows[0]["sigma"]:.1f})'
                if alone else f'{_short(label)}: conservative, mu ± sigma dotted')
    if runs:
        right = max(rows[-1]['envstep'] for rows in runs.values()) or 1000.0  # all at env step 0: any scale will do
        ax.set_xlim(-0.03 * right, 1.03 * right)
    colors = iter(['tab:red', 'tab:orange', 'tab:green', 'tab:gray', 'tab:purple', 'tab:brown'])
    for row in (r for r in table if r['envstep'] is None):
        ax.axhline(row['conservative'], color=next(colors, 'black'), linestyle='--', linewidth=1,
                   label=f'{row["name"]}: {row["conservative"]:.1f} (mu {row["mu"]:.1f} ± {row["sigma"]:.1f})')
    ax.set_xlabel('training env steps')
    ax.xaxis.set_major_formatter(EngFormatter(sep=''))
    ax.set_ylabel('TrueSkill rating')
    ax.grid(alpha=0.3)
    fig.legend(fontsize=8, loc='outside lower center', ncols=2)  # below the axes: never over a point
    ax.set_title(f'League ratings{" - " + title if title else ""}', fontsize=11, loc='left')
    with replaced_atomically(path) as tmp:
        fig.savefig(tmp, dpi=100)


def _short(run: str) -> str:
    """A run folder as a legend names it: its last part, or the last two for a run's ckpt/ or league/ folder."""
    parts = os.path.normpath(run).split(os.sep)
    return os.path.join(*parts[-2:]) if parts[-1] in ('ckpt', 'league') and len(parts) > 1 else parts[-1]
