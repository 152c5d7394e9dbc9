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
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import torch
from easydict import EasyDict

from ..config import ConfigError, compile_config
from ..envs.opponents import POLICY_OPPONENTS
from ..files import write_json
from .build import build_model, build_policy, check_exp_dir, set_global_seed
from .distributed.local import LocalWorkers
from .distributed.torchrun import Rank, broadcast_module, decide, process_group, rank_config, rank_from_env
from .interrupt import InterruptGuard, TrainingInterrupted
from .league.pool import LeaguePool
from .learn.checkpoint import check_model_state, load_checkpoint, rng_state, set_rng_state
from .learn.learner import Learner
from .monitor.training import TrainingMonitor
from .play.collector import split_envs
from .play.evaluator import format_report
from .threads import torch_threads

logger = logging.getLogger('ppo_gobigger')


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


@dataclass
class RunState:
    """What a checkpoint holds besides the learner, as of the last PPO iteration, so that a checkpoint written later
    (at an evaluation, or on a signal in the middle of collecting) resumes exactly from that iteration."""
    envstep: int = 0  # env steps collected before the last PPO iteration's update (a resumed run's at its start)
    last_eval: Optional[int] = None  # env step of the last evaluation; None: evaluate first
    collector_episodes: List[int] = field(default_factory=list)  # games each collector env had begun
    rng: Dict[str, Any] = field(default_factory=rng_state)  # the random generators' state
    league: Optional[Dict[str, Any]] = None  # the league pool's state (opponent 'league')

    @classmethod
    def from_checkpoint(cls, payload: Optional[Dict[str, Any]], env_num: int) -> 'RunState':
        """A resumed run's state (``payload``: its loaded checkpoint), or a new run's (None) with ``env_num``
        collector envs at their first game."""
        if payload is None:
            return cls(collector_episodes=[0] * env_num)
        episodes = payload.get('collector_episodes')  # None: interrupted before any iteration
        if episodes is not None and len(episodes) != env_num:
            logger.warning(f'the checkpoint had {len(episodes)} collector envs, this run has {env_num}: their '
                           'games start from the beginning of the sequence')
            episodes = None
        return cls(payload['envstep'], payload.get('last_eval'), list(episodes or [0] * env_num), payload['rng'],
                   payload.get('league'))

    def checkpoint(self) -> Dict[str, Any]:
        """The entries a checkpoint stores (save_checkpoint adds envstep)."""
        state = {'rng': self.rng, 'collector_episodes': list(self.collector_episodes), 'last_eval': self.last_eval}
        if self.league is not None:
            state['league'] = self.league
        return state


