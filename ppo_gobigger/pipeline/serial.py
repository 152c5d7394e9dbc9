"""The training loop, in the shape of DI-engine's serial_pipeline_onpolicy: eval if due -> collect -> learn -> stop?

The loop is the same for every backend; what collects the rollouts and plays the evaluations differs:
    distributed.backend 'local'  env managers of this process (distributed/local.py)
    distributed.backend 'ray'    rollout worker and evaluator actors of a Ray cluster (distributed/ray_actors.py)
    torchrun, N ranks           each rank runs this loop on its share of the envs; gradients averaged
                                (distributed/torchrun.py)
"""
import copy
import logging
import os
import time
from typing import Dict, Optional, Tuple

import numpy as np
import torch
from easydict import EasyDict

from ..config import ConfigError, compile_config
from ..envs.opponents import POLICY_OPPONENTS
from ..files import write_json
from .build import build_model, build_policy, check_exp_dir, set_global_seed
from .distributed.local import LocalWorkers
from .distributed.torchrun import (Rank, broadcast_module, decide, learn_together, process_group, rank_config,
                                   rank_from_env)
from .interrupt import InterruptGuard, TrainingInterrupted
from .league.pool import LeaguePool
from .learn.checkpoint import CheckpointError, check_model_state, load_checkpoint, rng_state, set_rng_state
from .learn.learner import Learner
from .learn.pretrain import pretrain
from .monitor.training import TrainingMonitor
from .play.collector import split_envs
from .play.evaluator import format_report
from .threads import torch_threads

logger = logging.getLogger('ppo_gobigger')
KICKSTART_CHECKPOINT = 'kickstart.pth.tar'  # in <exp>/ckpt: the weights after the kickstart, before any PPO


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
    Under torchrun (WORLD_SIZE > 1) this is one rank; ranks other than 0 return an empty report.
    """
    main_config = copy.deepcopy(main_config)
    for key, value in (('seed', seed), ('max_env_step', max_env_step), ('max_train_iter', max_train_iter)):
        if value is not None:
            main_config[key] = value
    cfg, create_cfg = compile_config(main_config, create_config)
    rank = rank_from_env()
    if rank.world_size > 1 and cfg.distributed.backend != 'local':
        raise ConfigError(
            f'distributed.backend {cfg.distributed.backend!r} has one learner: start it with python, not torchrun '
            f'(WORLD_SIZE={rank.world_size}); torchrun runs backend \'local\''
        )
    if rank.world_size > 1 and cfg.pretrain.env_steps > 0 and not resume:
        raise ConfigError(
            f'pretrain.env_steps={cfg.pretrain.env_steps} under torchrun: the kickstart runs in one process. Run it '
            'with python (e.g. --max-env-step equal to the demonstration steps), then go on with torchrun --resume CKPT'
        )
    if rank.world_size > 1 and cfg.env.opponent in POLICY_OPPONENTS:
        raise ConfigError(f'env.opponent {cfg.env.opponent!r} plays the other teams in one trainer process: start it '
                          f'with python, not torchrun (WORLD_SIZE={rank.world_size})')
    rank_cfg = rank_config(cfg, rank)
    # Few threads while the env processes run (threads fighting them for the cores made a forward pass 100x slower
    # here); the learner takes every core while they wait (Learner.train); the caller's count comes back at the end.
    with process_group(rank, cuda=cfg.policy.cuda and torch.cuda.is_available()), \
            torch_threads(cfg.policy.torch_threads):
        return _train(cfg, rank_cfg, create_cfg, rank, resume, progress)


def _train(cfg: EasyDict, rank_cfg: EasyDict, create_cfg: EasyDict, rank: Rank, resume: Optional[str],
           progress: Optional[bool]) -> Tuple[object, Dict]:
    """DI-engine's serial_pipeline_onpolicy loop over named steps: evaluate if due -> stop? -> collect -> learn."""
    run = TrainingRun(cfg, rank_cfg, create_cfg, rank, resume, progress)
    # the guard stays on until the checkpoint is written and the envs are closed: a second signal while stopping
    # is ignored instead of killing the process half-way through the save
    with run.guard:
        try:
            run.start()
            while not run.evaluate_if_due() and not run.budget_spent():
                run.learn(run.collect())
            run.evaluate_final()
        except TrainingInterrupted as e:
            run.save_interrupted(e)
            raise
        finally:
            run.close()
    return run.policy, run.report


