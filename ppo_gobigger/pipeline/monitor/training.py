"""What a user sees of a training run, besides the log: a progress bar, TensorBoard scalars, the evaluator's
reports as CSV and as a learning-curve PNG.

Files, in the experiment folder:
    tensorboard/          charts/ (speed, training games), losses/ (PPO diagnostics), eval/ (evaluator reports);
                          the x axis is training env steps
    evaluator.csv         one evaluator report per row (the same reports as evaluator.jsonl)
    learning_curve.png    win rate, score ratio and reward against env steps, redrawn at each evaluation
"""
import csv
import logging
import numbers
import os
import threading
from typing import Any, Dict, List, Mapping, Optional, Sequence

import numpy as np
from tensorboardX import SummaryWriter

from ..progress import Progress
from .learning_curve import plot_learning_curve

TENSORBOARD_DIR, CSV_NAME, CURVE_NAME = 'tensorboard', 'evaluator.csv', 'learning_curve.png'
# seconds TensorBoard's writer gets to close: tensorboardX joins its logger thread, which a stop signal can leave
# waiting forever on a queue (a SIGINT under load once hung a trainer there)
WRITER_CLOSE_S = 10.0
# learner stats whose tag is not losses/<name> (None: not charted)
STAT_TAGS = {'cur_lr': 'charts/learning_rate', 'update_count': None}
# training games: episode-end info key -> tag of its mean over the games that ended during an iteration
EPISODE_TAGS = {
    'eval_episode_return': 'charts/episode_return',
    'win': 'charts/win_rate',
    'score_ratio': 'charts/score_ratio',
    'rank': 'charts/rank',
}


logger = logging.getLogger('ppo_gobigger')


class TrainingMonitor:

    def __init__(
            self,
            exp_dir: str,
            total_env_step: Optional[int],
            progress: Optional[bool] = None,
    ) -> None:
        """
        Arguments:
            exp_dir: the experiment folder.
            total_env_step: the run's max_env_step, the end of the bar (None: a bar that counts without an end).
            progress: show the bar; None: only when stderr, where the bar and the log go, is a terminal.
        """
        self._exp_dir = exp_dir
        self._total = total_env_step
        self._progress = progress
        self._writer = SummaryWriter(os.path.join(exp_dir, TENSORBOARD_DIR))
        self._csv_path = os.path.join(exp_dir, CSV_NAME)
        self._bar: Optional[Progress] = None  # made at the first event, starting from its env step (a resumed run)
        self._last_episode: Optional[Mapping] = None  # the newest training game seen by on_iteration

    def on_iteration(
            self, envstep: int, train_iter: int, stats: Mapping[str, Any], sps: float, episodes: Sequence[Mapping]
    ) -> None:
        """After a PPO iteration: ``stats`` of the learner, ``sps`` env steps per second of collection plus
        learning, ``episodes`` the end infos of the latest training games, oldest first (the collector's deque)."""
        w = self._writer
        w.add_scalar('charts/SPS', sps, envstep)
        w.add_scalar('charts/train_iter', train_iter, envstep)
        for key, value in stats.items():
            tag = STAT_TAGS.get(key, f'losses/{key}')
            if tag is not None and _is_number(value):
                w.add_scalar(tag, value, envstep)
        new = self._new_episodes(episodes)
        for key, tag in EPISODE_TAGS.items():
            values = [float(e[key]) for e in new if key in e]
            if values:
                w.add_scalar(tag, np.mean(values), envstep)
        w.flush()
        self._advance(envstep)

    def on_eval(self, report: Mapping[str, Any]) -> None:
        """After an evaluation: its report."""
        envstep = report['collector_envstep']
        for key, value in report.items():
            if _is_number(value):
                self._writer.add_scalar(f'eval/{key}', value, envstep)
        self._writer.flush()
        self._append_csv(report)
        plot_learning_curve(
            read_reports_csv(self._csv_path), os.path.join(self._exp_dir, CURVE_NAME),
            title=os.path.basename(os.path.normpath(self._exp_dir)), x_max=self._total
        )
        self._advance(envstep)
        # short enough for an 80-column terminal: win_rate and reward_mean of the latest evaluation
        self._bar.set_postfix(f'eval win {report["win_rate"]:.2f} reward {report["reward_mean"]:.2f}')

    def close(self) -> None:
        """Close the bar and the TensorBoard writer; a writer that does not close within WRITER_CLOSE_S is left
        behind (its threads are daemons) so that a run always ends."""
        if self._bar is not None:
            self._bar.close()
        closing = threading.Thread(target=self._writer.close, name='tensorboard-close', daemon=True)
        closing.start()
        closing.join(WRITER_CLOSE_S)
        if closing.is_alive():
            logger.warning(f'the TensorBoard writer did not close within {WRITER_CLOSE_S:g} s; its last events '
                           f'may be missing from {os.path.join(self._exp_dir, TENSORBOARD_DIR)}')

    # ---- helpers ----
    def _advance(self, envstep: int) -> None:
        if self._bar is None:  # no log lines of its own: the training loop logs every iteration
            self._bar = Progress(None, self._total, 'step', self._progress, initial=envstep, unit_scale=True, log=False)
        self._bar.update(envstep - self._bar.n)

    def _new_episodes(self, episodes: Sequence[Mapping]) -> List[Mapping]:
        episodes = list(episodes)
        new = episodes
        for k in range(len(episodes) - 1, -1, -1):  # the deque only appends: new games follow the last one seen
            if episodes[k] is self._last_episode:
                new = episodes[k + 1:]
                break
        if episodes:
            self._last_episode = episodes[-1]
        return new

    def _append_csv(self, report: Mapping[str, Any]) -> None:
        is_new = not os.path.exists(self._csv_path) or os.path.getsize(self._csv_path) == 0
        fields = list(report)
        if not is_new:  # a resumed run's file keeps its columns (one written before a field was added lacks it)
            with open(self._csv_path, newline='') as f:
                fields = next(csv.reader(f))
        with open(self._csv_path, 'a', newline='') as f:
            writer = csv.DictWriter(f, fieldnames=fields, restval='', extrasaction='ignore')
            if is_new:
                writer.writeheader()
            writer.writerow(report)


def read_reports_csv(path: str) -> List[Dict[str, Any]]:
    """The reports of evaluator.csv, numbers as float."""
    with open(path, newline='') as f:
        return [{k: _to_number(v) for k, v in row.items()} for row in csv.DictReader(f)]


def _to_number(text: str) -> Any:
    try:
        return float(text)
    except ValueError:
        return text


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)