class TrainingRun:
    """One run's pieces (policy, learner, workers, monitor) and the steps of its loop. ``cfg`` is the run's config,
    ``rank_cfg`` this rank's share of it (the same without torchrun)."""

    def __init__(self, cfg: EasyDict, rank_cfg: EasyDict, create_cfg: EasyDict, rank: Rank, resume: Optional[str],
                 progress: Optional[bool]) -> None:
        self.cfg, self.rank = cfg, rank
        payload = load_checkpoint(resume) if resume else None  # a bad checkpoint fails before anything is written
        initial = load_checkpoint(cfg.policy.load_path) if cfg.policy.load_path and not resume else None
        exp_dir = cfg.exp_name
        if rank.is_main:
            check_exp_dir(exp_dir)
            write_json(os.path.join(exp_dir, 'total_config.json'), cfg, default=str)
            logger.info(_run_summary(cfg, resume))
        set_global_seed(cfg.seed + rank.index)  # ranks sample their own actions; rank 0's initial parameters shared

        self.state = RunState.from_checkpoint(payload, cfg.env.collector_env_num)
        self.policy, self.model = build_policy(rank_cfg, create_cfg)
        if initial is not None:
            self._load_initial(initial)
        broadcast_module(self.model)
        self.learner = Learner(self.policy.learn_mode, self.model, exp_dir, cfg, write_log=rank.is_main)
        self.league = None
        if cfg.env.opponent == 'league':  # the pool of <exp>/league; a resumed run goes on with it
            self.league = LeaguePool(os.path.join(exp_dir, 'league'), cfg.league, lambda: build_model(cfg), cfg.seed,
                                     device=self.policy.collect_mode.get_attribute('device'))
            if self.state.league is not None:  # its snapshots are in the league folder of the resumed run
                run_dir = os.path.dirname(os.path.dirname(os.path.abspath(resume)))
                self.league.restore(self.state.league, os.path.join(run_dir, 'league'))
        if cfg.distributed.backend == 'ray':
            from .distributed.ray_actors import RayWorkers  # Ray is an optional extra
            self.workers = RayWorkers(cfg, create_cfg, self.model, lambda: self.learner.train_iter,
                                      self.state.collector_episodes, exp_dir)
        else:
            envs = split_envs(cfg.env.collector_env_num, rank.world_size)[rank.index]
            self.workers = LocalWorkers(rank_cfg, create_cfg, self.policy, envs, self.state.collector_episodes, rank,
                                        exp_dir, progress, self.league)
        if payload:
            self.learner.restore(payload, resume)
            set_rng_state(payload['rng'])
        self._take_state()
        self.monitor = TrainingMonitor(exp_dir, cfg.max_env_step, progress) if rank.is_main else None
        self.guard = InterruptGuard()
        self.report: Dict = {}
        self.collector = self.evaluator = None
        self._start_time = 0.0

    def _load_initial(self, initial: Dict) -> None:
        """policy.load_path: its weights; optimizer and value normalisation start fresh."""
        check_model_state(self.model, initial['model'], self.cfg.policy.load_path)
        self.model.load_state_dict(initial['model'])
        if self.rank.is_main:
            logger.info(f'initial weights: {self.cfg.policy.load_path} (a {initial["config"]["env"]["preset"]} team '
                        f'after {initial["envstep"]:,} env steps); optimizer and value normalisation start fresh')

    def _take_state(self, collector_episodes: Optional[List[int]] = None) -> None:
        """Record the random generators, the league and (after an iteration) the collector envs' games now."""
        self.state.rng = rng_state()
        if collector_episodes is not None:
            self.state.collector_episodes = list(collector_episodes)
        if self.league is not None:
            self.state.league = self.league.state()

    def start(self) -> None:
        """Start the envs (and the rollout workers)."""
        self.collector, self.evaluator = self.workers.start()
        self.collector.envstep = self.state.envstep  # a resumed run's env steps
        self._start_time = time.time()

    def evaluate_if_due(self) -> bool:
        """Evaluate (rank 0) when eval_freq env steps have passed since the last evaluation; True when that
        evaluation reached env.stop_value (under torchrun every rank gets rank 0's answer)."""
        envstep = self.collector.envstep
        last_eval = self.state.last_eval
        if last_eval is not None and envstep - last_eval < self.cfg.policy.eval.evaluator.eval_freq:
            return False
        self.state.last_eval = envstep
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
        return self.collector.collect()

    def learn(self, rollout: Dict) -> None:
        """One PPO iteration on the rollout, then the iteration's log line (rank 0)."""
        cfg, collector = self.cfg, self.collector
        learn_start = time.time()
        envstep_before = self.state.envstep
        with self.guard.critical():  # a signal here waits for the updates and the counters to be complete
            stats = self.learner.train(rollout, collector.envstep, collector.info())
            if self.league is not None:
                self.league.on_iteration(self.model, self.learner.train_iter, collector.envstep, cfg)
            self.state.envstep = collector.envstep
            self._take_state(collector.env_episodes)
        learn_time = time.time() - learn_start
        if not self.rank.is_main:
            return
        episodes = list(collector.recent_episodes)
        sps = (collector.envstep - envstep_before) / (collector.last_collect_time + learn_time)
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
        if self.state.last_eval != self.collector.envstep and self.rank.is_main:
            self._save_and_evaluate(self.collector.envstep)

    def save_interrupted(self, e: TrainingInterrupted) -> None:
        """On SIGINT/SIGTERM: the state after the last PPO iteration, in a checkpoint that e.checkpoint names."""
        if self.rank.is_main:
            e.checkpoint = self.learner.save(self.state.envstep, self.state.checkpoint())
            logger.warning(f'{e.signal_name}: stopped; the state after the last PPO iteration is in {e.checkpoint}')

    def close(self) -> None:
        if self.monitor is not None:
            self.monitor.close()
        self.workers.close()

    def _save_and_evaluate(self, envstep: int) -> None:
        self.report = self.evaluator.eval(self.learner.train_iter, envstep)
        evaluated_state = {**self.state.checkpoint(), 'last_eval': envstep}
        self.learner.save(envstep, evaluated_state)
        self.learner.save_if_best(self.report, envstep, evaluated_state)
        logger.info(f'evaluation at envstep {envstep}\n{format_report(self.report)}')
        self.monitor.on_eval(self.report)

    def _reached_stop_value(self) -> bool:
        stop_value, win_rate = self.cfg.env.stop_value, self.report['win_rate']
        if stop_value is None or win_rate < stop_value:
            return False
        logger.info(f'win_rate {win_rate:.3f} >= stop_value {stop_value}')
        return True


def _run_summary(cfg: EasyDict, resume: Optional[str]) -> str:
    """What the run plays, for how long, and where it writes: the first line it logs."""
    env = cfg.env
    opponents = {
        'bot': f'level-{env.bot_level} bots',
        'random': 'random opponents',
        'self': 'its current weights (self-play, learning from every team)',
        'league': f'a league (bot levels {list(cfg.league.bot_levels)} and snapshots every '
                  f'{cfg.league.snapshot_every} iterations, PFSP draws, self-play {cfg.league.self_play:g}, learning '
                  'from every team of its self-play games)',
    }[env.opponent]
    if env.opponent in POLICY_OPPONENTS:
        opponents += f', evaluated against level-{env.bot_level} bots'
    length = f'{cfg.max_env_step:,} env steps' if cfg.max_env_step is not None else 'no env step limit'
    if resume:
        length += f', resumed from {resume}'
    elif cfg.policy.load_path:
        length += f', starting from the weights of {cfg.policy.load_path}'
    return (f'training {env.preset} against {opponents}, {length}; {env.collector_env_num} collector envs '
            f'({env.manager.type}, backend {cfg.distributed.backend}); writing to {cfg.exp_name}')
