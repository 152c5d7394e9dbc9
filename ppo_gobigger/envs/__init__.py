"""envs/: a GoBigger game -> fixed-shape features (features.py), the action table (actions.py), training rewards
(rewards.py) and a team's outcome (teams.py); the game an env config asks for (game.py), opponents for the teams we
do not control (opponents.py), and the DI-engine env that joins them (gobigger_env.py: GoBiggerEnv, registered in
DI-engine's ENV_REGISTRY as 'gobigger').

The first four import no GoBigger code and load here; the names of the last three load on first use (module
``__getattr__``), so that the model and the policy, which read the feature sizes and the action table, import where
GoBigger cannot.
"""
import importlib

from .actions import ACTION_NUM, ACTION_TABLE, check_actions, to_game_action
from .features import (
    CLONE_DIM, FOOD_CHANNELS, FOOD_GRID, FOOD_REL_DIM, MASK_KEYS, MAX_CLONE, MAX_THORN, OBS_DTYPES, OBS_SHAPES,
    SCALAR_DIM, THORN_DIM, GameConsts, empty_features, player_features, team_features
)
from .rewards import REWARD_KINDS, TeamReward
from .teams import EAT_COUNTS, outcome, team_eats

_LAZY = {
    'PRESETS': 'game',
    'game_config': 'game',
    'game_env_steps': 'game',
    'team_num': 'game',
    'GoBiggerEnv': 'gobigger_env',
    'BOT_LEVELS': 'opponents',
    'OPPONENT_KINDS': 'opponents',
    'POLICY_OPPONENTS': 'opponents',
    'Opponents': 'opponents',
}  # name -> the module of this package that holds it (each imports GoBigger)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f'{__name__}.{_LAZY[name]}'), name)
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
