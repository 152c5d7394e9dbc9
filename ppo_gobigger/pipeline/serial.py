"""The training loop, in the shape of DI-engine's serial_pipeline_onpolicy: eval if due -> collect -> learn -> stop?"""
import copy
import json
import logging
import os
import random
import shutil
import tempfile
import time
from typing import Dict, Optional, Tuple

import numpy as np
import torch
from easydict import EasyDict

from ..config import ConfigError, compile_config
from .checkpoint import load_checkpoint, rng_state, set_rng_state
from .collector import RolloutCollector
from .evaluator import Evaluator, format_report
from .env_manager import build_env_managers, close_env_manager
from .interrupt import InterruptGuard, TrainingInterrupted
from .learner import Learner
from .pretrain import pretrain
from .monitor import TrainingMonitor

logger = logging.getLogger('ppo_gobigger')
MIN_FREE_DISK_MB = 200  # free disk an experiment folder needs at the start (a checkpoint is ~1 MB at default size)


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


def check_exp_dir(exp_dir: str) -> None:
    """Fail now, not an hour in: the experiment folder must be writable and its disk must have room."""
    try:
        os.makedirs(exp_dir, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=exp_dir):
            pass
    except OSError as e:
        raise ConfigError(f'experiment folder {exp_dir!r} is not writable: {e}') from e
    free_mb = shutil.disk_usage(exp_dir).free / 2**20
    if free_mb < MIN_FREE_DISK_MB:
        raise ConfigError(
            f'only {free_mb:.0f} MB free for experiment folder {exp_dir!r}; checkpoints and logs need at least '
            f'{MIN_FREE_DISK_MB} MB'
        )


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
    checkpoint path: model, optimizer, value-norm statistics, counters, random generators and each collector
    env's game sequence continue from it. ``progress`` shows a progress bar (None: only on a terminal).
    SIGINT/SIGTERM stop the run at a safe point with a checkpoint; TrainingInterrupted says where it is.
    """
    main_config = copy.deepcopy(main_config)
    for key, value in (('seed', seed), ('max_env_step', max_env_step), ('max_train_iter', max_train_iter)):
        if value is not None:
            main_config[key] = value
    cfg, create_cfg = compile_config(main_config, create_config)
    payload = load_checkpoint(resume) if resume else None  # a bad checkpoint fails before anything is written
    exp_dir = cfg.exp_name
    check_exp_dir(exp_dir)
    with open(os.path.join(exp_dir, 'total_config.json'), 'w') as f:
        json.dump(cfg, f, indent=2, default=str)
    # Few threads while the env processes run (threads fighting them for the cores made a forward pass 100x
    # slower here); the learner takes every core while they wait (Learner.train).
    torch.set_num_threads(cfg.policy.torch_threads)
    set_global_seed(cfg.seed)

    episodes_played = payload.get('collector_episodes') if payload else None  # None: interrupted before any
    if episodes_played is not None and len(episodes_played) != cfg.env.collector_env_num:
        logger.warning(f'the checkpoint had {len(episodes_played)} collector envs, this run has '
                       f'{cfg.env.collector_env_num}: their games start from the beginning of the sequence')
        episodes_played = None
    collector_env, evaluator_env = build_env_managers(cfg, create_cfg, first_episodes=episodes_played)
    policy, model = build_policy(cfg, create_cfg)
    learner = Learner(policy.learn_mode, model, exp_dir, cfg)
    if payload:
        learner.restore(payload, resume)
        set_rng_state(payload['rng'])
    monitor = TrainingMonitor(exp_dir, cfg.max_env_step, progress, cfg.replay)
    guard = InterruptGuard()
    report = {}
    # what a checkpoint holds besides the learner: taken after each PPO iteration, so that a checkpoint written
    # later (at an evaluation, or on a signal in the middle of collecting) resumes exactly from that iteration
    learned_envstep = payload['envstep'] if payload else 0
    resume_state = {'rng': rng_state(), 'collector_episodes': episodes_played}

    def save_and_evaluate(envstep: int) -> Dict:
        report = evaluator.eval(learner.train_iter, envstep)
        ckpt = learner.save(envstep, resume_state)
        best = learner.save_if_best(report['reward_mean'], envstep, resume_state)
        logger.info(f'evaluation at envstep {envstep}\n{format_report(report)}')
        monitor.on_eval(report, ckpt if best else None)
        return report

    try:
        with guard:
            demo_envstep = 0
            if payload is None and cfg.pretrain.env_steps > 0:
                stats = pretrain(policy, cfg, create_cfg)
                demo_envstep = learned_envstep = stats['env_steps']
                learner.log(dict(envstep=demo_envstep, kickstart=True, **stats))
                resume_state = {'rng': rng_state(), 'collector_episodes': episodes_played}
            collector_env.seed(cfg.seed, dynamic_seed=True)
            collector_env.launch()
            evaluator_env.launch()
            collector = RolloutCollector(collector_env, policy.collect_mode, cfg.policy.collect.n_sample)
            collector.envstep = learned_envstep  # a resumed run's, or the demonstration games' env steps
            if episodes_played is not None:
                collector.env_episodes = list(episodes_played)
            resume_state['collector_episodes'] = list(collector.env_episodes)
            evaluator = Evaluator(
                evaluator_env, policy.eval_mode, cfg.env.n_evaluator_episode, cfg.seed,
                os.path.join(exp_dir, 'evaluator.jsonl')
            )
            eval_freq = cfg.policy.eval.evaluator.eval_freq
            last_eval = None
            start = time.time()
            while True:
                if last_eval is None or collector.envstep - last_eval >= eval_freq:
                    report = save_and_evaluate(collector.envstep)
                    last_eval = collector.envstep
                    if cfg.env.stop_value is not None and report['reward_mean'] >= cfg.env.stop_value:
                        logger.info(f'reward_mean {report["reward_mean"]:.3f} >= stop_value {cfg.env.stop_value}')
                        break
                if cfg.max_env_step is not None and collector.envstep >= cfg.max_env_step:
                    break
                if cfg.max_train_iter is not None and learner.train_iter >= cfg.max_train_iter:
                    break
                rollout = collector.collect()
                learn_start = time.time()
                with guard.critical():  # a signal here waits for the updates and the counters to be complete
                    done_fraction = collector.envstep / cfg.max_env_step if cfg.max_env_step else 0.0
                    stats = learner.train(rollout, collector.envstep, done_fraction, collector.info())
                    learned_envstep = collector.envstep
                    resume_state = {'rng': rng_state(), 'collector_episodes': list(collector.env_episodes)}
                learn_time = time.time() - learn_start
                episodes = list(collector.recent_episodes)
                sps = int(rollout['valid'].sum()) / (collector.last_collect_time + learn_time)
                logger.info(
                    f'iter {learner.train_iter} envstep {collector.envstep} sps {sps:.0f} '
                    f'(collect {collector.last_collect_time:.1f}s learn {learn_time:.1f}s) '
                    f'policy_loss {stats["policy_loss"]:.4f} value_loss {stats["value_loss"]:.4f} '
                    f'entropy {stats["entropy"]:.3f} approx_kl {stats["approx_kl"]:.4f} '
                    f'clipfrac {stats["clipfrac"]:.3f} ev {stats["explained_variance"]:.3f} '
                    + (f'train_return {np.mean([e["eval_episode_return"] for e in episodes]):.2f} '
                       if episodes else '') + f'elapsed {time.time() - start:.0f}s'
                )
                monitor.on_iteration(collector.envstep, learner.train_iter, stats, sps, episodes)
            if last_eval != collector.envstep:  # the final state is always evaluated and saved
                report = save_and_evaluate(collector.envstep)
    except TrainingInterrupted as e:
        e.checkpoint = learner.save(learned_envstep, resume_state)
        logger.error(f'{e.signal_name}: stopped; the state after the last PPO iteration is in {e.checkpoint}')
        raise
    finally:
        monitor.close()
        close_env_manager(collector_env)
        close_env_manager(evaluator_env)
    return policy, report
