"""DI-engine's stock PPO on our env, as the baseline our PPO is measured against (docs/di-engine.md).

    stock_configs()    a config of DI-engine's own policy 'ppo' (config/ding_mappo_config.py, ding_ppo_config.py),
                       checked key by key against DI-engine's defaults, with the model's input and output sizes
                       filled in from the env ('gobigger_ding', envs/ding_adapter.py)
    train_stock()      ding.entry.serial_pipeline_onpolicy on it, as it is: DI-engine's PPOPolicy, MAVAC or VAC,
                       collector, learner, evaluator and checkpoints (<exp_name>/ckpt/iteration_N.pth.tar);
                       resume=True goes on from the latest checkpoint with DI-engine's own resume_training
    play_stock()       a checkpoint of such a run on our evaluator's games (greedy: PPOPolicy's eval mode, argmax),
                       the report of evaluate() with each game's outcome

What DI-engine does not do and is done here: it accepts unknown keys silently (a typo in a config would be ignored),
it saves no value normalisation in its checkpoints (a resumed run starts RunningMeanStd again) and its collector envs
restart their game sequence when resumed (here they go on after the games already played: env.first_episode is
set to the checkpoint's env step, an upper bound of the games any env played).
"""
import copy
import glob
import inspect
import logging
import os
import re
from typing import Any, Dict, List, Optional, Tuple

import torch
from easydict import EasyDict

from ..config import ConfigError, parse_value
from .ding_pipelines import ding_configs, serial_onpolicy

logger = logging.getLogger('ppo_gobigger')

STOCK_POLICY = 'ppo'  # DI-engine's PPOPolicy (ding/policy/ppo.py)
ENV_TYPE = 'gobigger_ding'  # envs/ding_adapter.py
MODELS = {'mavac': ('ding.model.template.mavac', 'MAVAC'), 'vac': ('ding.model.template.vac', 'VAC')}
TOP_LEVEL_KEYS = ('exp_name', 'seed', 'max_env_step')  # max_env_step: read by gobigger-ding and the benchmark
FREE_FORM = ('env.custom_cfg', 'env.manager')  # GoBigger's and the env manager's own keys
EXTRA_KEYS = ('policy.collect.n_sample', 'policy.collect.n_episode')  # PPOPolicy reads them; its defaults omit them


def is_stock(create_config: Dict) -> bool:
    """Whether a config runs DI-engine's stock PPO (policy type 'ppo') rather than ours ('gobigger_ppo')."""
    return create_config.get('policy', {}).get('type') == STOCK_POLICY


def apply_stock_overrides(main_config: Dict, overrides: List[str]) -> Dict:
    """``KEY=VALUE`` strings applied to a copy of ``main_config`` (keys are checked by stock_configs())."""
    main_config = copy.deepcopy(main_config)
    for item in overrides:
        if '=' not in item:
            raise ConfigError(f'--set expects KEY=VALUE, got {item!r}')
        path, text = item.split('=', 1)
        *parents, key = path.strip().split('.')
        node = main_config
        for parent in parents:
            node = node.setdefault(parent, {})
        node[key] = parse_value(text)
    return main_config


def _ding_defaults(create_config: EasyDict) -> EasyDict:
    """DI-engine's compiled defaults for this policy, env and env manager: every key a user may set."""
    from ding.config import compile_config

    return compile_config(EasyDict(env={}, policy={}), create_cfg=copy.deepcopy(create_config), auto=True,
                          save_cfg=False)


def _check_keys(user: Dict, defaults: Dict, path: str = '') -> None:
    for key, value in user.items():
        dotted = f'{path}{key}'
        if dotted in FREE_FORM or dotted in EXTRA_KEYS or dotted == 'policy.model':
            continue
        if key not in defaults:
            allowed = sorted(k for k in defaults if k != 'cfg_type')
            raise ConfigError(f'unknown config key {dotted!r} for DI-engine\'s {STOCK_POLICY!r} on {ENV_TYPE!r}; '
                              f'allowed here: {allowed}')
        if isinstance(value, dict) and isinstance(defaults[key], dict):
            _check_keys(value, defaults[key], dotted + '.')


