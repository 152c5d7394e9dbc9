"""A GoBiggerEnv that injects one fault into a real game, for the fault-tolerance tests.

The fault is chosen by environment variables (inherited by env processes): PPO_GOBIGGER_FAULT is one of
kill (SIGKILL of the env's own process), hang (sleeps past any step timeout), raise (the game's step raises),
nan (a NaN reward); PPO_GOBIGGER_FAULT_DIR is a folder where the first env to reach step FAULT_STEP claims the
fault with a marker file, so that it happens exactly once per run; PPO_GOBIGGER_FAULT_EVAL=1 puts it in an
evaluator env instead of a collector env.
"""
import os
import signal
import time

import numpy as np
from ding.utils import ENV_REGISTRY

from ppo_gobigger.envs import GoBiggerEnv

FAULT_STEP = 15


def _claim() -> bool:
    try:
        fd = os.open(os.path.join(os.environ['PPO_GOBIGGER_FAULT_DIR'], 'claimed'), os.O_CREAT | os.O_EXCL)
    except FileExistsError:
        return False
    os.close(fd)
    return True


@ENV_REGISTRY.register('gobigger_faulty')
class FaultyGoBiggerEnv(GoBiggerEnv):

    def reset(self):
        self._steps = 0
        return super().reset()

    def step(self, action):
        self._steps += 1
        fault = os.environ.get('PPO_GOBIGGER_FAULT')
        wants_eval = os.environ.get('PPO_GOBIGGER_FAULT_EVAL') == '1'
        if fault and self._steps == FAULT_STEP and bool(self._cfg.is_evaluator) == wants_eval and _claim():
            if fault == 'kill':
                os.kill(os.getpid(), signal.SIGKILL)
            elif fault == 'hang':
                time.sleep(3600)
            elif fault == 'raise':
                def broken_step(*args, **kwargs):
                    raise RuntimeError('injected failure inside the game step')
                self._game.step = broken_step
            elif fault == 'nan':
                timestep = super().step(action)
                return timestep._replace(reward=np.full_like(timestep.reward, np.nan))  # (A,) one per player
        return super().step(action)
