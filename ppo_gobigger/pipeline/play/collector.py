"""Rollout collector: at least n_sample env steps per call, none thrown away.

DI-engine's SampleSerialCollector discards unfinished trajectories at the end of each collect for on-policy
policies. This collector keeps every step: a game that is still running when a rollout ends is cut there and
bootstrapped with the critic's value of its next observation, and the next rollout continues the same game.

It works over any DI-engine env manager. With base and subprocess managers a rollout holds exactly n_sample steps;
segments differ in length when an env was resetting while the others stepped, or when a team sat out the games
that learn from ours only (they are padded to the longest, with a ``valid`` mask). With async_subprocess the manager
returns whichever envs are ready, a rollout may hold a step more than n_sample, and steps still in flight when a
rollout is complete open the next one.
"""
import copy
import logging
import time
from collections import deque
from typing import Any, Dict, List, Tuple

import numpy as np
import torch
from easydict import EasyDict

from .env_manager import SplitStep, env_groups

# the keys of RolloutCollector.info() that count events, summed over workers or ranks
COUNTERS = ('episode_count', 'lost_env_steps', 'env_restarts')


class RolloutCollector:

    def __init__(self, env_manager, policy, n_sample: int, teams_per_env: int = 1) -> None:
        """
        Arguments:
            env_manager: a launched DI-engine env manager.
            policy: the policy's collect_mode.
            n_sample: env steps per call over all envs.
            teams_per_env: G, the manager's env ids per game (learning from every team, pipeline/league/team_play.py):
                envs k * G .. k * G + G - 1 are the teams of one game, whose first is ours and always steps; the
                others step in the games that learn from them. An env step then gives 1 to G samples; n_sample,
                envstep and the game counters still count env steps (ours) and games.
        """
        env_num = env_manager.env_num
        if n_sample % (env_num // teams_per_env) != 0:
            raise ValueError(f'n_sample ({n_sample}) must be a multiple of collector_env_num '
                             f'({env_num // teams_per_env})')
        self._env = env_manager
        self._policy = policy
        self._teams_per_env = teams_per_env
        self._n_sample = n_sample
        self._in_flight: Dict[int, Tuple[Dict, Dict]] = {}  # env_id -> (obs, policy output) of a step not returned yet
        self.envstep = 0  # env steps collected so far; every one of them reaches the learner
        self.episode_count = 0
        self.env_episodes = [0] * (env_num // teams_per_env)  # games finished per env (a resumed run goes on)
        self.lost_env_steps = 0  # steps lost to abnormal env steps (a failed game step)
        self.recent_episodes: deque = deque(maxlen=100)  # episode-end infos of the latest games
        self.last_collect_time = 0.0

    def collect(self) -> Dict[str, Any]:
        """Returns the rollout {key: tensor (T, E, ...)} described in GoBiggerPPOPolicy._forward_learn."""
        env_num, G = self._env.env_num, self._teams_per_env
        trajectories: List[List[Dict[str, Any]]] = [[] for _ in range(env_num)]  # per env id: its transitions
        collected = 0  # env steps: the steps of our teams (ids k * G)
        start = time.time()
        # With two halves of games (a subprocess manager), one half's forward pass runs while the other half steps:
        # send half g, then read the other half, sent one turn before. With one group, send then read: a step.
        groups = [set(group) for group in env_groups(self._env, G)]
        envs = SplitStep(self._env)
        g = 0
        while collected < self._n_sample:
            ready = {i: o for i, o in self._env.ready_obs.items() if i in groups[g] and i not in self._in_flight}
            budget = self._n_sample - collected - sum(1 for i in self._in_flight if i % G == 0)
            # never step more games than the rollout still needs (all the ready teams of each); an async manager
            # returns the steps in flight only from a step() that carries at least one action, so it may overshoot
            drain = 1 if self._in_flight and len(groups) == 1 else 0
            games = list(dict.fromkeys(i // G for i in ready))[:max(budget, drain)]
            ready = {i: o for i, o in ready.items() if i // G in games}
            if ready:
                output = self._policy.forward(ready)
                for i, out in output.items():
                    # the value of this observation bootstraps the previous step of the same trajectory
                    if trajectories[i] and not trajectories[i][-1]['cut']:
                        trajectories[i][-1]['next_value'] = out['value']
                    self._in_flight[i] = (ready[i], out)
                envs.send({i: out['action'] for i, out in output.items()})
            g = (g + 1) % len(groups)
            # the next half's steps; with one group, those just sent (an async manager answers only to a step)
            sent = [i for i in groups[g] if i in self._in_flight and (len(groups) > 1 or ready)]
            if not sent:
                if not ready:
                    time.sleep(0.001)  # the envs are resetting, or (async) all in flight
                continue
            for i, timestep in envs.receive(sent).items():
                obs, out = self._in_flight.pop(i)
                if timestep.info.get('abnormal', False):
                    # the game step failed: this step is lost; the trajectory before it ends here, bootstrapped
                    # with the value already written into its next_value above
                    if trajectories[i]:
                        trajectories[i][-1]['cut'] = True
                    if i % G == 0:  # once per game
                        self.lost_env_steps += 1
                        logging.warning(f'collector env {i} returned an abnormal step ({timestep.info}); resetting it')
                        self._env.reset({i: None})
                    continue
                trajectories[i].append(self._policy.process_transition(obs, out, timestep))
                if i % G == 0:  # the game's own step, counted once, in its first team (ours)
                    collected += 1
                    if timestep.done:
                        self.episode_count += 1
                        self.env_episodes[i // G] += 1
                        self.recent_episodes.append(timestep.info)

        # Cut every segment here. A step in flight already carries V(next obs); otherwise ask the critic.
        open_ids = [i for i in range(env_num) if trajectories[i] and not trajectories[i][-1]['cut']]
        need_value = [i for i in open_ids if i not in self._in_flight]
        if need_value:
            ready = self._env.ready_obs
            for i, out in self._policy.forward({i: ready[i] for i in need_value}).items():
                trajectories[i][-1]['next_value'] = out['value']
        for i in open_ids:
            if i in self._in_flight:
                trajectories[i][-1]['next_value'] = self._in_flight[i][1]['value']
            trajectories[i][-1]['cut'] = True
        self.envstep += collected
        self.last_collect_time = time.time() - start
        return self._to_rollout(trajectories)

    def info(self) -> Dict[str, int]:
        """Counters for the log: games played, steps lost to env faults, env processes restarted, and the seconds the
        last collect() took."""
        return {
            'collect_time': self.last_collect_time,
            'episode_count': self.episode_count,
            'lost_env_steps': self.lost_env_steps,
            'env_restarts': getattr(self._env, 'env_restarts', 0),
        }

    def _to_rollout(self, trajectories: List[List[Dict[str, Any]]]) -> Dict[str, Any]:
        """Per-env segments -> time-first tensors (T, E, ...), padded to the longest segment, with ``valid``."""
        T = max(len(t) for t in trajectories)
        template = next(t[0] for t in trajectories if t)
        segments = []
        for trajectory in trajectories:
            padding = [_padding_transition(template)] * (T - len(trajectory))
            sample = self._policy.get_train_sample(trajectory + padding)  # {key: (T, ...)}
            sample['valid'] = np.arange(T) < len(trajectory)  # (T,)
            segments.append(sample)
        rollout = {k: torch.from_numpy(np.stack([s[k] for s in segments], axis=1)) for k in segments[0] if k != 'obs'}
        rollout['obs'] = {
            k: torch.from_numpy(np.stack([s['obs'][k] for s in segments], axis=1))
            for k in segments[0]['obs']
        }  # {key: (T, E, A, ...)}
        return rollout


def _padding_transition(template: Dict[str, Any]) -> Dict[str, Any]:
    """A zero transition that ends a trajectory, used only to pad short segments (masked out by ``valid``)."""
    transition = {k: np.zeros_like(v) for k, v in template.items() if k != 'obs'}
    transition['obs'] = {k: np.zeros_like(v) for k, v in template['obs'].items()}
    transition['cut'] = True
    transition['done'] = True
    return transition


def split_envs(env_num: int, parts: int) -> List[range]:
    """The global indices of ``env_num`` collector envs split over ``parts`` workers or ranks, in order; when they
    do not divide evenly the first ``env_num % parts`` parts get one env more."""
    sizes = [env_num // parts + (1 if k < env_num % parts else 0) for k in range(parts)]
    starts = np.cumsum([0] + sizes)
    return [range(int(starts[k]), int(starts[k + 1])) for k in range(parts)]


def share_config(cfg: EasyDict, envs: range) -> EasyDict:
    """The config of a worker or rank that runs the collector envs ``envs`` (global indices) of ``cfg``: its env
    count, and its share of n_sample (n_sample / collector_env_num steps per env, as in one process)."""
    steps_per_env = cfg.policy.collect.n_sample // cfg.env.collector_env_num
    share = copy.deepcopy(cfg)
    share.env.collector_env_num = len(envs)
    share.policy.collect.n_sample = steps_per_env * len(envs)
    return share
