"""Rollout workers as Ray actors, and the driver that runs them with the evaluator actor (ray_evaluator.py):
distributed.backend = 'ray' (the Ape-X / parameter-server shape).

    driver (this process)                         Ray actors, on any machine of the cluster
    Learner, policy in learn mode (GPU if any)    RolloutWorker x num_workers: an env manager with its share of
      ray.put(weights) once per iteration  --->     the collector envs, RolloutCollector, CPU policy (collect mode)
      rollouts concatenated along the envs <---     collect(weights) -> rollout {key: (T, E_w, ...)} as numpy
      evaluator.jsonl written here         <--->  EvaluatorActor: the evaluator envs, Evaluator, policy (eval mode)

The training loop is pipeline/serial.py's: eval if due -> collect (all workers at once) -> learn. Worker w runs the
global collector envs split_envs(...)[w] seeded as in one process (env i: seed + i), so the games are those of the
local backend. A worker actor that dies is replaced (same envs, their games continued) and its rollout of that
iteration is dropped and counted; one that fails MAX_FAILURES_IN_A_ROW times in a row stops training. An
exception inside an actor (an env that keeps failing...) stops training as it would in one process.

What each iteration adds to learner.jsonl (RayCollector.info): episode_count, lost_env_steps, env_restarts (all
workers), worker_restarts and dropped_rollouts, worker_sps (sum over workers of env steps / collection time),
worker_collect_s (the slowest worker's collection time), weights_bytes, weights_put_s (driver), weights_get_s
(slowest worker: fetch + load), rollout_bytes, rollout_get_s (driver: fetch and deserialise every worker's
rollout) and concat_s (joining them).
"""
import logging
import os
import time
import uuid
from collections import deque
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import ray
import torch
from easydict import EasyDict
from ray.exceptions import RayActorError

from ...config import ConfigError
from ..play.collector import COUNTERS, RolloutCollector, share_config, split_envs
from ..play.env_manager import build_env_managers, close_env_manager
from ..build import build_policy, set_global_seed
from .ray_common import MAX_FAILURES_IN_A_ROW, RUNTIME_ENV, WeightPublisher, close_actors, get
from .ray_evaluator import RayEvaluator

