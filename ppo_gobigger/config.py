"""Config: defaults from the classes that own them, user overrides checked key by key, ``--set`` parsing.

DI-engine's compile_config merges user config over defaults and accepts unknown keys silently, so a typo is
ignored; here an unknown key is an error naming it and the nearest valid keys, and a value of the wrong type is
an error too.
"""
import ast
import copy
import difflib
import importlib.util
import inspect
import os
import runpy
import sys
from typing import Any, Dict, Iterable, List, Optional, Tuple

from easydict import EasyDict

from .envs.opponents import BOT_LEVELS, POLICY_OPPONENTS

from .errors import ConfigError
from .retired_keys import drop_retired_keys


# Sections whose keys belong to another library's config and are checked against that library's defaults.
FREE_FORM = ('env.custom_cfg', 'env.manager')
_MANAGER_TYPES = ('base', 'subprocess', 'async_subprocess')
BACKENDS = ('local', 'ray')  # distributed.backend


def default_config() -> EasyDict:
    """The full default main_config, the recipe: every key a user may set, with its default."""
    from .envs.gobigger_env import INSTANCE_KEYS, GoBiggerEnv
    from .model.gobigger_ppo_model import GoBiggerPPOModel
    from .policy.gobigger_ppo import DING_FIXED, DING_FIXED_LEARN, GoBiggerPPOPolicy

    policy = GoBiggerPPOPolicy.default_config()
    for key in ('cfg_type', 'type', *DING_FIXED):  # what DI-engine reads is set by the policy class, not by users
        policy.pop(key, None)
    for key in DING_FIXED_LEARN:
        policy.learn.pop(key, None)
    policy.model = {
        name: p.default
        for name, p in inspect.signature(GoBiggerPPOModel.__init__).parameters.items()
        if name != 'self' and p.default is not inspect.Parameter.empty
    }
    env = GoBiggerEnv.default_config()
    for key in ('cfg_type', *INSTANCE_KEYS):
        env.pop(key, None)
    return EasyDict(
        dict(
            # (str) Experiment folder: checkpoints, logs and the evaluator's reports go here.
            exp_name='exp/gobigger_ppo_st_t2p2',
            # (int) Seed of the whole run (envs, torch, numpy, random).
            seed=0,
            # (int or None) Stop after this many collected env steps: 100 PPO iterations of 3,600 on st_t2p2.
            max_env_step=360_000,
            # (int or None) Stop after this many gradient updates.
            max_train_iter=None,
            league=dict(  # env.opponent 'self' and 'league': opponents played by policies (pipeline/league/)
                # (int) opponent 'league': the current weights join the pool every this many PPO iterations.
                snapshot_every=10,
                # (list) Bot levels that are members of the pool from the start ([] for a pool of snapshots only).
                bot_levels=[2, 3],
                # (float) Share of the other teams played by the current weights (self-play inside the league); in
                # the games where every other team is, every team's steps are learnt from.
                self_play=0.5,
            ),
            distributed=dict(
                # (str) Where the rollouts are collected: 'local' (env managers of this process; under torchrun,
                # of each rank: see docs/scaling.md) or 'ray' (rollout workers are Ray actors).
                backend='local',
                # (int) Ray rollout worker actors; env.collector_env_num is split over them (backend 'ray').
                num_workers=2,
                # (str or None) Ray cluster to join, e.g. 'auto' or 'HEAD_IP:6379'; None starts a local one.
                address=None,
                # (int or None) CPUs of the local Ray cluster started when address is None; None: all cores.
                num_cpus=None,
                # (float) CPUs Ray reserves for each rollout worker (its envs' share of a machine).
                worker_cpus=1.0,
            ),
            env=dict(
                env,
                # (float or None) Stop training once an evaluation's win rate reaches this, in (0, 1]; None: never.
                # Not in the env's own config: DI-engine's entries compare their reward with their own default.
                stop_value=None,
            ),
            policy=policy,
        )
    )


def default_create_config() -> EasyDict:
    """Which registered env, env manager and policy to build (DI-engine's create_config)."""
    return EasyDict(
        dict(
            env=dict(type='gobigger', import_names=['ppo_gobigger.envs.gobigger_env']),
            env_manager=dict(type='subprocess'),
            policy=dict(type='gobigger_ppo', import_names=['ppo_gobigger.policy.gobigger_ppo']),
        )
    )


def _nearest(key: str, allowed: Iterable[str]) -> str:
    allowed = sorted(allowed)
    near = difflib.get_close_matches(key, allowed, n=3, cutoff=0.5)
    if near:
        return f'did you mean {", ".join(repr(n) for n in near)}?'
    return f'valid keys here: {", ".join(allowed)}'


