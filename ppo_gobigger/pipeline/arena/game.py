"""A GoBigger game in which checkpoints' policies play every player but (optionally) one a person controls.

The game is GoBigger's own env (envs.engine.create_game, the default engine) on the checkpoints' preset. Each
checkpoint plays its teams' players greedily (each player's most likely action, as the league tool and the
evaluator play), from the same features it was trained on (envs/features.py), deciding on every
env.action_repeat-th GoBigger step it was trained with; in between its players keep moving, as in training. The
person's player (``human_id``) is left out of its team's policy actions and takes a GoBigger action
[x, y, action_type] on every GoBigger step instead.

Who plays which team: ``seats`` lists a policy name per team id, e.g. ['A', 'B'] or ['A', 'B', 'B', 'B'].
"""
import math
import random
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence

import torch
from easydict import EasyDict

from ...config import ConfigError
from ...envs.actions import to_game_action
from ...envs.engine import create_game
from ...envs.features import GameConsts, team_features
from ...envs.game import STEP_MUL
from ..league.round_robin import greedy_actions


@dataclass
class Seat:
    """A policy that plays teams: its model and the env settings it was trained with (round_robin's trained_env)."""
    name: str
    model: torch.nn.Module
    trained_env: Dict[str, Any]  # preset and round_robin.PLAY_ENV_KEYS (action_repeat)


class ArenaGame:
    """One game: ``step(human_action)`` advances one GoBigger step (STEP_MUL frames)."""

    def __init__(self, seats: Sequence[Seat], teams: Sequence[str], human_id: Optional[int] = None,
                 seed: Optional[int] = None, frame_limit: Optional[int] = None) -> None:
        """
        Arguments:
            seats: the policies, each named once.
            teams: the name of the seat playing each team id; its length must be the preset's team_num.
            human_id: the player id a person controls (None: the policies play every player).
            seed: the game's seed (None: a random one).
            frame_limit: frames of the game (None: the preset's).
        """
        by_name = {s.name: s for s in seats}
        presets = {s.trained_env['preset'] for s in seats}
        if len(presets) != 1:
            trained = ', '.join(f"{s.name} on {s.trained_env['preset']}" for s in seats)
            raise ConfigError(f'the checkpoints of one game must share a preset; got {trained}')
        self.preset = presets.pop()
        custom_cfg = {} if frame_limit is None else {'frame_limit': int(frame_limit)}
        self.step_mul = STEP_MUL
        self.seed = random.SystemRandom().randrange(2**31) if seed is None else int(seed)
        random.seed(self.seed)  # GoBigger's Server() and its bots draw from the global `random`
        self.env = create_game(self.preset, custom_cfg, self.step_mul)  # the default engine
        cfg = EasyDict(self.env.server.cfg)
        self.team_num, self.player_num = int(cfg.team_num), int(cfg.player_num_per_team)  # G, A
        if len(teams) != self.team_num or set(teams) - set(by_name):
            raise ConfigError(f'{self.preset} has {self.team_num} teams: name a seat of {sorted(by_name)} for each; '
                              f'got {list(teams)}')
        players = self.team_num * self.player_num
        if human_id is not None and not (isinstance(human_id, int) and 0 <= human_id < players):
            raise ConfigError(f'player {human_id!r} is not a player of {self.preset}: ids 0..{players - 1}')
        self.human_id = human_id
        self._consts = GameConsts.from_game_cfg(cfg)
        self._seats = [by_name[name] for name in teams]  # (G,) who plays each team
        self.frame_limit = int(cfg.frame_limit)
        self.steps = 0  # GoBigger steps played
        self.env.server._random.seed(self.seed)  # the managers' random (the GoBigger note's seeding pitfall)
        self.global_state, self.player_states = self.env.reset()
        self.done = False

    def team_ids(self, team: int) -> List[int]:
        """Team t owns players t*A .. t*A+A-1."""
        return [team * self.player_num + j for j in range(self.player_num)]

    def step(self, human_action: Optional[Sequence] = None) -> bool:
        """One GoBigger step: the policies' actions where they decide, ``human_action`` [x, y, action_type] for the
        person's player (None: it keeps moving). Returns whether the game is over."""
        if self.done:
            raise RuntimeError('the game is over')
        actions: Dict[int, List] = {}
        for team, seat in enumerate(self._seats):
            if self.steps % seat.trained_env['action_repeat']:
                continue  # between two of its decisions: its players keep moving
            ids = self.team_ids(team)
            obs = team_features(self.global_state, self.player_states, ids, team, self._consts)  # (A, ...)
            (team_actions, ) = greedy_actions(seat.model, [obs])  # (A,)
            actions.update({pid: to_game_action(int(k)) for pid, k in zip(ids, team_actions) if pid != self.human_id})
        if self.human_id is not None and human_action is not None:
            actions[self.human_id] = list(human_action)
        (self.global_state, self.player_states), _, done, _ = self.env.step(actions)
        self.steps += 1
        self.done = bool(done)
        return self.done

    def standings(self) -> List[Dict[str, Any]]:
        """Each team's score, rank (1 = first) and who played it, best first."""
        board: Mapping[int, float] = self.global_state['leaderboard']
        rows = [dict(team=t, score=float(board[t]), rank=1 + sum(s > board[t] for s in board.values()),
                     played_by=self._seats[t].name + (' + you' if self._is_human_team(t) else ''))
                for t in range(self.team_num)]
        return sorted(rows, key=lambda r: (r['rank'], r['team']))

    def total_steps(self) -> int:
        return math.ceil(self.frame_limit / self.step_mul)

    def close(self) -> None:
        self.env.close()

    def _is_human_team(self, team: int) -> bool:
        return self.human_id is not None and self.human_id // self.player_num == team
