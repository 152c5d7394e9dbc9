"""What a user sees of a run: TensorBoard scalars, the evaluator CSV, the learning-curve PNG, the progress bar."""
import csv
import io
import logging
import sys
import threading
import time

import cv2
import pytest
from matplotlib.figure import Figure
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboardX import SummaryWriter

from ppo_gobigger.pipeline.monitor import training
from ppo_gobigger.pipeline.monitor.learning_curve import GRID_COLUMNS, GRID_ROWS, curve_grid, finish_curve_grid
from ppo_gobigger.pipeline.monitor.training import CSV_NAME, CURVE_NAME, TENSORBOARD_DIR, TrainingMonitor
from ppo_gobigger.pipeline.play.evaluator import REPORT_FIELDS

LOSSES = ('policy_loss', 'value_loss', 'entropy', 'approx_kl', 'clipfrac', 'explained_variance', 'grad_norm')


def make_report(envstep, win_rate, reward_mean):
    report = {field: 1.0 for field in REPORT_FIELDS}
    report.update(
        train_iter=envstep // 64, ckpt_name=f'iteration_{envstep // 64}.pth.tar', episode_count=4,
        win_rate=win_rate, reward_mean=reward_mean, reward_std=2.0, score_ratio_mean=0.1 + win_rate,
        collector_envstep=envstep
    )
    assert tuple(report) == REPORT_FIELDS
    return report


def make_stats(k):
    stats = {name: 0.1 * k for name in LOSSES}
    stats.update(cur_lr=3e-4, update_count=8, total_loss=1.0)
    return stats


def game(ret, win):
    return {'eval_episode_return': ret, 'win': win, 'score_ratio': 0.5, 'rank': 1 if win else 2}


def run_monitor(exp_dir, progress):
    """Two evaluations and two iterations, as serial.train calls them; the second iteration adds one new game."""
    monitor = TrainingMonitor(str(exp_dir), total_env_step=1024, progress=progress)
    games = [game(-3.0, False), game(-1.0, True)]
    try:
        monitor.on_eval(make_report(0, 0.0, -20.0))
        monitor.on_iteration(512, 8, make_stats(1), sps=200.0, episodes=list(games))
        games.append(game(5.0, True))
        monitor.on_iteration(1024, 16, make_stats(2), sps=210.0, episodes=list(games))
        logging.getLogger('ppo_gobigger').info('a log line while the bar is shown')
        monitor.on_eval(make_report(1024, 0.25, -2.5))
    finally:
        monitor.close()


def scalars(exp_dir):
    events = EventAccumulator(str(exp_dir / TENSORBOARD_DIR))
    events.Reload()
    return {tag: [(e.step, e.value) for e in events.Scalars(tag)] for tag in events.Tags()['scalars']}


def test_tensorboard_csv_and_png(tmp_path):
    run_monitor(tmp_path, progress=False)

    tags = scalars(tmp_path)
    for name in LOSSES:  # x axis: env steps; each iteration's own figure (make_stats(k): 0.1 * k)
        assert tags[f'losses/{name}'] == [(512, pytest.approx(0.1)), (1024, pytest.approx(0.2))]
    assert tags['charts/learning_rate'] == [(512, pytest.approx(3e-4)), (1024, pytest.approx(3e-4))]
    assert tags['charts/SPS'] == [(512, 200.0), (1024, 210.0)]
    # training games: the mean over the games that ended during each iteration
    assert tags['charts/episode_return'] == [(512, -2.0), (1024, 5.0)]
    assert tags['charts/win_rate'] == [(512, 0.5), (1024, 1.0)]
    numeric = [f for f in REPORT_FIELDS if f != 'ckpt_name']
    for field in numeric:
        assert [step for step, _ in tags[f'eval/{field}']] == [0, 1024]
    assert tags['eval/win_rate'] == [(0, 0.0), (1024, 0.25)]
    assert tags['eval/reward_mean'] == [(0, -20.0), (1024, -2.5)]
    assert 'eval/ckpt_name' not in tags

    with open(tmp_path / CSV_NAME, newline='') as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == REPORT_FIELDS
    assert [(int(r['collector_envstep']), float(r['win_rate'])) for r in rows] == [(0, 0.0), (1024, 0.25)]

    png = tmp_path / CURVE_NAME
    assert png.stat().st_mode == (tmp_path / CSV_NAME).stat().st_mode  # written like any file (umask), not 0600
    image = cv2.imread(str(png))
    assert image.shape == (750, 700, 3)  # the 7 x 7.5 inch figure at 100 dpi
    assert (image == (180, 119, 31)).all(-1).sum() > 1000  # the curves, in tab:blue (BGR), are drawn
    assert not [p for p in tmp_path.iterdir() if p.name.startswith('.tmp')]


