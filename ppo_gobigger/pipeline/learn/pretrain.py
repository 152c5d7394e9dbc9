"""Kickstart (``pretrain.env_steps > 0``): before PPO, GoBigger's bots play our team's side for a number of whole
games; the actor learns their moves (behaviour cloning) and the critic those games' discounted returns. PPO then
starts from a policy that already plays like the bots instead of from a uniform one.

The demonstration games are collector games (even game seeds, never an evaluation game) on an env seed block of
their own (``seed + DEMO_SEED_OFFSET``), played by the collector's env manager type with ``env.stand_in='bot'``;
their env steps count towards the run's env steps like any other.
"""
import copy
import logging
import math
import time
from typing import Any, Dict, List, Optional

import numpy as np
import torch
from easydict import EasyDict

from ...envs.game import game_env_steps
from ...envs.opponents import POLICY_OPPONENTS
from ...policy.ppo_math import gae
from ..play.env_manager import build_env_managers, close_env_manager
from ..progress import Progress
from ..threads import torch_threads

logger = logging.getLogger(__name__)

DEMO_SEED_OFFSET = 500  # demonstration games: env seed = seed + this (training games use seed)


def collect_demonstrations(cfg: EasyDict, create_cfg: EasyDict,
                           progress: Optional[bool] = None) -> Dict[str, torch.Tensor]:
    """Play whole games with bots on our side; returns obs {key: (S, A, ...)}, action (S, A), returns (S, A)
    (discounted with policy.learn.discount_factor within each game) and the env step count S.
    ``progress``: show the env steps played as a bar (None: on a terminal; else log lines, see progress.py)."""
    demo_cfg = copy.deepcopy(cfg)
    demo_cfg.env.stand_in = 'bot'
    if demo_cfg.env.opponent in POLICY_OPPONENTS:  # self-play and league runs imitate games against the bots
        demo_cfg.env.opponent = 'bot'
    demo_cfg.env.stand_in_bot_level = cfg.pretrain.bot_level
    demo_cfg.env.first_episode = 0
    manager, _ = build_env_managers(demo_cfg, create_cfg, evaluate=False)
    gamma = cfg.policy.learn.discount_factor
    # every env stops after the game in which the run reaches pretrain.env_steps: at most one more game each
    store = _DemoStore(cfg.pretrain.env_steps + manager.env_num * game_env_steps(demo_cfg.env))
    logger.info(f'kickstart: level-{cfg.pretrain.bot_level} bots play our side for {cfg.pretrain.env_steps:,} env '
                f'steps of whole games on {manager.env_num} envs')
    bar = None
    try:
        manager.seed(cfg.seed + DEMO_SEED_OFFSET, dynamic_seed=True)
        manager.launch()
        bar = Progress('demonstrations', cfg.pretrain.env_steps, 'step', progress, unit_scale=True)  # after the fork
        current = {i: _new_game() for i in range(manager.env_num)}
        collected, active = 0, set(current)
        while active:
            ready = {i: obs for i, obs in manager.ready_obs.items() if i in active}
            if not ready:
                time.sleep(0.001)
                continue
            player_num = len(next(iter(ready.values()))['scalar'])
            timesteps = manager.step({i: np.zeros(player_num, np.int64) for i in ready})  # ignored by the stand-in
            ended = []  # the envs whose game ended at this step
            for i, timestep in timesteps.items():
                if timestep.info.get('abnormal', False):  # a failed game: drop it, the env starts another
                    current[i] = _new_game()
                    manager.reset({i: None})
                    continue
                game = current[i]
                game['obs'].append(ready[i])
                game['action'].append(timestep.info['stand_in_action'])
                game['reward'].append(np.asarray(timestep.reward, np.float32))  # (A,)
                collected += 1
                if timestep.done:
                    store.add(game)
                    current[i] = _new_game()
                    ended.append(i)
            if collected >= cfg.pretrain.env_steps:  # counted over the whole step: games that end together all stop
                active.difference_update(ended)  # their last games are whole; the other envs finish theirs
            bar.update(collected - bar.n, postfix=f'{len(store.lengths)} games')
    finally:
        if bar is not None:
            bar.close()
        close_env_manager(manager)
    steps = store.size
    obs = {k: torch.from_numpy(v[:steps]) for k, v in store.obs.items()}  # {key: (S, A, ...)}, no copy
    action = torch.from_numpy(store.action[:steps])  # (S, A)
    reward = torch.from_numpy(store.reward[:steps]).unsqueeze(1)  # (S, 1, A)
    game_end = torch.zeros(steps, 1, dtype=torch.bool)  # (S, 1): games end to end
    game_end[np.cumsum(store.lengths) - 1] = True
    zero = torch.zeros_like(reward)  # (S, 1, A): with V = 0 and lambda = 1, GAE is the discounted return
    returns = gae(reward, zero, zero, game_end, game_end, gamma, 1.0)[:, 0]  # (S, A) each player's return
    logger.info(f'demonstrations: {len(store.lengths)} games, {steps} env steps of level-{cfg.pretrain.bot_level} '
                f'bots, played but not kept: {collected - steps} steps of unfinished games')
    return dict(obs=obs, action=action, returns=returns, env_steps=collected)


