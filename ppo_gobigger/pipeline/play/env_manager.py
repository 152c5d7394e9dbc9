"""DI-engine env managers for the collector and the evaluator, made to survive a lost env process.

DI-engine's SyncSubprocessEnvManager closes the whole manager and re-raises when one env process dies (EOFError),
hangs, or raises in step. ``ResilientSubprocessEnvManager`` handles that once, at the manager: the failed env's
process is killed and started again, and its step comes back as DI-engine's abnormal timestep, which the
collector and the evaluator already treat as a lost step followed by a reset of that env.
"""
import copy
import functools
import logging
import os
import signal
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ding.envs import BaseEnvTimestep
from ding.envs.env_manager import SyncSubprocessEnvManager
from ding.envs.env_manager.base_env_manager import EnvState
from ding.utils import PropagatingThread
from easydict import EasyDict

from ...envs.game import env_configs

logger = logging.getLogger('ppo_gobigger')
MAX_FAILURES_IN_A_ROW = 3  # failed steps of one env with no good step between them before training stops


class ResilientSubprocessEnvManager(SyncSubprocessEnvManager):
    """``subprocess`` manager whose envs may die, hang past ``step_timeout`` or raise: the others go on."""

    can_send_ahead = True  # send() returns while the env processes step

    def __init__(self, env_fn, cfg) -> None:
        super().__init__(env_fn, cfg)
        self.env_restarts = 0  # env processes started again after a fault
        self._failures_in_a_row: Dict[int, int] = {}  # per env; a persistent fault is an error, not a loop
        self._seed_of: Dict[int, Any] = {}

    def seed(self, seed, dynamic_seed=None) -> None:
        super().seed(seed, dynamic_seed)
        self._seed_of = dict(enumerate(self._env_seed)) if isinstance(self._env_seed, list) else dict(self._env_seed)

    def _create_env_subprocess(self, env_id: int) -> None:
        # Env processes ignore SIGINT: Ctrl+C reaches the whole process group, and the trainer, not its envs,
        # decides how to stop (it checkpoints, then closes them). SIGTERM ends them at once, whatever handler
        # the parent has (the trainer's, or a Ray worker's, which would print a traceback).
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN), signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            super()._create_env_subprocess(env_id)
        finally:
            signal.signal(signal.SIGINT, previous[0])
            signal.signal(signal.SIGTERM, previous[1])

    def _restart(self, env_id: int, reason: str) -> None:
        failures = self._failures_in_a_row.get(env_id, 0) + 1
        self._failures_in_a_row[env_id] = failures
        if failures > MAX_FAILURES_IN_A_ROW:
            self.close()
            raise RuntimeError(f'env {env_id} failed {failures} times in a row; the last error: {reason}')
        logger.warning(f'env {env_id} failed ({reason}); starting its process again')
        process = self._subprocesses[env_id]
        if process.is_alive():
            process.kill()
        process.join(timeout=5)
        self._pipe_parents[env_id].close()
        self._create_env_subprocess(env_id)
        self._env_states[env_id] = EnvState.ERROR  # the caller resets it, as for any abnormal step
        if self._seed_of.get(env_id) is not None:
            self._env_seed[env_id] = self._seed_of[env_id]  # the new process is seeded again at that reset
        self.env_restarts += 1

    def step(self, actions: Dict[int, Any]) -> Dict[int, BaseEnvTimestep]:
        self.send(actions)
        return self.receive(list(actions))

    def send(self, actions: Dict[int, Any]) -> None:
        """The first half of ``step``: hand each env its action and return while the envs step (``receive`` ends
        the step), so that the caller can work meanwhile: e.g. the forward pass of envs not sent any action."""
        self._check_closed()
        for env_id, act in actions.items():
            self._pipe_parents[env_id].send(['step', [act], None])

    def receive(self, env_ids: Sequence[int]) -> Dict[int, BaseEnvTimestep]:
        """The second half of ``step``: wait for the steps ``send`` started in ``env_ids``; their timesteps, as
        ``step`` returns them."""
        self._check_closed()
        timeout = self._cfg.step_timeout
        timesteps = {}
        for env_id in env_ids:
            pipe = self._pipe_parents[env_id]
            try:
                if timeout is not None and not pipe.poll(timeout):
                    raise TimeoutError(f'no answer within step_timeout={timeout}s')
                timestep = pipe.recv()
                if isinstance(timestep, BaseException):
                    raise timestep
            except Exception as e:  # EOFError (process died), TimeoutError, an error raised in the env's step
                self._restart(env_id, f'{type(e).__name__}: {e}'.strip())
                timesteps[env_id] = BaseEnvTimestep(None, None, None, {'abnormal': True, 'error': repr(e)})
                continue
            self._failures_in_a_row[env_id] = 0
            if self._shared_memory:
                timestep = timestep._replace(obs=self._obs_buffers[env_id].get())
            timesteps[env_id] = timestep
            if timestep.info.get('abnormal', False):  # the env caught its own error
                self._env_states[env_id] = EnvState.ERROR
            elif timestep.done:
                self._env_episode_count[env_id] += 1
                self._env_states[env_id] = EnvState.RESET
                thread = PropagatingThread(target=self._reset, args=(env_id, ), name='regular_reset', daemon=True)
                thread.start()
            else:
                self._ready_obs[env_id] = timestep.obs
        return timesteps

    def close(self) -> None:
        """Like DI-engine's, but a dead env's pipe does not stop it, and every process is joined (no orphans)."""
        if self._closed:
            return
        self._closed = True
        for pipe in self._pipe_parents.values():
            try:
                pipe.send(['close', None, None])
            except OSError:
                pass
        for pipe in self._pipe_parents.values():
            try:
                if pipe.poll(5):
                    pipe.recv()
            except (OSError, EOFError):
                pass
        for env_id in range(self._env_num):
            self._env_states[env_id] = EnvState.VOID
        for process in self._subprocesses.values():
            process.terminate()
        for process in self._subprocesses.values():
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
                process.join()
        for pipe in self._pipe_parents.values():
            pipe.close()


