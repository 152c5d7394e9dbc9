"""Videos of each new best checkpoint's first evaluation games, played again while training (``replay.save_best``)."""
import contextlib
import logging
import os
import time
from typing import Optional

from ..evaluate import evaluate
from ..learn.checkpoint import rng_state, set_rng_state

logger = logging.getLogger('ppo_gobigger')

REPLAY_DIR = 'replays'  # in the experiment folder: replays/iteration_N/ per new best checkpoint


def record_best_games(ckpt: str, replay_dir: str, episodes: int, progress: Optional[bool] = None) -> None:
    """Play the first ``episodes`` evaluation games of ``ckpt`` again, with a video of each in
    ``replay_dir``/<checkpoint name>/ (see evaluate). A failure is logged, never raised: a video is not worth the
    training run. ``progress``: show the games as a bar (None: on a terminal)."""
    out = os.path.join(replay_dir, os.path.basename(ckpt).split('.')[0])
    start = time.time()
    try:
        with _kept_random_state():
            evaluate(ckpt, episodes=episodes, replay_dir=out, progress=progress)
    except Exception:
        logger.warning(f'could not record the games of {ckpt}', exc_info=True)
        return
    logger.info(f'new best checkpoint: videos of its games in {out} ({time.time() - start:.0f}s)')


@contextlib.contextmanager
def _kept_random_state():
    """evaluate() seeds random, numpy and torch for its games; the training run's streams go on as if it had not."""
    state = rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
