"""DI-engine 0.5's middleware pipeline (ding.framework.task) on our env and policy, as DI-engine's ding/example/ppo.py
builds it, with one middleware of ours in place of DI-engine's gae_estimator:

    task.use(interaction_evaluator(cfg, policy.eval_mode, evaluator_env))   DI-engine's
    task.use(StepCollector(cfg, policy.collect_mode, collector_env))        DI-engine's
    task.use(train_samples(policy.collect_mode))                            ours, below
    task.use(multistep_trainer(policy.learn_mode, log_freq=...))            DI-engine's
    task.use(CkptSaver(policy, cfg.exp_name, train_freq=...))               DI-engine's

with policy = GoBiggerPPOCommandModePolicy (policy/ding_modes.py). DI-engine's gae_estimator cannot take our team's
values: it computes GAE with ding.rl_utils.gae, which multiplies next_value (N, A) in place by 1 - done (N,) and
fails on the broadcast (N, A) x (N,) ("The size of tensor a (A) must match the size of tensor b (N)"), and it reads
policy.collect.discount_factor / gae_lambda, which our policy keeps under policy.learn. train_samples hands the
collected trajectories to the policy's own _get_train_sample instead (GAE is computed in learn, as in our pipeline).

Importing ding.framework.middleware imports wandb; with the protobuf this package's DI-engine resolves (4.x or
later) wandb 0.12's generated code fails at import ("Descriptors cannot be created directly") unless
PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python is set before the import.
"""
import copy
from functools import partial
from typing import Any, Callable, Dict, List, Optional

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


def middleware_pipeline(main_config: Dict, create_config: Dict, seed: int = 0, max_env_step: int = int(1e10),
                        on_step: Optional[Callable] = None) -> List[Dict[str, float]]:
    """Train with DI-engine's task and middleware, as ding/example/ppo.py does (one process, BaseEnvManagerV2).
    Checkpoints go to <exp_name>/ckpt (DI-engine's CkptSaver, every iteration). ``on_step(ctx)`` runs after each
    iteration's training. Returns each iteration's learn figures.

    What DI-engine's compile_config needs beyond our config is filled in here: create_config.env_manager (the
    'base_v2' manager this pipeline runs) and a number for env.stop_value (ours: None, never stop)."""
    from ding.config import compile_config
    from ding.envs import BaseEnvManagerV2
    from ding.framework import ding_init, task
    from ding.framework.context import OnlineRLContext
    from ding.framework.middleware import (CkptSaver, StepCollector, interaction_evaluator, multistep_trainer,
                                           termination_checker)
    from ding.utils import set_pkg_seed

    from ..envs.gobigger_env import GoBiggerPPOEnv
    from ..policy.ding_modes import GoBiggerPPOCommandModePolicy
    from .build import build_model

    create_config = EasyDict(copy.deepcopy(dict(create_config)))
    create_config.policy.type = 'gobigger_ppo_command'
    create_config.env_manager = EasyDict(type='base_v2')
    main_config = EasyDict(copy.deepcopy(dict(main_config)))
    if main_config.env.get('stop_value') is None:
        main_config.env.stop_value = float('inf')
    cfg = compile_config(main_config, create_cfg=create_config, auto=True, seed=seed, save_cfg=False)
    ding_init(cfg)
    outputs: List[Dict[str, float]] = []

    def record(ctx) -> None:
        outputs.extend(ctx.train_output or [])
        if on_step is not None:
            on_step(ctx)

    with task.start(async_mode=False, ctx=OnlineRLContext()):
        collector_env, evaluator_env = (
            BaseEnvManagerV2([partial(GoBiggerPPOEnv, c) for c in configs], cfg.env.manager)
            for configs in (GoBiggerPPOEnv.create_collector_env_cfg(cfg.env),
                            GoBiggerPPOEnv.create_evaluator_env_cfg(cfg.env))
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
