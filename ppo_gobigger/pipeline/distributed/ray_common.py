"""What the Ray driver and its actors share (ray_actors.py: rollout workers; ray_evaluator.py: the evaluator): the
actors' process setup, the weights' publication, a driver's ray.get that keeps Ctrl+C working, and shutting actors
down."""
import os
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import ray
import torch

from ...quiet import silence_third_party_noise
from ..interrupt import TrainingInterrupted

MAX_FAILURES_IN_A_ROW = 3  # deaths of one worker (or of the evaluator) with no good result between them
CLOSE_TIMEOUT_S = 30  # for an actor to close its envs before it is killed
# every actor process silences the notices this one does (quiet.py) before it imports anything of ours
_QUIET = silence_third_party_noise
# and their torch threads wait passively (quiet.passive_openmp_waits), set before the process starts
RUNTIME_ENV = {'worker_process_setup_hook': f'{_QUIET.__module__}.{_QUIET.__name__}',
               'env_vars': {'OMP_WAIT_POLICY': os.environ.get('OMP_WAIT_POLICY', 'PASSIVE')}}


def cpu_state(model: torch.nn.Module) -> Dict[str, torch.Tensor]:
    return {k: v.detach().cpu() for k, v in model.state_dict().items()}


class WeightPublisher:
    """Puts the driver's model into the object store once per version (train_iter) and hands out the ref."""

    def __init__(self, model: torch.nn.Module, version: Callable[[], int]) -> None:
        self._model = model
        self._version = version
        self._published: Optional[Tuple[int, ray.ObjectRef]] = None
        self.bytes = sum(v.numel() * v.element_size() for v in model.state_dict().values())
        self.last_put_s = 0.0  # time of the latest ray.put

    def publish(self) -> ray.ObjectRef:
        version = self._version()
        if self._published is None or self._published[0] != version:
            start = time.perf_counter()
            self._published = (version, ray.put(cpu_state(self._model)))
            self.last_put_s = time.perf_counter() - start
        return self._published[1]


def get(ref: ray.ObjectRef) -> Any:
    """ray.get in the driver. Ctrl+C / SIGTERM raise TrainingInterrupted inside Ray's wait (interrupt.py); when the
    signal lands while Ray deserialises a result, Ray wraps it in a SystemError: unwrap it, so that the run still
    stops with its checkpoint."""
    try:
        return ray.get(ref)
    except SystemError as e:
        if isinstance(e.__cause__, TrainingInterrupted):
            raise e.__cause__ from None
        raise


def close_actors(actors: List[Any]) -> None:
    """Ask each actor to close its envs (a collect under way finishes first), then end its process."""
    pending = [actor.close.remote() for actor in actors]
    ray.wait(pending, num_returns=len(pending), timeout=CLOSE_TIMEOUT_S)
    for actor in actors:
        ray.kill(actor, no_restart=True)
