"""envs/: GoBigger game -> fixed-shape features (features.py), the action table (actions.py), opponents for the
teams we do not control (opponents.py), training rewards (rewards.py), and the DI-engine env that joins them
(gobigger_env.py)."""

from .actions import ACTION_NUM, ACTION_TABLE, check_actions, to_game_action
from .features import (
    CLONE_DIM, FOOD_CHANNELS, FOOD_GRID, FOOD_REL_DIM, MASK_KEYS, MAX_CLONE, MAX_THORN, OBS_DTYPES, OBS_SHAPES,
    SCALAR_DIM, THORN_DIM, GameConsts, empty_features, player_features, team_features
)
from .gobigger_env import PRESETS, GoBiggerPPOEnv
from .opponents import BOT_LEVELS, OPPONENT_KINDS, Opponents
from .rewards import REWARD_KINDS, TeamReward
