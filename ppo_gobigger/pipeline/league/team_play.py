"""Policy-played opponents in training: the collector's view of envs in which the caller plays every team.

With env.opponent 'self' or 'league' each env observes, acts and is rewarded per team: obs {key: (G, A, ...)},
action (G, A), reward (G, A), our team first (team 0; see envs/gobigger_env.py). ``TeamPlay`` wraps the env manager of
such envs so that the rollout collector sees envs of one team each, as with bot opponents:

    learning teams  every team of a game whose other teams all play the current weights (every game with opponent
                    'self'; a league's games whose draw gave every other team to self-play), and team 0 (ours) only
                    of the others. Env i's team r is the collector's env i * G + r; the collector acts for the
                    learning teams of each env's game, and sees the other ids of a game that learns from team 0 only
                    as envs with nothing to step
    opponent teams  the other teams: TeamPlay acts for them before the env steps, with one batched forward pass
                    per model and step over all envs: the current weights ('self'; a league's self-play draws)
                    or a league snapshot, actions sampled from the policy; a league's bot members are handed to
                    the env's bots (the action's bot_level)

A league draws each game's opponents from the pool when the game's first observation is read, and records the outcome
when it ends (pool.py: what a draw depends on, and what not).
"""
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import torch
from ding.envs import BaseEnvTimestep
from torch.distributions import Categorical

from ...policy.inference import stack_obs
from ..play.env_manager import SplitStep
from .pool import LeaguePool, Member