class TrainingRun:
    """One run's pieces (policy, learner, workers, monitor) and the steps of its loop. ``cfg`` is the run's config,
    ``rank_cfg`` this rank's share of it (the same without torchrun)."""

    def __init__(self, cfg: EasyDict, rank_cfg: EasyDict, create_cfg: EasyDict, rank: Rank, resume: Optional[str],
                 progress: Optional[bool]) -> None:
        self.cfg, self.rank = cfg, rank
        payload = load_checkpoint(resume) if resume else None  # a bad checkpoint fails before anything is written
        initial = load_checkpoint(cfg.policy.load_path) if cfg.policy.load_path and not resume else None
        if initial is not None and cfg.policy.load_learn_state and 'optimizer' not in initial:
            raise CheckpointError(f'{cfg.policy.load_path} holds weights only, and policy.load_learn_state=True takes '
                                  "its optimizer and value normalisation: give a run's full checkpoint "
                                  '(<exp>/ckpt/iteration_*.pth.tar) or set it to False')
        exp_dir = cfg.exp_name
        if rank.is_main:
            check_exp_dir(exp_dir)
            write_json(os.path.join(exp_dir, 'total_config.json'), cfg, default=str)
            logger.info(_run_summary(cfg, resume))
        set_global_seed(cfg.seed + rank.index)  # ranks sample their own actions; rank 0's initial parameters shared

        episodes_played = payload.get('collector_episodes') if payload else None  # None: interrupted before any
        if episodes_played is not None and len(episodes_played) != cfg.env.collector_env_num:
            logger.warning(f'the checkpoint had {len(episodes_played)} collector envs, this run has '
                           f'{cfg.env.collector_env_num}: their games start from the beginning of the sequence')
            episodes_played = None
        first_episodes = list(episodes_played) if episodes_played is not None else [0] * cfg.env.collector_env_num
        self.policy, self.model = build_policy(rank_cfg, create_cfg)
        if initial is not None:
            self._load_initial(initial)
        broadcast_module(self.model)
        if initial is not None and _distils_load_path(cfg):
            self.policy.keep_as_kickstart()
        if rank.world_size > 1:
            learn_together(self.policy.learn_mode)
        self.learner = Learner(self.policy.learn_mode, self.model, exp_dir, cfg, write_log=rank.is_main)
        self.league = None
        if cfg.env.opponent == 'league':  # the pool of <exp>/league; a resumed run goes on with it
            self.league = LeaguePool(os.path.join(exp_dir, 'league'), cfg.league, lambda: build_model(cfg), cfg.seed,
                                     device=self.policy.collect_mode.get_attribute('device'))
            if payload and 'league' in payload:  # its snapshots are in the league folder of the resumed run
                run_dir = os.path.dirname(os.path.dirname(os.path.abspath(resume)))
                self.league.restore(payload['league'], os.path.join(run_dir, 'league'))
        if cfg.distributed.backend == 'ray':
            from .distributed.ray_actors import RayWorkers  # Ray is an optional extra
            self.workers = RayWorkers(cfg, create_cfg, self.model, lambda: self.learner.train_iter, first_episodes,
                                      exp_dir)
        else:
            envs = split_envs(cfg.env.collector_env_num, rank.world_size)[rank.index]
            self.workers = LocalWorkers(rank_cfg, create_cfg, self.policy, envs, first_episodes, rank, exp_dir,
                                        progress, self.league)
        if payload:
            self.learner.restore(payload, resume)
            set_rng_state(payload['rng'])
        self.monitor = TrainingMonitor(exp_dir, cfg.max_env_step, progress, cfg.replay) if rank.is_main else None
        self.guard = InterruptGuard()
        self.report: Dict = {}
        self._create_cfg, self._progress = create_cfg, progress
        self._first_episodes = first_episodes
        # what a checkpoint holds besides the learner: taken after each PPO iteration, so that a checkpoint written
        # later (at an evaluation, or on a signal in the middle of collecting) resumes exactly from that iteration
        self._learned_envstep = payload['envstep'] if payload else 0
        # the env step of the last evaluation: a run resumed from a checkpoint written at an evaluation does not
        # play that evaluation again (None: evaluate first)
        self._last_eval = payload.get('last_eval') if payload else None
        self._resume_state = self._state_now(first_episodes)
        self._kickstarting = payload is None and cfg.pretrain.env_steps > 0  # until the imitated weights are complete
        self.collector = self.evaluator = None
        self._start_time = 0.0

    def _load_initial(self, initial: Dict) -> None:
        """policy.load_path: its weights (and with load_learn_state its optimizer and value normalisation)."""
        cfg = self.cfg
        check_model_state(self.model, initial['model'], cfg.policy.load_path)
        self.model.load_state_dict(initial['model'])
        if cfg.policy.load_learn_state:
            self.policy.adopt_learn_state(initial)
        if self.rank.is_main:
            learn_state = 'optimizer and value normalisation from it too' if cfg.policy.load_learn_state else \
                'optimizer and value normalisation start fresh'
            logger.info(f'initial weights: {cfg.policy.load_path} (a {initial["config"]["env"]["preset"]} team '
                        f'after {initial["envstep"]:,} env steps); {learn_state}')

    def _state_now(self, collector_episodes) -> Dict:
        state = {'rng': rng_state(), 'collector_episodes': list(collector_episodes), 'last_eval': self._last_eval}
        if self.league is not None:
            state['league'] = self.league.state()
        return state

    def start(self) -> None:
        """The kickstart when one is due (its weights saved as ckpt/kickstart.pth.tar), then the envs."""
        if self._kickstarting:
            stats = pretrain(self.policy, self.cfg, self._create_cfg, self._progress)
            self._learned_envstep = stats['env_steps']
            self.learner.log(dict(envstep=self._learned_envstep, kickstart=True, **stats))
            self._resume_state = self._state_now(self._first_episodes)
            if self.rank.is_main:  # the kickstart alone, to compare with what PPO makes of it
                path = self.learner.save(self._learned_envstep, self._resume_state, KICKSTART_CHECKPOINT)
                logger.info(f'kickstart saved: {path}')
            self._kickstarting = False
        self.collector, self.evaluator = self.workers.start()
        self.collector.envstep = self._learned_envstep  # a resumed run's, or the demonstration games' env steps
        self._start_time = time.time()

    def evaluate_if_due(self) -> bool:
        """Evaluate (rank 0) when eval_freq env steps have passed since the last evaluation; True when that
        evaluation reached env.stop_value (under torchrun every rank gets rank 0's answer)."""
        envstep = self.collector.envstep
        if self._last_eval is not None and envstep - self._last_eval < self.cfg.policy.eval.evaluator.eval_freq:
            return False
        self._last_eval = envstep
        if self.rank.is_main:
            self._save_and_evaluate(envstep)
        # under torchrun the other ranks wait here while rank 0 evaluates
        return decide(self.rank.is_main and self._reached_stop_value())

    def budget_spent(self) -> bool:
        """max_env_step or max_train_iter reached."""
        cfg = self.cfg
        return ((cfg.max_env_step is not None and self.collector.envstep >= cfg.max_env_step)
                or (cfg.max_train_iter is not None and self.learner.train_iter >= cfg.max_train_iter))

    def collect(self) -> Dict:
        """One rollout of policy.collect.n_sample env steps (this rank's share)."""
        self._envstep_before = self.collector.envstep
        return self.collector.collect()

    def learn(self, rollout: Dict) -> None:
        """One PPO iteration on the rollout, then the iteration's log line (rank 0)."""
        cfg, collector = self.cfg, self.collector
        learn_start = time.time()
        with self.guard.critical():  # a signal here waits for the updates and the counters to be complete
            # lr_anneal: the share of the budget collected before this rollout (the first iteration at the full rate)
            done_before = self._envstep_before / cfg.max_env_step if cfg.max_env_step else 0.0
            stats = self.learner.train(rollout, collector.envstep, done_before, collector.info())
            self._learned_envstep = collector.envstep
            if self.league is not None:
                self.league.on_iteration(self.model, self.learner.train_iter, collector.envstep, cfg)
            self._resume_state = self._state_now(collector.env_episodes)
        learn_time = time.time() - learn_start
        if not self.rank.is_main:
            return
        episodes = list(collector.recent_episodes)
        sps = (collector.envstep - self._envstep_before) / (collector.last_collect_time + learn_time)
        logger.info(
            f'iter {self.learner.train_iter} envstep {collector.envstep} sps {sps:.0f} '
            f'(collect {collector.last_collect_time:.1f}s learn {learn_time:.1f}s) '
            f'policy_loss {stats["policy_loss"]:.4f} value_loss {stats["value_loss"]:.4f} '
            f'entropy {stats["entropy"]:.3f} approx_kl {stats["approx_kl"]:.4f} '
            f'clipfrac {stats["clipfrac"]:.3f} ev {stats["explained_variance"]:.3f} '
            + (f'train_return {np.mean([e["eval_episode_return"] for e in episodes]):.2f} '
               if episodes else '') + f'elapsed {time.time() - self._start_time:.0f}s'
        )
        self.monitor.on_iteration(collector.envstep, self.learner.train_iter, stats, sps, episodes)

    def evaluate_final(self) -> None:
        """The final state is always evaluated and saved (unless the last evaluation was of it)."""
        if self._last_eval != self.collector.envstep and self.rank.is_main:
            self._save_and_evaluate(self.collector.envstep)

    def save_interrupted(self, e: TrainingInterrupted) -> None:
        """On SIGINT/SIGTERM: the state after the last PPO iteration, in a checkpoint that e.checkpoint names."""
        if self._kickstarting:  # half-imitated weights would resume as if the kickstart were done: save nothing
            logger.warning(f'{e.signal_name}: stopped during the kickstart, nothing saved; the same command '
                           'starts the run again')
        elif self.rank.is_main:
            e.checkpoint = self.learner.save(self._learned_envstep, self._resume_state)
            logger.warning(f'{e.signal_name}: stopped; the state after the last PPO iteration is in {e.checkpoint}')

    def close(self) -> None:
        if self.monitor is not None:
            self.monitor.close()
        self.workers.close()

    def _save_and_evaluate(self, envstep: int) -> None:
        self.report = self.evaluator.eval(self.learner.train_iter, envstep)
        evaluated_state = {**self._resume_state, 'last_eval': envstep}
        ckpt = self.learner.save(envstep, evaluated_state)
        best = self.learner.save_if_best(self.report, envstep, evaluated_state)
        logger.info(f'evaluation at envstep {envstep}\n{format_report(self.report)}')
        self.monitor.on_eval(self.report, ckpt if best else None)

    def _reached_stop_value(self) -> bool:
        stop_value, win_rate = self.cfg.env.stop_value, self.report['win_rate']
        if stop_value is None or win_rate < stop_value:
            return False
        logger.info(f'win_rate {win_rate:.3f} >= stop_value {stop_value}')
        return True