logger = logging.getLogger('ppo_gobigger')
# padding of a worker's rollout to the longest: what collector._padding_transition puts there (zeros, a trajectory end)
PAD_VALUES = {'done': True, 'cut': True}
class RolloutWorker:
    """A Ray actor: the collector envs ``envs`` (global indices) in an env manager, and a CPU policy."""

    def __init__(self, cfg: EasyDict, create_cfg: EasyDict, envs: range, first_episodes: List[int]) -> None:
        """``first_episodes``: games already played by each of its envs (a replacement or resumed run goes on)."""
        torch.set_num_threads(cfg.policy.torch_threads)  # for the life of the actor, a process of its own
        share = share_config(cfg, envs)
        share.policy.cuda = False
        set_global_seed(cfg.seed + envs.start)
        self._env, _ = build_env_managers(share, create_cfg, evaluate=False, first_episodes=first_episodes,
                                          first_env=envs.start)
        policy, self._model = build_policy(share, create_cfg, enable_field=['collect'])
        self._env.seed(cfg.seed + envs.start, dynamic_seed=True)
        self._env.launch()
        self._collector = RolloutCollector(self._env, policy.collect_mode, share.policy.collect.n_sample)
        self._collector.env_episodes = list(first_episodes)

    def collect(self, weights: List[ray.ObjectRef]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        """Load the weights (a ref in a list: fetched here, and timed), collect; returns (stats, rollout).

        rollout: {key: array (T, E_w, ...)}, 'obs': {key: array (T, E_w, A, ...)}, as the collector makes them.
        """
        start = time.perf_counter()
        self._model.load_state_dict(ray.get(weights[0]))
        weights_get_s = time.perf_counter() - start
        before = self._collector.info()
        rollout = self._collector.collect()
        after = self._collector.info()
        new_games = after['episode_count'] - before['episode_count']
        rollout = {k: ({o: a.numpy() for o, a in v.items()} if k == 'obs' else v.numpy()) for k, v in rollout.items()}
        stats = {
            'envstep': int(rollout['valid'].sum()),
            'collect_s': self._collector.last_collect_time,
            'weights_get_s': weights_get_s,
            'rollout_bytes': sum(a.nbytes for a in rollout['obs'].values()) +
            sum(a.nbytes for k, a in rollout.items() if k != 'obs'),
            'episodes': list(self._collector.recent_episodes)[-new_games:] if new_games else [],
            'env_episodes': list(self._collector.env_episodes),
            **{k: after[k] - before[k] for k in COUNTERS},  # this collect's games, lost steps, env restarts
        }
        return stats, rollout

    def close(self) -> None:
        close_env_manager(self._env)


RemoteRolloutWorker = ray.remote(RolloutWorker)


def concat_rollouts(rollouts: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Workers' rollouts {key: array (T_w, E_w, ...)} -> {key: tensor (T, E, ...)}: E = sum of E_w, T the longest
    T_w, shorter ones padded as the collector pads its own segments (``valid`` False there)."""
    T = max(r['valid'].shape[0] for r in rollouts)

    def join(key: str, arrays: List[np.ndarray]) -> torch.Tensor:
        padded = []
        for a in arrays:
            if a.shape[0] < T:
                pad = np.full((T - a.shape[0], ) + a.shape[1:], PAD_VALUES.get(key, 0), dtype=a.dtype)
                a = np.concatenate([a, pad])
            padded.append(a)
        return torch.from_numpy(np.concatenate(padded, axis=1))  # a new, writable array

    out = {k: join(k, [r[k] for r in rollouts]) for k in rollouts[0] if k != 'obs'}
    out['obs'] = {k: join(k, [r['obs'][k] for r in rollouts]) for k in rollouts[0]['obs']}
    return out


class RayCollector:
    """The driver's view of the rollout workers, with RolloutCollector's interface for the training loop."""

    def __init__(self, cfg: EasyDict, create_cfg: EasyDict, publisher: WeightPublisher, first_episodes: List[int],
                 run_tag: str) -> None:
        self._cfg = cfg
        self._create_cfg = create_cfg
        self._publisher = publisher
        self._run_tag = run_tag
        self._shares = split_envs(cfg.env.collector_env_num, cfg.distributed.num_workers)
        sizes = [len(s) for s in self._shares]
        if len(set(sizes)) > 1:
            logger.warning(f'env.collector_env_num ({cfg.env.collector_env_num}) does not divide evenly over '
                           f'{len(sizes)} rollout workers: collector envs per worker {sizes}')
        self._episodes_of = [first_episodes[s.start:s.stop] for s in self._shares]  # per worker: its envs' games
        self._incarnation = [0] * len(self._shares)
        self._failures = [0] * len(self._shares)
        self.workers = [self._start_worker(w) for w in range(len(self._shares))]
        self.envstep = 0
        self.recent_episodes: deque = deque(maxlen=100)
        self.last_collect_time = 0.0
        self._totals = dict(episode_count=0, lost_env_steps=0, env_restarts=0, worker_restarts=0, dropped_rollouts=0)
        self._last: Dict[str, float] = {}

    @property
    def env_episodes(self) -> List[int]:
        """Games played by each collector env, in global order (what a checkpoint keeps)."""
        return [n for episodes in self._episodes_of for n in episodes]

    def _start_worker(self, w: int):
        name = f'rollout_worker_{w}.{self._incarnation[w]}-{self._run_tag}'
        return RemoteRolloutWorker.options(name=name, num_cpus=self._cfg.distributed.worker_cpus).remote(
            self._cfg, self._create_cfg, self._shares[w], self._episodes_of[w]
        )

    def _replace_worker(self, w: int, error: Exception) -> None:
        self._failures[w] += 1
        if self._failures[w] > MAX_FAILURES_IN_A_ROW:
            raise RuntimeError(f'rollout worker {w} died {self._failures[w]} times in a row; the last: {error}')
        logger.warning(f'rollout worker {w} (collector envs {self._shares[w].start}-{self._shares[w].stop - 1}) '
                       f'died; its rollout is dropped and a new worker takes its envs: {error}')
        ray.kill(self.workers[w], no_restart=True)
        self._incarnation[w] += 1
        self.workers[w] = self._start_worker(w)
        self._totals['worker_restarts'] += 1
        self._totals['dropped_rollouts'] += 1

    def collect(self) -> Dict[str, Any]:
        """Every worker collects its share at once; returns their rollouts joined, {key: tensor (T, E, ...)}.

        The rollout of a worker that died is missing (E is smaller); when none is left, they all collect again.
        """
        start = time.time()
        while True:
            weights = self._publisher.publish()
            calls = [worker.collect.options(num_returns=2).remote([weights]) for worker in self.workers]
            rollouts, stats = [], []
            rollout_get_s = 0.0
            for w, (stats_ref, rollout_ref) in enumerate(calls):
                try:
                    worker_stats = get(stats_ref)
                    fetch_start = time.perf_counter()
                    rollouts.append(get(rollout_ref))
                    rollout_get_s += time.perf_counter() - fetch_start
                except RayActorError as e:
                    self._replace_worker(w, e)
                    continue
                self._failures[w] = 0
                self._episodes_of[w] = worker_stats['env_episodes']
                stats.append(worker_stats)
            if rollouts:
                break
        concat_start = time.perf_counter()
        rollout = concat_rollouts(rollouts)
        concat_s = time.perf_counter() - concat_start
        self.envstep += sum(s['envstep'] for s in stats)
        for s in stats:
            self.recent_episodes.extend(s['episodes'])
            for key in COUNTERS:
                self._totals[key] += s[key]
        self._last = dict(
            worker_sps=sum(s['envstep'] / max(s['collect_s'], 1e-9) for s in stats),
            worker_collect_s=max(s['collect_s'] for s in stats),
            weights_bytes=self._publisher.bytes,
            weights_put_s=self._publisher.last_put_s,
            weights_get_s=max(s['weights_get_s'] for s in stats),
            rollout_bytes=sum(s['rollout_bytes'] for s in stats),
            rollout_get_s=rollout_get_s,
            concat_s=concat_s,
        )
        self.last_collect_time = time.time() - start
        return rollout

    def info(self) -> Dict[str, float]:
        """Counters summed over the workers since the start, and the latest iteration's speed and transfers."""
        return {**self._totals, **self._last}

    def close(self) -> None:
        close_actors(self.workers)


class RayWorkers:
    """Joins (or starts) the Ray cluster, starts the actors, and shuts them down (the cluster too if it started it)."""

    def __init__(self, cfg: EasyDict, create_cfg: EasyDict, model: torch.nn.Module, version: Callable[[], int],
                 first_episodes: List[int], exp_dir: str) -> None:
        """
        Arguments:
            model: the driver's model, published to the actors.
            version: the learner's train_iter: the weights are published again when it changes.
            first_episodes: games already played by each collector env (a resumed run goes on).
        """
        self._cfg = cfg
        self._create_cfg = create_cfg
        self._model = model
        self._version = version
        self._first_episodes = first_episodes
        self._report_path = os.path.join(exp_dir, 'evaluator.jsonl')
        self._started_ray = False
        self._collector: Optional[RayCollector] = None
        self._evaluator: Optional[RayEvaluator] = None

    def start(self) -> Tuple[RayCollector, RayEvaluator]:
        dist = self._cfg.distributed
        if not ray.is_initialized():
            if dist.address is None:
                ray.init(num_cpus=dist.num_cpus, include_dashboard=False, runtime_env=RUNTIME_ENV)
            else:
                ray.init(address=dist.address, runtime_env=RUNTIME_ENV)
            self._started_ray = True
        cpus = ray.cluster_resources().get('CPU', 0)
        if dist.num_workers * dist.worker_cpus > cpus:
            raise ConfigError(
                f'the Ray cluster has {cpus:g} CPUs; {dist.num_workers} rollout workers of distributed.worker_cpus '
                f'{dist.worker_cpus:g} need {dist.num_workers * dist.worker_cpus:g}: lower one of them or add machines'
            )
        logger.info(f'Ray cluster: {cpus:g} CPUs on {len(ray.nodes())} node(s); {dist.num_workers} rollout workers')
        run_tag = uuid.uuid4().hex[:8]  # actor names are unique per run: rollout_worker_<w>.<incarnation>-<tag>
        publisher = WeightPublisher(self._model, self._version)
        self._collector = RayCollector(self._cfg, self._create_cfg, publisher, self._first_episodes, run_tag)
        self._evaluator = RayEvaluator(self._cfg, self._create_cfg, publisher, self._report_path, run_tag)
        return self._collector, self._evaluator

    def close(self) -> None:
        if self._collector is not None:
            self._collector.close()
        if self._evaluator is not None:
            self._evaluator.close()
        if self._started_ray:
            ray.shutdown()