def _model_shapes(main_config: EasyDict) -> Tuple[str, Dict[str, int]]:
    """(obs format, the model keys the env decides) for this config's env."""
    from ..envs.ding_adapter import GoBiggerDingEnv, model_shapes

    env = GoBiggerDingEnv({k: v for k, v in main_config.env.items() if k != 'manager'})  # no game until reset()
    obs_format = env.config['obs_format'] if 'obs_format' not in main_config.env else main_config.env.obs_format
    return obs_format, model_shapes(obs_format, env.player_num)


def stock_configs(main_config: Dict, create_config: Dict) -> Tuple[EasyDict, EasyDict]:
    """Checked copies of a stock PPO config: every key one DI-engine reads (a typo is an error naming the allowed
    keys), env.obs_format matching policy.multi_agent (mavac: MAPPO, vac: independent PPO), and the model's input and
    output sizes set from the env (given ones must agree)."""
    main_config = EasyDict(copy.deepcopy(dict(main_config)))
    create_config = EasyDict(copy.deepcopy(dict(create_config)))
    if not is_stock(create_config) or create_config.get('env', {}).get('type') != ENV_TYPE:
        raise ConfigError(f'a stock config has create_config policy type {STOCK_POLICY!r} and env type {ENV_TYPE!r}; '
                          f'got {create_config.get("policy", {}).get("type")!r} and '
                          f'{create_config.get("env", {}).get("type")!r}')
    top = set(main_config) - {'env', 'policy', *TOP_LEVEL_KEYS}
    if top:
        raise ConfigError(f'unknown top-level config keys {sorted(top)}; allowed: env, policy, '
                          f'{", ".join(TOP_LEVEL_KEYS)}')
    manager = main_config.get('env', {}).get('manager', {}).get('type', 'subprocess')
    defaults = _ding_defaults(ding_configs(main_config, create_config, manager)[1])
    _check_keys({k: main_config[k] for k in ('env', 'policy') if k in main_config}, defaults)
    obs_format, shapes = _model_shapes(main_config)
    multi_agent = main_config.policy.get('multi_agent', False)
    if multi_agent != (obs_format == 'mavac'):
        raise ConfigError(f'env.obs_format {obs_format!r} with policy.multi_agent={multi_agent}: MAVAC '
                          "(multi_agent=True) takes obs_format 'mavac', VAC (multi_agent=False) takes 'vac'")
    model = main_config.policy.setdefault('model', EasyDict())
    module, name = MODELS[obs_format]
    allowed = [p for p in inspect.signature(getattr(__import__(module, fromlist=[name]), name)).parameters
               if p != 'self']
    unknown = sorted(set(model) - set(allowed))
    if unknown:
        raise ConfigError(f'unknown policy.model keys {unknown} for DI-engine\'s {name}; allowed: {allowed}')
    for key, size in shapes.items():
        if model.get(key, size) != size:
            raise ConfigError(f'policy.model.{key}={model[key]!r}, but the env gives {size} (leave it out: it is set '
                              f'from env.obs_format {obs_format!r} and the preset)')
        model[key] = size
    return main_config, create_config


def latest_checkpoint(exp_dir: str) -> Optional[str]:
    """The ckpt/iteration_N.pth.tar of ``exp_dir`` with the largest N, or None."""
    found = [(int(m.group(1)), p) for p in glob.glob(os.path.join(exp_dir, 'ckpt', 'iteration_*.pth.tar'))
             if (m := re.search(r'iteration_(\d+)\.pth\.tar$', p))]
    return max(found)[1] if found else None


