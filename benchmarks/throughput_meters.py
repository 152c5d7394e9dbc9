"""The meters of benchmarks/throughput.py's training rate: an env that times its own step, the manager's and the
policy's calls timed from outside, and the CPU time of the trainer and of its env processes."""
import time
from contextlib import contextmanager
from typing import Dict, Iterator, List

import psutil
from ding.utils import ENV_REGISTRY

from ppo_gobigger.envs.gobigger_env import GoBiggerEnv


@ENV_REGISTRY.register('gobigger_ppo_timed')
class TimedGoBiggerEnv(GoBiggerEnv):
    """GoBiggerEnv that reports the wall time of its own step in info['env_step_s'] (measured in the env)."""

    def step(self, action):
        start = time.perf_counter()
        timestep = super().step(action)
        timestep.info['env_step_s'] = time.perf_counter() - start
        return timestep


class StepTimer:
    """Wraps a manager's step (and the policy's forward): wall time of each call, env-side time, steps."""

    def __init__(self, parallel_envs: bool) -> None:
        self.parallel_envs = parallel_envs
        self.manager_s = self.env_critical_s = self.env_sum_s = self.inference_s = self.inference_cpu_s = 0.0
        self.manager_calls = self.inference_calls = self.env_steps = 0

    def wrap_manager(self, manager) -> None:
        """Times ``send`` + ``receive`` where the manager has them (the collector's calls), else ``step``."""
        def timed(call):
            def timed_call(*args):
                start = time.perf_counter()
                timesteps = call(*args)  # send returns None
                self.manager_s += time.perf_counter() - start
                env_s = [ts.info.get('env_step_s', 0.0) for ts in (timesteps or {}).values()]
                self.env_sum_s += sum(env_s)
                self.env_critical_s += (max(env_s) if self.parallel_envs else sum(env_s)) if env_s else 0.0
                self.env_steps += len(env_s)
                self.manager_calls += timesteps is not None
                return timesteps
            return timed_call

        for name in (('send', 'receive') if hasattr(manager, 'receive') else ('step', )):
            setattr(manager, name, timed(getattr(manager, name)))

    def wrap_policy(self, collect_mode):
        """A copy of the policy's collect_mode (a namedtuple) whose forward is timed."""
        forward = collect_mode.forward

        def timed_forward(*args, **kwargs):
            start, cpu_start = time.perf_counter(), time.process_time()
            output = forward(*args, **kwargs)
            self.inference_s += time.perf_counter() - start
            self.inference_cpu_s += time.process_time() - cpu_start
            self.inference_calls += 1
            return output

        return collect_mode._replace(forward=timed_forward)


class CpuMeter:
    """CPU seconds (user + system, every thread) of this process and of its env processes, read between phases."""

    def __init__(self) -> None:
        self._me = psutil.Process()
        self._envs: List[psutil.Process] = []
        self.seconds = {'main': {}, 'envs': {}}  # who -> {phase: CPU seconds}

    def find_envs(self) -> None:
        """The env processes: this process's children once the managers are launched."""
        self._envs = self._me.children(recursive=True)

    def _read(self) -> Dict[str, float]:
        def cpu(p: psutil.Process) -> float:
            try:
                t = p.cpu_times()
                return t.user + t.system
            except psutil.NoSuchProcess:
                return 0.0

        return {'main': cpu(self._me), 'envs': sum(cpu(p) for p in self._envs)}

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Add the CPU seconds spent inside the ``with`` block to seconds[who][name] of the trainer and the envs."""
        before = self._read()
        yield
        after = self._read()
        for who in ('main', 'envs'):
            self.seconds[who][name] = self.seconds[who].get(name, 0.0) + after[who] - before[who]
