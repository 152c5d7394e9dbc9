"""DI-engine's own pipelines on our env and policy (GoBiggerPPOCommandModePolicy, policy/ding_modes.py).

    serial_onpolicy()       ding.entry.serial_pipeline_onpolicy, DI-engine's serial entry, as it is
    middleware_pipeline()   DI-engine 0.5's ding.framework task, as its ding/example/ppo.py builds it:
        task.use(interaction_evaluator(cfg, policy.eval_mode, evaluator_env))   DI-engine's
        task.use(StepCollector(cfg, policy.collect_mode, collector_env))        DI-engine's
        task.use(train_samples(policy.collect_mode))                            ours, below
        task.use(multistep_trainer(policy.learn_mode, log_freq=1))              DI-engine's
        task.use(CkptSaver(policy, cfg.exp_name, train_freq=1))                DI-engine's

Both take our (main_config, create_config) as they are: a config file in DI-engine's convention (create_config names
the env manager; config/gobigger_ppo_vs_bots_config.py) runs under ding.entry.serial_pipeline_onpolicy itself too.
ding_configs() only carries a --set of env.manager.type into create_config.env_manager, and an env.stop_value of None
(ours: never stop) over as inf (DI-engine's evaluators compare the reward with it). Opponents played by policies
('self', 'league') are refused by the env's create_collector_env_cfg: DI-engine's collectors play one action per env.

train_samples replaces DI-engine's gae_estimator, which cannot take our team's values: it computes GAE with
ding.rl_utils.gae, which multiplies next_value (N, A) in place by 1 - done (N,) and fails on the broadcast ("The
size of tensor a (A) must match the size of tensor b (N)"), and it reads policy.collect.discount_factor /
gae_lambda, which our policy keeps under policy.learn. train_samples hands the collected trajectories to the
policy's own _get_train_sample instead (GAE is computed in learn, as in our pipeline).

Importing ding.framework.middleware imports wandb; with the protobuf this package's DI-engine resolves (4.x or
later) wandb 0.12's generated code fails at import ("Descriptors cannot be created directly") unless
PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python is set before anything imports protobuf (gobigger-ding sets it).
"""
import copy
import warnings
from functools import partial
from typing import Any, Callable, Dict, List, Optional, Tuple

import treetensor.torch as ttorch
from easydict import EasyDict
from ding.utils.data import ttorch_collate


def train_samples(policy: Any) -> Callable:
    """The middleware: ctx.trajectories (StepCollector's, each env's transitions in order; trajectory_end_idx marks
    where each ends) -> ctx.train_data, the policy's train samples stacked {key: (T, ...)}.

    policy: the policy's collect_mode (its get_train_sample bootstraps a trajectory cut inside a game)."""

    def _train_samples(ctx) -> None:
        samples, start = [], 0
        for end in ctx.trajectory_end_idx:
            samples += policy.get_train_sample(ctx.trajectories[start:end + 1])
            start = end + 1
        ctx.train_data = ttorch_collate([ttorch.as_tensor(s) for s in samples])  # the trainer moves it with .to()

    return _train_samples


def ding_configs(main_config: Dict, create_config: Dict, manager: Optional[str] = None) -> Tuple[EasyDict, EasyDict]:
    """Copies of our configs as DI-engine's compile_config takes them: create_config.env_manager's type is
    ``manager`` when given, else env.manager.type where a user set it, else the config's own (subprocess if none);
    an env.stop_value of None becomes inf."""
    main_config = EasyDict(copy.deepcopy(dict(main_config)))
    create_config = EasyDict(copy.deepcopy(dict(create_config)))
    env = main_config.setdefault('env', EasyDict())
    manager = manager or env.get('manager', {}).get('type') or create_config.get('env_manager', {}).get('type')
    create_config.env_manager = EasyDict(type=manager or 'subprocess')
    if 'stop_value' in env and env.stop_value is None:
        env.stop_value = float('inf')
    return main_config, create_config


def serial_onpolicy(main_config: Dict, create_config: Dict, seed: int = 0, max_env_step: int = int(1e10)):
    """DI-engine's serial_pipeline_onpolicy on our config (see ding_configs). It writes <exp_name>/ckpt, log/ and
    total_config.py in the working directory. Returns the policy."""
    from ding.entry import serial_pipeline_onpolicy

    with warnings.catch_warnings():  # its compile_config imports yapf, which imports the deprecated lib2to3
        warnings.filterwarnings('ignore', message='lib2to3 package is deprecated', category=DeprecationWarning)
        return serial_pipeline_onpolicy(ding_configs(main_config, create_config), seed=seed,
                                        max_env_step=max_env_step)


def middleware_pipeline(main_config: Dict, create_config: Dict, seed: int = 0, max_env_step: int = int(1e10),
                        on_step: Optional[Callable] = None) -> List[Dict[str, float]]:
    """Train with DI-engine's task and middleware, as ding/example/ppo.py does (one process, BaseEnvManagerV2).
    Checkpoints go to <exp_name>/ckpt (DI-engine's CkptSaver, every iteration). ``on_step(ctx)`` runs after each
    iteration's training. Returns each iteration's learn figures."""
    from ding.config import compile_config
    from ding.envs import BaseEnvManagerV2
    from ding.framework import ding_init, task
    from ding.framework.context import OnlineRLContext
    from ding.framework.middleware import (CkptSaver, StepCollector, interaction_evaluator, multistep_trainer,
                                           termination_checker)
    from ding.utils import set_pkg_seed

    from ..envs.gobigger_env import GoBiggerEnv
    from ..policy.ding_modes import GoBiggerPPOCommandModePolicy
    from .build import build_model

    main_config, create_config = ding_configs(main_config, create_config, 'base_v2')
    create_config.policy.type += '_command'  # as DI-engine's serial entries look it up
    cfg = compile_config(main_config, create_cfg=create_config, auto=True, seed=seed, save_cfg=False)
    ding_init(cfg)
    outputs: List[Dict[str, float]] = []

    def record(ctx) -> None:
        outputs.extend(ctx.train_output or [])
        if on_step is not None:
            on_step(ctx)

    with task.start(async_mode=False, ctx=OnlineRLContext()):
        collector_env, evaluator_env = (
            BaseEnvManagerV2([partial(GoBiggerEnv, c) for c in configs], cfg.env.manager)
            for configs in (GoBiggerEnv.create_collector_env_cfg(cfg.env),
                            GoBiggerEnv.create_evaluator_env_cfg(cfg.env))
        )
        collector_env.seed(cfg.seed)
        evaluator_env.seed(cfg.seed, dynamic_seed=False)
        set_pkg_seed(cfg.seed, use_cuda=cfg.policy.cuda)
        policy = GoBiggerPPOCommandModePolicy(cfg.policy, model=build_model(cfg))
        task.use(interaction_evaluator(cfg, policy.eval_mode, evaluator_env))
        task.use(StepCollector(cfg, policy.collect_mode, collector_env))
        task.use(train_samples(policy.collect_mode))
        task.use(multistep_trainer(policy.learn_mode, log_freq=1))
        task.use(record)
        task.use(CkptSaver(policy, cfg.exp_name, train_freq=1))
        task.use(termination_checker(max_env_step=max_env_step))
        task.run()
    return outputs