# Games from which a collector or an evaluator steps its envs in two halves. Measured on this project's 2 cores (fast
# engine, vs-bots config, 2 runs each in ABBA order): 8 collector envs trained 5.7% faster in halves (190.5 against
# 180.3 env steps/s), 2 evaluator envs evaluated 2.6% slower (247.5 against 254.2: one env per half, each forward
# pass serves one game at nearly the cost of two).
MIN_GAMES_IN_HALVES = 4


def env_groups(manager, teams_per_env: int = 1) -> List[List[int]]:
    """How a collector or an evaluator steps ``manager``'s envs: in two fixed halves of its games where the envs can
    be sent their actions before their steps are read (``can_send_ahead``: envs in their own processes; one half's
    forward pass then runs while the other half steps) and there are ``MIN_GAMES_IN_HALVES`` games or more, else all
    at once. A game is ``teams_per_env`` env ids."""
    games = manager.env_num // teams_per_env
    if not getattr(manager, 'can_send_ahead', False) or games < MIN_GAMES_IN_HALVES:
        return [list(range(manager.env_num))]
    half = (games + 1) // 2
    return [list(range(half * teams_per_env)), list(range(half * teams_per_env, manager.env_num))]


class SplitStep:
    """``send`` / ``receive`` over any env manager: the manager's own where it has them, else ``send`` keeps the
    actions and ``receive`` steps them in one call (the envs step in ``receive``; an async manager returns the envs
    that are ready, which may not be the ones asked for)."""

    def __init__(self, manager) -> None:
        self._manager = manager
        self._actions: Dict[int, Any] = {}

    def send(self, actions: Dict[int, Any]) -> None:
        if hasattr(self._manager, 'send'):
            self._manager.send(actions)
        else:
            self._actions.update(actions)

    def receive(self, env_ids: Sequence[int]) -> Dict[int, BaseEnvTimestep]:
        if hasattr(self._manager, 'receive'):
            return self._manager.receive(env_ids)
        actions, self._actions = self._actions, {}
        return self._manager.step(actions)


def build_env_managers(cfg: EasyDict, create_cfg: EasyDict, collect: bool = True, evaluate: bool = True,
                       first_episodes=None, first_env: int = 0):
    """(collector manager or None, evaluator manager or None) from env.manager (type + the manager's own keys).

    ``first_episodes``: per collector env, the games it already played (a resumed run continues from there).
    ``first_env``: the run's index of the first collector env here (a torchrun rank's or a Ray worker's share), so
    that shares on one machine run on different cores (``env_cores``).
    """
    env_cls = _env_class(create_cfg)
    env_cfg = copy.deepcopy(cfg.env)
    manager_cfg = EasyDict(copy.deepcopy(env_cfg.pop('manager')))
    collector_env = None
    if collect:
        cfgs = env_configs(env_cfg, env_cfg.collector_env_num, is_evaluator=False)
        for c, first in zip(cfgs, first_episodes or [0] * len(cfgs)):
            c.first_episode = first
        collector_env = _make_env_manager(env_cls, cfgs, manager_cfg, first_env)
    evaluator_env = None
    if evaluate:
        evaluator_env = _make_env_manager(env_cls, env_configs(env_cfg, env_cfg.evaluator_env_num, is_evaluator=True),
                                          _lockstep(manager_cfg))
    return collector_env, evaluator_env


