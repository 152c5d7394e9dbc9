"""Progress of a phase that takes more than a few seconds: a tqdm bar on a terminal, log lines elsewhere.

One mechanism for the training run (monitor/training.py) and each evaluation (play/evaluator.py). ``progress`` None
shows the bar when stderr, where the bar and the log go, is a terminal; True always; False never (--no-progress).
While a bar is shown, log lines are written above it instead of through it. Without a bar, a phase logs the bar's figures at least every LOG_EVERY_S
seconds, so that a log file never goes quiet for long.
"""
import contextlib
import logging
import time
from typing import Optional

from tqdm import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm

logger = logging.getLogger('ppo_gobigger')

LOG_EVERY_S = 30.0  # the longest a phase without a bar goes without a log line (read when a Progress is made)
REDRAW_EVERY_S = 0.1  # the shortest time between two redraws of a bar (tqdm's mininterval; read when a Progress is made)


class Progress:
    """How far a phase is: ``n`` of ``total`` units, shown as a bar or, without one, as log lines."""

    def __init__(
            self,
            desc: Optional[str],
            total: Optional[float],
            unit: str,
            progress: Optional[bool] = None,
            initial: float = 0,
            unit_scale: bool = False,
            leave: bool = True,
            log: bool = True,
    ) -> None:
        """
        Arguments:
            desc: what the phase does, the label of the bar and of its log lines.
            total: the count at the end (None: unknown).
            unit: what is counted ('step', 'game', 'update'), as tqdm shows it.
            progress: show the bar: None when stderr is a terminal, True always, False never.
            initial: the count so far (a resumed run).
            leave: keep the bar on screen when the phase ends (False for a phase shown under another's bar).
            log: without a bar, log a line at least every LOG_EVERY_S seconds (False: the phase logs its own).
        """
        self._bar = tqdm(
            total=total, initial=initial, desc=desc, unit=unit, unit_scale=unit_scale, leave=leave,
            dynamic_ncols=True, mininterval=REDRAW_EVERY_S, disable=None if progress is None else not progress  # tqdm: None = off if no tty
        )
        self._redirect = contextlib.ExitStack()
        if not self._bar.disable:  # log lines go above the bar instead of through it
            self._redirect.enter_context(logging_redirect_tqdm())
        self._log_every = LOG_EVERY_S if log and self._bar.disable else None
        self._desc, self._total, self._unit = desc, total, unit
        self._postfix = ''
        self._start = self._last_log = time.time()
        self._initial = initial
        self.n = initial  # a disabled tqdm does not count

    def update(self, n: float = 1, postfix: Optional[str] = None) -> None:
        """Count ``n`` more (0: only show ``postfix``); ``postfix`` replaces the text after the figures."""
        self.n += n
        if postfix is not None:
            self._postfix = postfix
            self._bar.set_postfix_str(postfix, refresh=False)
        self._bar.update(n)
        if self._log_every is not None and time.time() - self._last_log >= self._log_every:
            self.log()

    def set_postfix(self, postfix: str) -> None:
        """Show ``postfix`` after the figures now."""
        self._postfix = postfix
        self._bar.set_postfix_str(postfix)

    def log(self) -> None:
        """Log the bar's figures as one line, e.g.
        "evaluation: 4/8 games (00:24 elapsed, ~00:24 left, 0.2 games/s)"."""
        self._last_log = time.time()
        elapsed = self._last_log - self._start
        rate = (self.n - self._initial) / elapsed if elapsed > 0 else 0.0
        done = f'{self.n:,.0f}' + (f'/{self._total:,.0f}' if self._total else '')
        left = ''
        if self._total and rate > 0 and self.n < self._total:
            left = f', ~{tqdm.format_interval((self._total - self.n) / rate)} left'
        logger.info(f'{self._desc or "progress"}: {done} {self._unit}s{", " + self._postfix if self._postfix else ""} '
                    f'({tqdm.format_interval(elapsed)} elapsed{left}, {rate:.3g} {self._unit}s/s)')

    def close(self) -> None:
        self._bar.close()
        self._redirect.close()

    def __enter__(self) -> 'Progress':
        return self

    def __exit__(self, *exc) -> None:
        self.close()