def _check_type(path: str, value: Any, default: Any) -> None:
    if default is None or value is None:
        return
    if isinstance(default, bool) or isinstance(value, bool):
        ok = isinstance(value, bool) and isinstance(default, bool)
    elif isinstance(default, float):
        ok = isinstance(value, (int, float))
    elif isinstance(default, int):
        ok = isinstance(value, int) or (isinstance(value, float) and value == float('inf'))
    elif isinstance(default, (list, tuple)):
        ok = isinstance(value, (list, tuple))
    elif isinstance(default, dict):
        ok = isinstance(value, dict)
    else:
        ok = isinstance(value, type(default))
    if not ok:
        raise ConfigError(
            f'config key {path!r} expects {type(default).__name__} (default {default!r}), '
            f'got {type(value).__name__} {value!r}'
        )


def _merge_checked(default: Dict, user: Dict, path: str, free_form: Tuple[str, ...]) -> Dict:
    """Deep-merge ``user`` over ``default``; every user key must exist in ``default`` with a compatible type."""
    merged = copy.deepcopy(dict(default))
    for key, value in user.items():
        full = f'{path}.{key}' if path else key
        if full in free_form:  # another library's keys: shallow-merged here, checked by their owner
            base = default.get(key) or {}
            merged[key] = {**copy.deepcopy(base), **copy.deepcopy(value)}
            continue
        if key not in default:
            raise ConfigError(f'unknown config key {full!r}: {_nearest(key, default.keys())}')
        _check_type(full, value, default[key])
        if isinstance(default[key], dict) and isinstance(value, dict):
            merged[key] = _merge_checked(default[key], value, full, free_form)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _manager_config(user: Dict) -> EasyDict:
    """env.manager: 'type' plus the chosen DI-engine env manager's own keys, checked against its defaults."""
    from ding.envs.env_manager import get_env_manager_cls

    manager_type = user.get('type', 'subprocess')
    if manager_type not in _MANAGER_TYPES:
        raise ConfigError(f'unknown env.manager.type {manager_type!r}: choose one of {", ".join(_MANAGER_TYPES)}')
    default = get_env_manager_cls(EasyDict(type=manager_type)).default_config()
    default.pop('cfg_type', None)
    default['type'] = manager_type
    merged = EasyDict(_merge_checked(default, user, 'env.manager', ()))
    for key in ('step_timeout', 'reset_timeout'):  # DI-engine arms signal.alarm with them: whole seconds only
        value = merged.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ConfigError(f'env.manager.{key} must be None or a whole number of seconds >= 1, got {value!r}')
    return merged


def compile_config(main_config: Dict, create_config: Optional[Dict] = None) -> Tuple[EasyDict, EasyDict]:
    """User main_config/create_config -> complete, checked EasyDicts. Raises ConfigError on a bad config.
    Retired keys (RETIRED_KEYS) are dropped first, so that the config saved in an older checkpoint still compiles."""
    create = EasyDict(_merge_checked(default_create_config(), create_config or {}, 'create_config',
                                     ('create_config.env_manager', )))
    defaults = default_config()
    cfg = EasyDict(_merge_checked(defaults, drop_retired_keys(main_config or {}, defaults), '', FREE_FORM))
    # the manager is create_config.env_manager (DI-engine's convention: its type, maybe more keys) with env.manager
    # over it, so that a --set env.manager.type overrides the file's type
    cfg.env.manager = _manager_config({**create.env_manager, **(cfg.env.manager or {})})
    create.env_manager = EasyDict(type=cfg.env.manager.type)
    _check_consistency(cfg)
    _check_env(cfg, create)
    return cfg, create


def _check_env(cfg: EasyDict, create: EasyDict) -> None:
    """Build the env object once (lazy: no game starts) so that its own checks (preset, opponent...) run now."""
    from ding.utils import ENV_REGISTRY, import_module

    import_module(create.env.import_names)
    try:
        ENV_REGISTRY.get(create.env.type)(cfg.env)
    except ValueError as e:
        raise ConfigError(str(e)) from e


