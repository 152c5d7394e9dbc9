"""The training loop, in the shape of DI-engine's serial_pipeline_onpolicy: eval if due -> collect -> learn -> stop?"""
import copy
import json
import logging
import os
import random
import time
from typing import Dict, Optional, Tuple

import numpy as np
import torch
from easydict import EasyDict

from ..config import compile_config
from .collector import RolloutCollector
from .evaluator import Evaluator, format_report
from .env_manager import build_env_managers, close_env_manager
from .learner import Learner
from .monitor import TrainingMonitor

logger = logging.getLogger('ppo_gobigger')


def set_global_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def build_policy(cfg: EasyDict, create_cfg: EasyDict, enable_field=None):
    from ding.utils import POLICY_REGISTRY, import_module

    from ..model import GoBiggerPPoModel

    import_module(create_cfg.policy.import_names)
    model = GoBiggerPPoModel(**cfg.policy.model)
    policy = POLICY_REGISTRY.get(create_cfg.policy.type)(cfg.policy, model=model, enable_field=enable_field)
    return policy, model


def train(
        main_config: Dict,
        create_config: Optional[Dict] = None,
        seed: Optional[int] = None,
        max_env_step: Optional[int] = None,
        max_train_iter: Optional[int] = None,
        resume: Optional[str] = None,
        progress: Optional[bool] = None,
) -> Tuple[object, Dict]:
    """Train a team with PPO; returns (policy, last evaluator report).

    Arguments override the config's seed, max_env_step and max_train_iter when given. ``resume`` is a
    checkpoint path: model, optimizer, value-norm statistics and counters continue from it. ``progress`` shows
    a progress bar (None: only on a terminal).
    """
    main_config = copy.deepcopy(main_config)
    for key, value in (('seed', seed), ('max_env_step', max_env_step), ('max_train_iter', max_train_iter)):
        if value is not None:
            main_config[key] = value
    cfg, create_cfg = compile_config(main_config, create_config)
    exp_dir = cfg.exp_name
    os.makedirs(exp_dir, exist_ok=True)
    with open(os.path.join(exp_dir, 'total_config.json'), 'w') as f:
        json.dump(cfg, f, indent=2, default=str)
    set_global_seed(cfg.seed)

    collector_env, evaluator_env = build_env_managers(cfg, create_cfg)
    policy, model = build_policy(cfg, create_cfg)
    learner = Learner(policy.learn_mode, model, exp_dir, cfg)
    monitor = TrainingMonitor(exp_dir, cfg.max_env_step, progress, cfg.replay)
    report = {}
    try:
        collector_env.seed(cfg.seed, dynamic_seed=True)
        collector_env.launch()
        evaluator_env.launch()
        collector = RolloutCollector(collector_env, policy.collect_mode, cfg.policy.collect.n_sample)
        evaluator = Evaluator(
            evaluator_env, policy.eval_mode, cfg.env.n_evaluator_episode, cfg.seed,
            os.path.join(exp_dir, 'evaluator.jsonl')
        )
        if resume:
            collector.envstep = learner.resume(resume)
        eval_freq = cfg.policy.eval.evaluator.eval_freq
        last_eval = None
        start = time.time()
        while True:
            if last_eval is None or collector.envstep - last_eval >= eval_freq:
                report = evaluator.eval(learner.train_iter, collector.envstep)
                last_eval = collector.envstep
                ckpt = learner.save(collector.envstep)
                best = learner.save_if_best(report['reward_mean'], collector.envstep)
                logger.info(f'evaluation at envstep {collector.envstep}\n{format_report(report)}')
                monitor.on_eval(report, ckpt if best else None)
                if cfg.env.stop_value is not None and report['reward_mean'] >= cfg.env.stop_value:
                    logger.info(f'reward_mean {report["reward_mean"]:.3f} >= stop_value {cfg.env.stop_value}: done')
                    break
            if cfg.max_env_step is not None and collector.envstep >= cfg.max_env_step:
                break
            if cfg.max_train_iter is not None and learner.train_iter >= cfg.max_train_iter:
                break
            rollout = collector.collect()
            learn_start = time.time()
            done_fraction = collector.envstep / cfg.max_env_step if cfg.max_env_step else 0.0
            stats = learner.train(rollout, collector.envstep, done_fraction)
            learn_time = time.time() - learn_start
            episodes = list(collector.recent_episodes)
            sps = int(rollout['valid'].sum()) / (collector.last_collect_time + learn_time)
            logger.info(
                f'iter {learner.train_iter} envstep {collector.envstep} sps {sps:.0f} '
                f'(collect {collector.last_collect_time:.1f}s learn {learn_time:.1f}s) '
                f'policy_loss {stats["policy_loss"]:.4f} value_loss {stats["value_loss"]:.4f} '
                f'entropy {stats["entropy"]:.3f} approx_kl {stats["approx_kl"]:.4f} '
                f'clipfrac {stats["clipfrac"]:.3f} ev {stats["explained_variance"]:.3f} '
                + (f'train_return {np.mean([e["eval_episode_return"] for e in episodes]):.2f} ' if episodes else '')
                + f'elapsed {time.time() - start:.0f}s'
            )
            monitor.on_iteration(collector.envstep, learner.train_iter, stats, sps, episodes)
        # the final state is always evaluated and saved
        if last_eval != collector.envstep:
            report = evaluator.eval(learner.train_iter, collector.envstep)
            ckpt = learner.save(collector.envstep)
            best = learner.save_if_best(report['reward_mean'], collector.envstep)
            logger.info(f'final evaluation at envstep {collector.envstep}\n{format_report(report)}')
            monitor.on_eval(report, ckpt if best else None)
    finally:
        monitor.close()
        close_env_manager(collector_env)
        close_env_manager(evaluator_env)
    return policy, report
