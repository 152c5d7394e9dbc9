"""SIGINT / SIGTERM during training: stop at a safe point, so that the checkpoint written then is consistent.

The signal raises ``TrainingInterrupted`` in the main thread at once, except inside ``critical()`` (a PPO
iteration's updates and counters, a few seconds at most): there it is held and raised when the block ends.
Once taken, the same stop is not interrupted again: further signals while the guard is on are ignored, so the
checkpoint gets written even when a signal comes twice (``timeout make train`` sends SIGTERM to make's process
group and make passes it on to its child; impatient Ctrl+C). SIGKILL remains the way to stop at once.
"""
import contextlib
import os
import signal
import threading
from typing import Iterator, Optional


class TrainingInterrupted(BaseException):
    """Training was stopped by a signal; ``exit_code`` is the shell's 128 + signal number.

    A BaseException, like KeyboardInterrupt, so that handlers of ordinary errors (an env's failed step) let it by.
    """

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.signal_name = signal.Signals(signum).name
        self.exit_code = 128 + signum
        self.checkpoint: Optional[str] = None  # set by the training loop once it has saved one
        super().__init__(f'training stopped by {self.signal_name}')


class InterruptGuard:
    """Installs the handlers on enter (main thread only) and puts the previous ones back on exit."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self._depth = 0  # nesting of critical()
        self._pending: Optional[int] = None
        self._stopping = False  # a TrainingInterrupted has been raised (or is pending): the run is saving
        self._previous = {}
        self._pid = os.getpid()

    def __enter__(self) -> 'InterruptGuard':
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    def _handle(self, signum, frame) -> None:
        if os.getpid() != self._pid:
            # an env process forked while the guard was on inherits this handler: there the signal means what it
            # always means (a manager closing its envs terminates them), so die of it as if no handler were set
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        if self._stopping:
            os.write(2, f'{signal.Signals(signum).name} again: already stopping, saving the checkpoint '
                        '(SIGKILL stops at once, losing it)\n'.encode())
            return
        self._stopping = True
        if self._depth > 0:
            self._pending = signum
        else:
            raise TrainingInterrupted(signum)

    @contextlib.contextmanager
    def critical(self) -> Iterator[None]:
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
        if self._depth == 0 and self._pending is not None:
            signum, self._pending = self._pending, None
            raise TrainingInterrupted(signum)