def _check_consistency(cfg: EasyDict) -> None:
    env, learn, collect = cfg.env, cfg.policy.learn, cfg.policy.collect
    for key in ('collector_env_num', 'evaluator_env_num', 'n_evaluator_episode'):
        if env[key] < 1:
            raise ConfigError(f'env.{key} must be >= 1, got {env[key]}')
    if collect.n_sample % env.collector_env_num != 0:
        raise ConfigError(
            f'policy.collect.n_sample ({collect.n_sample}) must be a multiple of env.collector_env_num '
            f'({env.collector_env_num})'
        )
    if not 1 <= learn.batch_size <= collect.n_sample:
        raise ConfigError(
            f'policy.learn.batch_size ({learn.batch_size}) must be between 1 and policy.collect.n_sample '
            f'({collect.n_sample})'
        )
    if learn.epoch_per_collect < 1:
        raise ConfigError(f'policy.learn.epoch_per_collect must be >= 1, got {learn.epoch_per_collect}')
    if env.stop_value is not None and (isinstance(env.stop_value, bool) or not 0 < env.stop_value <= 1):
        raise ConfigError(f'env.stop_value is a win rate: None or a number in (0, 1], got {env.stop_value!r}')
    _check_distributed(cfg)
    _check_league(cfg)


def _check_league(cfg: EasyDict) -> None:
    league = cfg.league
    if league.snapshot_every < 1 or not 0.0 <= league.self_play <= 1.0:
        raise ConfigError(f'league.snapshot_every must be >= 1 and league.self_play in [0, 1]; got '
                          f'{league.snapshot_every} and {league.self_play}')
    bad = [level for level in league.bot_levels if level not in BOT_LEVELS]
    if bad:
        raise ConfigError(f'league.bot_levels {bad} are not bot levels; allowed: {BOT_LEVELS}')
    if cfg.env.opponent not in POLICY_OPPONENTS:
        return
    if cfg.distributed.backend != 'local':
        raise ConfigError(f'env.opponent {cfg.env.opponent!r} runs with distributed.backend \'local\' (the opponents '
                          f'are played in the trainer process); got {cfg.distributed.backend!r}')


def _check_distributed(cfg: EasyDict) -> None:
    dist = cfg.distributed
    if dist.backend not in BACKENDS:
        raise ConfigError(f'unknown distributed.backend {dist.backend!r}: choose one of {", ".join(BACKENDS)}')
    if dist.backend != 'ray':
        return
    if not 1 <= dist.num_workers <= cfg.env.collector_env_num:
        raise ConfigError(
            f'distributed.num_workers ({dist.num_workers}) must be between 1 and env.collector_env_num '
            f'({cfg.env.collector_env_num}): each rollout worker runs at least one collector env'
        )
    if dist.num_cpus is not None and dist.num_cpus < 1:
        raise ConfigError(f'distributed.num_cpus must be None or >= 1, got {dist.num_cpus}')
    if dist.worker_cpus < 0:
        raise ConfigError(f'distributed.worker_cpus must be >= 0, got {dist.worker_cpus}')
    if importlib.util.find_spec('ray') is None:
        raise ConfigError("distributed.backend='ray' needs Ray, which is not installed: pip install -e '.[ray]'")


def parse_value(text: str) -> Any:
    """A --set value: a Python literal (1, 0.5, True, None, 'x', [1, 2], {'a': 1}); a bare word is a string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def apply_overrides(main_config: Dict, overrides: List[str]) -> Dict:
    """Apply ``KEY=VALUE`` strings, KEY a dotted path into main_config (e.g. policy.learn.batch_size=512).

    The path is checked against the defaults, so a typo fails here with the nearest valid keys.
    """
    main_config = copy.deepcopy(main_config)
    defaults = default_config()
    for item in overrides:
        if '=' not in item:
            raise ConfigError(f'--set expects KEY=VALUE, got {item!r}')
        path, text = item.split('=', 1)
        keys = path.strip().split('.')
        node, default = main_config, defaults
        for depth, key in enumerate(keys):
            prefix = '.'.join(keys[:depth + 1])
            free = any(prefix.startswith(section + '.') for section in FREE_FORM)
            if not free and (not isinstance(default, dict) or key not in default):
                allowed = default.keys() if isinstance(default, dict) else []
                raise ConfigError(f'unknown config key {prefix!r}: {_nearest(key, allowed)}')
            if depth == len(keys) - 1:
                node[key] = parse_value(text)
            else:
                node = node.setdefault(key, {})
                default = default.get(key, {}) if isinstance(default, dict) else {}
    return main_config


def load_config_file(path: str) -> Tuple[Dict, Dict]:
    """Read ``main_config`` and ``create_config`` from a Python file (other files in its folder importable)."""
    if not os.path.isfile(path):
        raise ConfigError(f'config file not found: {path}')
    folder = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, folder)
    try:
        namespace = runpy.run_path(path)
    finally:
        sys.path.remove(folder)
    if 'main_config' not in namespace:
        raise ConfigError(f'config file {path} defines no main_config')
    return namespace['main_config'], namespace.get('create_config', {})