class TeamPlay:
    """An env manager of policy-opponent envs, seen as an env manager of single-team envs (the collector's)."""

    def __init__(self, env_manager, policy, teams: int, pool: Optional[LeaguePool] = None,
                 device: str = 'cpu') -> None:
        """
        Arguments:
            env_manager: a launched DI-engine env manager of envs with env.opponent 'self' or 'league'.
            policy: the policy's collect_mode: plays the current weights' opponent teams.
            teams: G, the teams of a game (the leading axis of each env's arrays).
            pool: the league's pool (opponent 'league'); None: every other team plays the current weights.
            device: where the snapshots' forward passes run.
        """
        self._env = env_manager
        self._policy = policy
        self._teams = teams
        self.teams_per_env = teams  # G collector env ids per env
        self._pool = pool
        self._split = SplitStep(env_manager)
        self._device = device
        self._obs: Dict[int, Dict[str, np.ndarray]] = {}  # env id -> its last observation (G, A, ...)
        # env id -> who plays the game's opponent teams L..G-1 (None: the current weights); teams 0..L-1 learn
        self._opponents: Dict[int, List[Optional[Member]]] = {}

    @property
    def env_num(self) -> int:
        return self._env.env_num * self.teams_per_env

    @property
    def env_restarts(self) -> int:
        return getattr(self._env, 'env_restarts', 0)

    @property
    def ready_obs(self) -> Dict[int, Dict[str, np.ndarray]]:
        G = self.teams_per_env
        ready = self._env.ready_obs
        self._obs.update(ready)
        for i in ready:  # in any order: a draw depends on its env and game alone (pool.py)
            if i not in self._opponents:
                self._start_game(i)
        return {
            i * G + r: {k: v[r] for k, v in ready[i].items()}
            for i in sorted(ready) for r in range(self._learning_teams(i))
        }

    @property
    def can_send_ahead(self) -> bool:
        return getattr(self._env, 'can_send_ahead', False)

    def step(self, actions: Dict[int, Any]) -> Dict[int, BaseEnvTimestep]:
        """``actions`` {collector env id: (A,)} must hold all learning teams of every env it steps."""
        self.send(actions)
        return self.receive(list(actions))

    def send(self, actions: Dict[int, Any]) -> None:
        """The first half of ``step``: the opponents' actions, then every env's step is started (``receive`` reads
        them)."""
        G = self.teams_per_env
        by_env: Dict[int, Dict[int, np.ndarray]] = {}  # env id -> {team index: (A,) action}
        for collector_id, action in actions.items():
            by_env.setdefault(collector_id // G, {})[collector_id % G] = np.asarray(action)
        incomplete = [
            i for i, given in by_env.items()
            if i not in self._opponents or sorted(given) != list(range(self._learning_teams(i)))
        ]
        if incomplete:
            raise RuntimeError(f'envs {incomplete} did not get actions for exactly the learning teams of their game')
        opponent_actions, bot_levels = self._act_for_opponents(list(by_env))
        self._split.send({
            i: {
                'action': np.stack([given[r] for r in range(len(given))] + list(opponent_actions[i])),  # (G, A)
                'bot_level': bot_levels[i],  # (G,)
            }
            for i, given in by_env.items()
        })

    def receive(self, env_ids: Sequence[int]) -> Dict[int, BaseEnvTimestep]:
        """The second half of ``step``: the timesteps of the games of ``env_ids`` (collector env ids), per team."""
        G = self.teams_per_env
        out = {}
        for i, timestep in self._split.receive(list(dict.fromkeys(c // G for c in env_ids))).items():
            info = timestep.info
            for r in range(self._learning_teams(i)):
                if info.get('abnormal', False) or r == 0:
                    team_info = info
                else:  # the team's own outcome at a game's end
                    team_info = info['teams'][r] if timestep.done else {}
                obs = {k: v[r] for k, v in timestep.obs.items()}
                out[i * G + r] = BaseEnvTimestep(obs, timestep.reward[r], timestep.done, team_info)
            if info.get('abnormal', False):
                if self._opponents.pop(i, None) is not None and self._pool is not None:
                    self._pool.abandon(i)  # the collector resets the env: a new game, new opponents
            elif timestep.done:
                self._end_game(i, info['teams'])
        return out

    def reset(self, reset_param: Optional[Dict[int, Any]] = None) -> None:
        """Reset the envs of the given collector env ids (all: None); their next games draw new opponents."""
        envs = None if reset_param is None else {i // self.teams_per_env: None for i in reset_param}
        for i in (range(self._env.env_num) if envs is None else envs):
            self._opponents.pop(i, None)
            self._obs.pop(i, None)
        self._env.reset(envs)

    def _start_game(self, env_id: int) -> None:
        """A new game in env ``env_id``: draw who plays its other teams, and so which teams learn."""
        others = self._teams - 1
        drawn = self._pool.draw(others, env_id) if self._pool is not None else [None] * others
        every_team = self.teams_per_env > 1 and all(member is None for member in drawn)
        self._opponents[env_id] = [] if every_team else drawn

    def _learning_teams(self, env_id: int) -> int:
        """L: the teams 0..L-1 of the env's game learn (1, or G when every team plays the current weights)."""
        return self._teams - len(self._opponents[env_id])

    def _end_game(self, env_id: int, teams: List[Dict[str, Any]]) -> None:
        learning = self._learning_teams(env_id)
        opponents = self._opponents.pop(env_id)
        if self._pool is not None:
            ours = teams[0]['rank']
            self._pool.record(env_id, opponents, [ours < team['rank'] for team in teams[learning:]])

    def _act_for_opponents(self, env_ids: List[int]):
        """({env id: (G - L, A) actions of the opponent teams}, {env id: (G,) bot levels}): one forward pass per
        model over every env's teams that it plays."""
        G = self._teams
        actions = {i: [None] * len(self._opponents[i]) for i in env_ids}
        bot_levels = {i: np.zeros(G, np.int64) for i in env_ids}
        by_model: Dict[Optional[str], List] = {}  # member name (None: current weights) -> [(env id, team index, k)]
        members: Dict[str, Member] = {}
        A = next(iter(self._obs.values()))['scalar'].shape[1]
        for i in env_ids:
            L = self._learning_teams(i)
            for k, member in enumerate(self._opponents[i]):
                team = L + k
                if member is not None and member.bot_level:
                    bot_levels[i][team] = member.bot_level
                    actions[i][k] = np.zeros(A, np.int64)  # checked by the env, then ignored
                    continue
                name = None if member is None else member.name
                by_model.setdefault(name, []).append((i, team, k))
                if member is not None:
                    members[name] = member
        for name, places in by_model.items():
            observations = [{key: v[team] for key, v in self._obs[i].items()} for i, team, _ in places]
            if name is None:
                output = self._policy.forward(dict(enumerate(observations)))
                played = [output[b]['action'] for b in range(len(places))]
            else:
                played = sample_actions(self._pool.model(members[name]), observations, self._device)
            for (i, _, k), action in zip(places, played):
                actions[i][k] = action
        return actions, bot_levels


@torch.inference_mode()
def sample_actions(model: torch.nn.Module, observations: List[Dict[str, np.ndarray]], device: str) -> np.ndarray:
    """(B, A) actions sampled from ``model``'s policy, one row per observation {key: (A, ...)}."""
    logit = model(stack_obs(observations, device), mode='compute_actor')['logit']  # (B, A, N)
    return Categorical(logits=logit, validate_args=False).sample().cpu().numpy()