def train_stock(main_config: Dict, create_config: Dict, seed: int, max_env_step: int, resume: bool = False,
                torch_threads: int = 1) -> str:
    """Train with ding.entry.serial_pipeline_onpolicy up to ``max_env_step`` env steps; its experiment folder
    (exp_name, relative to the working directory, as DI-engine writes it) gets ckpt/, log/ and total_config.py.
    ``resume``: go on from its latest checkpoint if there is one (else a fresh run). ``torch_threads``: DI-engine's
    loop leaves torch's threads as they are, and many of them fight the env processes for the cores. Returns the
    latest checkpoint."""
    main_config, create_config = stock_configs(main_config, create_config)
    exp_dir = main_config.exp_name
    checkpoint = latest_checkpoint(exp_dir) if resume else None
    if checkpoint is not None:
        last_step = int(torch.load(checkpoint, map_location='cpu', weights_only=False).get('last_step', 0))
        if last_step >= max_env_step:  # DI-engine's loop would collect and learn once more before its check
            logger.info(f'{checkpoint} is at env step {last_step} >= {max_env_step}: trained already')
            return checkpoint
        main_config.policy.learn.resume_training = True  # DI-engine's: keep the folder, count on from last_step
        main_config.policy.learn.setdefault('learner', EasyDict()).setdefault('hook', EasyDict())
        main_config.policy.learn.learner.hook.load_ckpt_before_run = checkpoint
        main_config.env.first_episode = last_step  # no collector env replays a game it played before
    threads = torch.get_num_threads()
    torch.set_num_threads(torch_threads)
    try:
        serial_onpolicy(main_config, create_config, seed=seed, max_env_step=max_env_step)
    except UnboundLocalError as e:
        # serial_pipeline_onpolicy writes result.pkl from its last evaluation after the last checkpoint is saved;
        # a resumed session that ran none (resumed fewer than eval_freq iterations after the last one) ends here
        if 'eval_info' not in str(e):
            raise
        logger.warning('DI-engine wrote no result.pkl: no evaluation in this session (its checkpoints are written)')
    finally:
        torch.set_num_threads(threads)
    return latest_checkpoint(exp_dir)


def play_stock(ckpt: str, main_config: Dict, create_config: Dict, episodes: int, seed: int,
               progress: Optional[bool] = False) -> Dict[str, Any]:
    """``ckpt``'s model (DI-engine's checkpoint: state_dict['model']) played greedily on ``episodes`` evaluation
    games of env seed ``seed`` by our Evaluator (the games evaluate() plays for a config with the same
    evaluator_env_num): its report with each game's outcome under 'games'."""
    from ding.config import compile_config
    from ding.policy import create_policy

    from .build import set_global_seed
    from .play.env_manager import build_env_managers, close_env_manager
    from .play.evaluator import Evaluator

    if not os.path.isfile(ckpt):
        raise ConfigError(f'no checkpoint {ckpt}')
    main_config, create_config = stock_configs(main_config, create_config)
    manager = main_config.env.get('manager', {}).get('type', 'subprocess')
    main_config, create_config = ding_configs(main_config, create_config, manager)
    cfg = compile_config(main_config, create_cfg=create_config, auto=True, seed=seed, save_cfg=False)
    set_global_seed(seed)
    policy = create_policy(cfg.policy, enable_field=['eval'])
    payload = torch.load(ckpt, map_location='cpu', weights_only=False)
    policy.eval_mode.load_state_dict({'model': payload['model']})  # strict: a model of another config fails here
    _, evaluator_env = build_env_managers(cfg, create_config, collect=False)
    try:
        evaluator_env.launch()
        evaluator = Evaluator(evaluator_env, policy.eval_mode, episodes, seed, progress=progress)
        report = evaluator.eval(int(payload.get('last_iter', 0)), int(payload.get('last_step', 0)))
        return dict(report, games=evaluator.games)
    finally:
        close_env_manager(evaluator_env)