def build_game_env_manager(cfg: EasyDict, create_cfg: EasyDict, env_cfgs: Sequence[Mapping]):
    """A manager of the evaluator's kind (env.manager, lock-step) with one env per config of ``env_cfgs``: for
    games whose env configs the caller makes itself (the league tool's held-out games, every team played by it)."""
    manager_cfg = EasyDict(copy.deepcopy(cfg.env.manager))
    return _make_env_manager(_env_class(create_cfg), list(env_cfgs), _lockstep(manager_cfg))


def _env_class(create_cfg: EasyDict):
    from ding.utils import ENV_REGISTRY, import_module

    import_module(create_cfg.env.import_names)
    return ENV_REGISTRY.get(create_cfg.env.type)


def _make_env_manager(env_cls, cfgs: Sequence[Mapping], manager: EasyDict, first_env: int = 0):
    from ding.envs.env_manager import create_env_manager

    if manager.type in ('subprocess', 'async_subprocess'):  # env_fn runs in each env's own process
        cores = env_cores(first_env, len(cfgs))
        env_fns = [functools.partial(_env_in_own_process, env_cls, c, os.getpid(), core)
                   for c, core in zip(cfgs, cores)]
    else:  # env_fn runs in this process
        env_fns = [functools.partial(env_cls, c) for c in cfgs]
    if manager.type == 'subprocess':
        manager = copy.deepcopy(manager)
        manager.pop('type')
        return ResilientSubprocessEnvManager(env_fns, manager)
    return create_env_manager(manager, env_fns)


def _env_in_own_process(env_cls, cfg: Mapping, manager_pid: int, core: Optional[int]):
    if os.getpid() != manager_pid:  # DI-engine also makes one env in the manager's process, to size shared memory
        yield_on_wakeup()
        if core is not None:
            try:
                os.sched_setaffinity(0, {core})
            except OSError:  # the core went away (hotplug, a cpuset changed since): the scheduler places it
                pass
    return env_cls(cfg)


def env_cores(first_env: int, env_num: int) -> List[Optional[int]]:
    """The core each env process runs on, for the run's envs ``first_env`` .. ``first_env + env_num - 1``: env i
    on the (i mod n)-th of the n cores this process may use (under ``taskset``, the cores it allows). Left to the
    scheduler, an env woken by its action was often queued behind another env for ~0.8 ms (2 envs on 2 cores: the
    second env's step started 0.95-1.0 ms after the actions left, against 0.21 ms pinned). None (not pinned) where
    the OS has no affinity call."""
    if not hasattr(os, 'sched_getaffinity'):
        return [None] * env_num
    cores = sorted(os.sched_getaffinity(0))
    return [cores[i % len(cores)] for i in range(first_env, first_env + env_num)]


def yield_on_wakeup() -> None:
    """Run this (env) process under SCHED_BATCH: woken by an action on its pipe, it waits for its turn instead of
    preempting the trainer, which can then send every env its action before any of them runs. With more env
    processes than cores, each send otherwise costs a context switch (~1 ms per env and step measured here
    beside other work). Linux only; elsewhere, or where the call is refused, nothing changes."""
    if hasattr(os, 'sched_setscheduler') and hasattr(os, 'SCHED_BATCH'):
        try:
            os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
        except OSError:
            pass


def _lockstep(manager: EasyDict) -> EasyDict:
    """The evaluator's manager: it restarts every game at each evaluation, which the lock-step subprocess manager
    does cleanly, so async_subprocess becomes subprocess."""
    manager = copy.deepcopy(manager)
    if manager.type == 'async_subprocess':
        manager.type = 'subprocess'
        # the lock-step manager's own values: it reads them too (wait for every env, no step wait timeout)
        manager.update({k: SyncSubprocessEnvManager.default_config()[k] for k in ('wait_num', 'step_wait_timeout')})
    return manager


def wait_until_idle(manager, timeout: float = 60.0) -> None:
    """Wait until every env is ready for an action.

    DI-engine's subprocess managers reset a finished env in a background thread that reads the env's pipe; a
    reset() or close() from the caller while that thread runs reads the same pipe and corrupts both.
    """
    deadline = time.time() + timeout
    while len(manager.ready_obs) < manager.env_num:
        if time.time() > deadline:
            logging.warning(f'envs still not ready after {timeout:.0f}s; going on')
            return
        time.sleep(0.005)


def close_env_manager(manager) -> None:
    if manager is None or manager.closed:
        return
    wait_until_idle(manager)
    manager.close()
