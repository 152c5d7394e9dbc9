"""The discrete action table: one policy action index -> one GoBigger 0.2 action [x, y, action_type].

| index  | meaning                              | GoBigger action                                  |
| ------ | ------------------------------------ | ------------------------------------------------ |
| 0..15  | move towards angle 2*pi*k/16         | [cos(2*pi*k/16), sin(2*pi*k/16), 0]  (0 = move)  |
| 16     | eject a spore from every clone       | [None, None, 1]  (None keeps the current heading) |
| 17     | split every clone that can split     | [None, None, 2]                                  |

GoBigger 0.2 has no "stop" action (0.1.x had one); angles are in the game's x/y frame.
"""

import math
from typing import Any, List, Mapping, Sequence, Tuple

import numpy as np

MOVE_DIRECTIONS = 16  # evenly spaced unit directions
EJECT = MOVE_DIRECTIONS  # 16
SPLIT = MOVE_DIRECTIONS + 1  # 17
ACTION_NUM = MOVE_DIRECTIONS + 2  # 18
# the kinds of action, as slices of the table: the moves, eject, split
ACTION_KINDS = (slice(0, MOVE_DIRECTIONS), slice(EJECT, EJECT + 1), slice(SPLIT, SPLIT + 1))

# GoBigger action_type values
MOVE_TYPE, EJECT_TYPE, SPLIT_TYPE = 0, 1, 2

ACTION_TABLE = tuple(
    [
        (math.cos(2 * math.pi * k / MOVE_DIRECTIONS), math.sin(2 * math.pi * k / MOVE_DIRECTIONS), MOVE_TYPE)
        for k in range(MOVE_DIRECTIONS)
    ] + [(None, None, EJECT_TYPE), (None, None, SPLIT_TYPE)]
)  # ACTION_NUM tuples (x, y, action_type)


def to_game_action(index: int) -> List:
    """The GoBigger action [x, y, action_type] for one action index in [0, ACTION_NUM) (a fresh list)."""
    return list(ACTION_TABLE[index])


def from_game_action(action: Sequence) -> int:
    """The action index nearest to a GoBigger action [x, y, action_type] (e.g. a bot's): eject and split map to
    EJECT and SPLIT, a move to the closest of the MOVE_DIRECTIONS angles (a zero or missing direction to 0)."""
    x, y, action_type = action
    if action_type == EJECT_TYPE:
        return EJECT
    if action_type == SPLIT_TYPE:
        return SPLIT
    if not x and not y:
        return 0
    return round(math.atan2(y, x) / (2 * math.pi) * MOVE_DIRECTIONS) % MOVE_DIRECTIONS


def check_actions(action: Any, player_num: int) -> np.ndarray:
    """Validate a team's actions and return them as an int64 array of shape (player_num,).

    Accepts numpy arrays, lists, torch tensors (anything np.asarray takes), and a scalar when player_num == 1.
    Raises ValueError naming the bad value(s) and what is allowed.
    """
    arr = np.asarray(action)
    if arr.ndim == 0 and player_num == 1:
        arr = arr.reshape(1)
    if arr.shape != (player_num, ):
        raise ValueError(f'expected {player_num} action indices, shape ({player_num},); got {arr.shape}: {action!r}')
    if arr.dtype.kind == 'f' and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
        arr = arr.astype(np.int64)  # whole-number floats, e.g. from a float tensor
    if arr.dtype.kind not in 'iu':
        raise ValueError(f'action indices must be integers in [0, {ACTION_NUM}); got {arr.tolist()} ({arr.dtype})')
    bad = (arr < 0) | (arr >= ACTION_NUM)
    if bad.any():
        raise ValueError(f'action value(s) {arr[bad].tolist()} outside the allowed range [0, {ACTION_NUM})')
    return arr.astype(np.int64)


def check_teams_action(
    action: Any, team_num: int, player_num: int, bot_levels: Sequence[int]
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate a step's action when the caller plays every team (G = team_num teams, ours first).

    action: (G, A) indices, or {'action': (G, A), 'bot_level': (G,), 'hold': (G,)} (see gobigger_env's docstring);
    a team's bot level is 0 (its given actions) or one of bot_levels.
    Returns (actions (G, A) int64, bot levels (G,) int64, holds (G,) bool); ValueError naming a bad one.
    """
    G, A = team_num, player_num
    levels, holds = np.zeros(G, np.int64), np.zeros(G, bool)
    if isinstance(action, Mapping):
        if set(action) - {'action', 'bot_level', 'hold'} or 'action' not in action:
            raise ValueError(f"a step's action mapping takes the keys 'action', 'bot_level' and 'hold'; got "
                             f"{sorted(action)}")
        levels = np.asarray(action.get('bot_level', levels))
        if levels.shape != (G, ) or not all(int(k) in (0, *bot_levels) for k in levels):
            raise ValueError(f'bot_level must be {G} values (one per team, ours first), each 0 (the given '
                             f'actions) or one of {tuple(bot_levels)}; got {levels.tolist()}')
        holds = np.asarray(action.get('hold', holds))
        if holds.shape != (G, ) or holds.dtype != bool:
            raise ValueError(f'hold must be {G} bools (one per team, ours first); got {holds.tolist()}')
        action = action['action']
    given = np.asarray(action)
    if given.shape != (G, A):
        raise ValueError(f'with policy opponents the action gives each team its A actions, shape ({G}, {A}); got '
                         f'{given.shape}')
    return np.stack([check_actions(team, A) for team in given]), levels.astype(np.int64), holds