def _distils_load_path(cfg: EasyDict) -> bool:
    """No imitation and kickstart_kl on: the weights of policy.load_path are the kickstart it distils."""
    return bool(cfg.policy.load_path) and cfg.policy.learn.kickstart_kl > 0 and cfg.pretrain.env_steps == 0


def _run_summary(cfg: EasyDict, resume: Optional[str]) -> str:
    """What the run plays, for how long, and where it writes: the first line it logs."""
    env = cfg.env
    opponents = {
        'bot': f'level-{env.bot_level} bots',
        'random': 'random opponents',
        'self': 'its current weights (self-play' + (', learning from every team)' if cfg.league.all_teams else ')'),
        'league': f'a league (bot levels {list(cfg.league.bot_levels)} and snapshots every '
                  f'{cfg.league.snapshot_every} iterations, {cfg.league.sampling} draws, self-play '
                  f'{cfg.league.self_play:g}' + (', learning from every team of its games)' if cfg.league.all_teams
                                                 else ')'),
    }[env.opponent]
    if env.opponent in POLICY_OPPONENTS:
        opponents += f', evaluated against level-{env.bot_level} bots'
    length = f'{cfg.max_env_step:,} env steps' if cfg.max_env_step is not None else 'no env step limit'
    if resume:
        length += f', resumed from {resume}'
    else:
        if cfg.pretrain.env_steps > 0:
            length += f' (the first {cfg.pretrain.env_steps:,}: kickstart demonstrations by level-' \
                      f'{cfg.pretrain.bot_level} bots)'
        if cfg.policy.load_path:
            length += f', starting from the weights of {cfg.policy.load_path}'
            if _distils_load_path(cfg):
                length += f', distilled as the kickstart (policy.learn.kickstart_kl {cfg.policy.learn.kickstart_kl})'
    return (f'training {env.preset} against {opponents}, {length}; {env.collector_env_num} collector envs '
            f'({env.manager.type}, backend {cfg.distributed.backend}); writing to {cfg.exp_name}')
