"""DI-engine env managers for the collector and the evaluator, and a safe way to stop using them."""
import copy
import logging
import time

from easydict import EasyDict


def build_env_managers(cfg: EasyDict, create_cfg: EasyDict, collect: bool = True, evaluate: bool = True):
    """(collector manager or None, evaluator manager or None) from env.manager (type + the manager's own keys)."""
    from ding.envs.env_manager import create_env_manager
    from ding.utils import ENV_REGISTRY, import_module

    import_module(create_cfg.env.import_names)
    env_cls = ENV_REGISTRY.get(create_cfg.env.type)
    env_cfg = copy.deepcopy(cfg.env)
    manager_cfg = EasyDict(copy.deepcopy(env_cfg.pop('manager')))

    def make(cfgs, manager):
        return create_env_manager(manager, [lambda c=c: env_cls(c) for c in cfgs])

    collector_env = make(env_cls.create_collector_env_cfg(env_cfg), manager_cfg) if collect else None
    evaluator_env = None
    if evaluate:
        # The evaluator restarts every game at each evaluation; the lock-step subprocess manager does that cleanly.
        eval_manager = copy.deepcopy(manager_cfg)
        if eval_manager.type == 'async_subprocess':
            eval_manager.type = 'subprocess'
            eval_manager.pop('wait_num', None)
            eval_manager.pop('step_wait_timeout', None)
        evaluator_env = make(env_cls.create_evaluator_env_cfg(env_cfg), eval_manager)
    return collector_env, evaluator_env


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
