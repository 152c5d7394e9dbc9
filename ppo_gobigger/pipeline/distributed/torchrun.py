"""Gradient parallelism with torch.distributed, for a run launched with torchrun.

``torchrun --nproc_per_node N entry/train_gobigger.py ...`` starts N ranks of the training loop of
pipeline/serial.py. Each rank collects its share of the collector envs and of n_sample with its own env processes,
and learns on its own rollout in minibatches of batch_size / N env steps; after every minibatch's backward pass the
gradients are averaged over the ranks, so that all ranks apply the same update of batch_size env steps and their
parameters stay identical. The value-normalisation statistics are pooled over the ranks too (policy/collective.py:
the PPO update does both whenever a process group is up). Rank 0 alone evaluates, logs and writes checkpoints; the
others wait for it at each evaluation.

DI-engine's multi_gpu path is not used: PPOPolicy never all-reduces its gradients, so its ranks diverge after the
first update, and its DDPContext assumes CUDA.
"""
import contextlib
import datetime
import logging
import os
from collections import deque
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List

import torch
import torch.distributed as dist
from easydict import EasyDict

from ...config import ConfigError
from ...policy.collective import is_distributed
from ..play.collector import COUNTERS, RolloutCollector, share_config, split_envs

logger = logging.getLogger('ppo_gobigger')
TIMEOUT = datetime.timedelta(minutes=30)  # the longest a rank waits in a collective (rank 0 evaluating, recording)


@dataclass(frozen=True)
class Rank:
    """This process's place among the ranks of a torchrun launch; Rank() for a process of its own."""
    index: int = 0  # RANK
    world_size: int = 1  # WORLD_SIZE
    local_index: int = 0  # LOCAL_RANK: the GPU of its machine it uses

    @property
    def is_main(self) -> bool:
        """Rank 0 evaluates, logs and writes checkpoints."""
        return self.index == 0


def rank_from_env() -> Rank:
    """The rank that torchrun's environment variables describe (a process without them is rank 0 of 1)."""
    world_size = int(os.environ.get('WORLD_SIZE', 1))
    if world_size == 1:
        return Rank()
    return Rank(int(os.environ['RANK']), world_size, int(os.environ.get('LOCAL_RANK', 0)))


@contextlib.contextmanager
def process_group(rank: Rank, cuda: bool) -> Iterator[None]:
    """Join the ranks (gloo on CPU, nccl with CUDA) for the duration of the block; nothing for a single process."""
    if rank.world_size == 1:
        yield
        return
    backend = 'nccl' if cuda else 'gloo'
    if cuda:
        torch.cuda.set_device(rank.local_index)  # the policy builds its model on the current device
    dist.init_process_group(backend, init_method='env://', timeout=TIMEOUT)
    logger.info(f'rank {rank.index} of {rank.world_size} joined the process group ({backend})')
    try:
        yield
    except BaseException:
        dist.destroy_process_group()  # no barrier: the other ranks may never get here
        raise
    # ranks leave together: one tearing gloo down and exiting while rank 0 still evaluates can abort its process
    # (std::terminate in gloo's threads), and torchrun then reports a failed run
    dist.barrier()
    dist.destroy_process_group()


def rank_config(cfg: EasyDict, rank: Rank) -> EasyDict:
    """This rank's config: its share of the collector envs (seeded by their global index) and of n_sample, and
    minibatches of batch_size / world_size env steps, so that each averaged update covers batch_size env steps.

    Equal shares keep the ranks in step: the same rollout size, hence the same number of minibatches.
    """
    if rank.world_size == 1:
        return cfg
    n = rank.world_size
    if cfg.env.collector_env_num % n or cfg.policy.learn.batch_size % n:
        raise ConfigError(
            f'with {n} torchrun ranks, env.collector_env_num ({cfg.env.collector_env_num}) and '
            f'policy.learn.batch_size ({cfg.policy.learn.batch_size}) must be multiples of {n}: each rank runs an '
            'equal share of the envs and of each minibatch'
        )
    share = share_config(cfg, split_envs(cfg.env.collector_env_num, n)[rank.index])
    share.policy.learn.batch_size = cfg.policy.learn.batch_size // n
    return share


def broadcast_module(module: torch.nn.Module) -> None:
    """Rank 0's parameters and buffers on every rank."""
    if is_distributed():
        for tensor in module.state_dict().values():
            dist.broadcast(tensor, src=0)


def decide(flag: bool) -> bool:
    """Rank 0's ``flag`` on every rank. A collective: every rank waits here until rank 0 gets here too."""
    if not is_distributed():
        return flag
    box = [flag]
    dist.broadcast_object_list(box, src=0)
    return bool(box[0])


def all_gather(obj: Any) -> List[Any]:
    """Every rank's ``obj`` (picklable), in rank order."""
    if not is_distributed():
        return [obj]
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, obj)
    return gathered


class DistributedCollector:
    """This rank's RolloutCollector, seen by the training loop as the collector of all ranks: env steps, games and
    fault counters summed over the ranks, the games that ended on any rank, every env's game count in global order.
    The rollout itself stays on its rank."""

    def __init__(self, collector: RolloutCollector, env_episodes: List[int]) -> None:
        """``env_episodes``: games played so far by every collector env of every rank (global order)."""
        self._local = collector
        self.envstep = 0  # env steps collected by all ranks
        self.env_episodes = list(env_episodes)
        self.recent_episodes: deque = deque(maxlen=collector.recent_episodes.maxlen)
        self.last_collect_time = 0.0  # the slowest rank's
        self._info: Dict[str, int] = {}

    def collect(self) -> Dict[str, Any]:
        """This rank's rollout {key: tensor (T, E_rank, ...)}; the counters are updated for all ranks."""
        games_before = self._local.episode_count
        rollout = self._local.collect()
        new_games = self._local.episode_count - games_before
        ended = list(self._local.recent_episodes)[-new_games:] if new_games else []
        ranks = all_gather((int(rollout['valid'].sum()), ended, self._local.env_episodes, self._local.info(),
                            self._local.last_collect_time))
        self.envstep += sum(r[0] for r in ranks)
        for r in ranks:
            self.recent_episodes.extend(r[1])
        self.env_episodes = [n for r in ranks for n in r[2]]
        self._info = {**self._local.info(), **{key: sum(r[3][key] for r in ranks) for key in COUNTERS}}
        self.last_collect_time = max(r[4] for r in ranks)
        return rollout

    def info(self) -> Dict[str, int]:
        """This rank's RolloutCollector.info(), its COUNTERS summed over the ranks, as of the last collect."""
        return dict(self._info)