def test_a_resumed_run_appends_to_the_csv_and_curve(tmp_path):
    run_monitor(tmp_path, progress=False)
    run_monitor(tmp_path, progress=False)
    with open(tmp_path / CSV_NAME, newline='') as f:  # one header, four reports: the first run's, the second's
        assert [int(r['collector_envstep']) for r in csv.DictReader(f)] == [0, 1024, 0, 1024]


def test_a_resumed_run_keeps_the_columns_of_its_csv(tmp_path):
    """A run resumed from one whose evaluator.csv was written before a report field existed (score_ratio_median)
    appends rows under the file's own header: no field in the wrong column."""
    old_fields = [f for f in REPORT_FIELDS if f != 'score_ratio_median']
    with open(tmp_path / CSV_NAME, 'w', newline='') as f:
        writer = csv.DictWriter(f, fieldnames=old_fields)
        writer.writeheader()
        writer.writerow({k: v for k, v in make_report(0, 0.0, -20.0).items() if k in old_fields})
    run_monitor(tmp_path, progress=False)
    with open(tmp_path / CSV_NAME, newline='') as f:
        rows = list(csv.DictReader(f))
    assert [tuple(r) for r in rows] == [tuple(old_fields)] * 3 and all(None not in r for r in rows)
    assert [(int(r['collector_envstep']), float(r['win_rate'])) for r in rows] == [(0, 0.0), (0, 0.0), (1024, 0.25)]


def test_no_bar_unless_a_terminal(tmp_path, monkeypatch):
    err = io.StringIO()  # not a tty
    monkeypatch.setattr(sys, 'stderr', err)
    run_monitor(tmp_path / 'auto', progress=None)
    run_monitor(tmp_path / 'off', progress=False)
    assert err.getvalue() == ''

    run_monitor(tmp_path / 'on', progress=True)
    bar = err.getvalue()
    assert '1.02k/1.02k' in bar and 'eval win 0.25 reward -2.50' in bar


def test_a_writer_that_never_closes_cannot_hang_the_end_of_a_run(tmp_path, monkeypatch, caplog):
    """tensorboardX's close can wait forever on its logger thread (a SIGINT under load once hung a trainer there):
    the monitor gives it WRITER_CLOSE_S, then warns and returns, with the evaluator's files written."""
    never = threading.Event()
    monkeypatch.setattr(training, 'WRITER_CLOSE_S', 0.5)
    monkeypatch.setattr(SummaryWriter, 'close', lambda self: never.wait())
    started = time.time()
    with caplog.at_level(logging.WARNING, logger='ppo_gobigger'):
        run_monitor(tmp_path, progress=False)
    assert time.time() - started < 30
    assert 'the TensorBoard writer did not close within 0.5 s' in caplog.text
    assert (tmp_path / CSV_NAME).exists()
    never.set()


def test_the_curve_grid_keeps_each_row_in_range_after_the_drawing():
    axes = curve_grid(Figure())
    assert axes.shape == (len(GRID_ROWS), len(GRID_COLUMNS))
    axes[1, 0].plot([0, 36_000], [3.0, 80.0])  # score ratios far above 1
    finish_curve_grid(axes)
    assert axes[0, 1].get_ylim() == (-0.05, 1.05)  # win rate: the row shares its y axis
    bottom, top = axes[1, 1].get_ylim()
    assert bottom == 0 and top >= 80.0  # the top still autoscaled to what was drawn
    assert [ax.get_xlabel() for ax in axes[1]] == [label for _, label in GRID_COLUMNS]
    assert [row[0].get_ylabel() for row in axes] == [label for _, label in GRID_ROWS]