def pretrain(policy, cfg: EasyDict, create_cfg: EasyDict, progress: Optional[bool] = None) -> Dict[str, float]:
    """Collect the demonstrations and imitate them; returns the imitation statistics and the env steps played.
    ``progress``: show both phases as bars (None: on a terminal; else log lines, see progress.py)."""
    start = time.time()
    demos = collect_demonstrations(cfg, create_cfg, progress)
    collect_time = time.time() - start
    with torch_threads(cfg.policy.learn.torch_threads):  # the env processes are closed: every core learns
        stats = imitate(policy, demos, cfg.pretrain.epochs, cfg.policy.learn.batch_size, cfg.pretrain.learning_rate,
                        progress)
    stats.update(env_steps=demos['env_steps'], collect_time=collect_time,
                 learn_time=time.time() - start - collect_time)
    logger.info('kickstart: ' + ', '.join(f'{k} {v:.4g}' for k, v in stats.items()))
    return stats


def imitate(policy, demos: Dict[str, torch.Tensor], epochs: int, batch_size: int, learning_rate: Optional[float],
            progress: Optional[bool] = None) -> Dict[str, float]:
    """The policy's imitation of the demonstrations (GoBiggerPPOPolicy.imitate), with a bar over its minibatch
    updates and a log line at the end of each epoch. learning_rate None: the PPO updates' (policy.learn)."""
    steps = len(demos['action'])
    updates_per_epoch = math.ceil(steps / batch_size)
    logger.info(f'kickstart: imitating {steps:,} env steps, {epochs} epochs of {updates_per_epoch} minibatches')
    bar = Progress('imitation', epochs * updates_per_epoch, 'update', progress)
    epoch_stats: Dict[str, List[float]] = {}  # this epoch's minibatches so far

    def on_update(epoch: int, minibatch: Dict[str, float]) -> None:
        for name, value in minibatch.items():
            epoch_stats.setdefault(name, []).append(value)
        loss, accuracy = np.mean(epoch_stats['imitation_loss']), np.mean(epoch_stats['imitation_accuracy'])
        bar.update(1, postfix=f'epoch {epoch + 1}/{epochs} loss {loss:.3f} accuracy {accuracy:.2f}')
        if len(epoch_stats['imitation_loss']) == updates_per_epoch:
            logger.info(f'imitation epoch {epoch + 1}/{epochs}: '
                        + ', '.join(f'{k} {np.mean(v):.4g}' for k, v in epoch_stats.items()))
            epoch_stats.clear()

    try:
        return policy.imitate(demos['obs'], demos['action'], demos['returns'], epochs, on_update, learning_rate)
    finally:
        bar.close()


def _new_game() -> Dict[str, list]:
    return {'obs': [], 'action': [], 'reward': []}


class _DemoStore:
    """The finished demonstration games, written end to end into one array per key allocated once for
    ``capacity`` env steps: obs {key: (capacity, A, ...)}, action (capacity, A), reward (capacity, A). The pages
    past ``size`` are never touched, so they take no memory, and the arrays become the returned tensors without
    a copy: at the peak, memory holds the kept steps once plus the games still being played."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.size = 0  # env steps written
        self.lengths: List[int] = []  # env steps of each game, in the order written
        self.obs: Dict[str, np.ndarray] = {}
        self.action = self.reward = np.empty(0)

    def add(self, game: Dict[str, list]) -> None:
        T = len(game['reward'])
        if self.size + T > self.capacity:
            raise RuntimeError(f'a demonstration game of {T} env steps does not fit: {self.size} of '
                               f'{self.capacity} env steps are written (a game longer than game_env_steps?)')
        if not self.lengths:  # the first game gives every array's per-step shape and dtype
            self.obs = {k: _empty(self.capacity, v) for k, v in game['obs'][0].items()}
            self.action = _empty(self.capacity, game['action'][0])
            self.reward = _empty(self.capacity, game['reward'][0])
        rows = slice(self.size, self.size + T)
        for k, out in self.obs.items():
            np.stack([o[k] for o in game['obs']], out=out[rows])
        np.stack(game['action'], out=self.action[rows])
        np.stack(game['reward'], out=self.reward[rows])
        self.size += T
        self.lengths.append(T)


def _empty(capacity: int, example: Any) -> np.ndarray:
    example = np.asarray(example)
    return np.empty((capacity, ) + example.shape, example.dtype)

