"""Fixed-shape features for one GoBigger 0.2 player view.

Every array below is per controlled player; the env stacks them to (A, ...) where A = players per team.
Shapes never depend on what is in view: lists are capped (nearest first), zero-padded and masked.

A view often holds more clone balls than MAX_CLONE (both teams split into up to 16 balls a player). Nearest first,
the player's own balls fill most slots and the enemy balls further out drop: the ones that can eat it, or that it can
eat. A player sees its own view box only.

Coordinates are relative to the player's centre (score-weighted centroid of its own clones) and divided by
half the side of its view box, so anything in view lies in [-1, 1].

Features are per item (clone, thorn, food cell): the pairwise clone-clone and clone-thorn relations are simple
functions of them, so the model builds those itself (``ppo_gobigger.model.relations``) instead of every env step
carrying (and every rollout storing) a 16 x 16 pair tensor.
"""

import math
from itertools import chain
from typing import Dict, Mapping, NamedTuple, Optional, Sequence

import numpy as np


# ---- caps (nearest first, measured from the player's centre) ----
MAX_CLONE = 16  # clone balls in view (own, teammates', enemies'), nearest first
MAX_THORN = 8  # thorns in view, nearest first
FOOD_GRID = 8  # the view box is cut into FOOD_GRID x FOOD_GRID cells for the food map
FOOD_CHANNELS = 2  # channel 0: food balls per cell, channel 1: spore balls per cell

# ---- per-item feature sizes ----
SCALAR_DIM = 16
CLONE_DIM = 12  # channels of `clone`
CLONE_EMBED_DIM = 10  # channels 0..9 of `clone` feed the clone MLP; 10, 11 serve only the relations' eat tests
THORN_DIM = 4
FOOD_REL_DIM = 7

# ---- channels the model's relations read (ppo_gobigger.model.relations) ----
POS_X, POS_Y, RADIUS = 0, 1, 2  # in `clone` and in `thorn`: (x - c_x) / h, (y - c_y) / h, r / h
# Eat keys: a clone with eater key e eats a ball (clone or thorn) with prey key p iff e > p, i.e. iff
# score > eat_ratio * prey score in float64 (GoBigger's own test). Both keys are
# rounded from float64 through the same monotone map x -> float32(x / score_init), so exact ties stay ties and the
# answer differs from the float64 test only where the two sides lie within float32 rounding (~6e-8 relative) of each
# other without being equal. eat_ratio (a game constant, 1.3 on every preset) reaches the model only through them.
CLONE_EATER = 10  # clone: score / score_init
CLONE_PREY = 11  # clone: (eat_ratio * score) / score_init
THORN_PREY = 3  # thorn: (eat_ratio * score) / score_init

# name -> per-player shape; the env's observation space and the model both read this table.
OBS_SHAPES = {
    'scalar': (SCALAR_DIM, ),
    'food': (FOOD_CHANNELS, FOOD_GRID, FOOD_GRID),
    'food_relation': (MAX_CLONE, FOOD_REL_DIM),
    'thorn': (MAX_THORN, THORN_DIM),
    'thorn_mask': (MAX_THORN, ),
    'clone': (MAX_CLONE, CLONE_DIM),
    'clone_mask': (MAX_CLONE, ),
}
MASK_KEYS = ('thorn_mask', 'clone_mask')  # bool arrays; every other key is float32
OBS_DTYPES = {k: (np.bool_ if k in MASK_KEYS else np.float32) for k in OBS_SHAPES}

# ---- scales that bring game units to O(1) (GoBigger 0.2: maps 64-128 units wide, speeds in units per second) ----
VEL_SCALE = 10.0  # clone speed / 10: steering 2-10 units/s -> 0.2-1; fresh split or thorn pieces start at up to ~3
FOOD_CELL_SCALE = 0.5  # food map = balls per cell * 0.5 (smallest view, 36x36 units: ~1-1.5 food per cell)
FOOD_NEAR_SCALE = 0.1  # near-food count * 0.1 (a clone at score_init has ~5-10 food within 2 radii of its edge)
FOOD_NEAR_RADII = 2.0  # "near" = centre distance < r_clone * (1 + 2), i.e. within 2 radii of the clone's edge
FOOD_MISSING_DIST = 2.0  # dist written for a missing nearest/second food: beyond the view (in view: dist <= ~1.5)
SCORE_FLOOR = 1.0  # scores are floored at 1 before any log, here and in rewards.py (live players hold >= ~1000)
TEAM_SLOTS = 4  # one-hot slots for the player's index in its team (no st_* preset has more than 4 players a team)

# ---- GoBigger 0.2 overlap rows (player_state['overlap'][kind] is a list of these) ----
# food [x, y, r, score]; thorns [x, y, r, score, vx, vy]; spore [x, y, r, score, vx, vy, owner];
# clone [x, y, r, score, vx, vy, dir_x, dir_y, player_id, team_id]
ROW_WIDTH = {'food': 4, 'thorns': 6, 'spore': 7, 'clone': 10}
X, Y, R, SCORE, VX, VY = 0, 1, 2, 3, 4, 5
CLONE_PLAYER, CLONE_TEAM = 8, 9


class GameConsts(NamedTuple):
    """The game constants the features need, read once from a GoBigger config (preset merged with custom_cfg)."""
    score_init: float  # a player's starting score (13000 on st_t2p2, 1000 on st_t4p3)
    eat_ratio: float  # a ball eats another only if its score > eat_ratio * the other's (1.3)
    part_num_max: int  # most clone balls one player may own (16)
    team_num: int
    player_num_per_team: int

    @classmethod
    def from_game_cfg(cls, cfg: Mapping) -> 'GameConsts':
        balls = cfg['manager_settings']['player_manager']['ball_settings']
        return cls(
            score_init=float(balls['score_init']),
            eat_ratio=float(cfg['eat_ratio']),
            part_num_max=int(balls['part_num_max']),
            team_num=int(cfg['team_num']),
            player_num_per_team=int(cfg['player_num_per_team']),
        )


def log_score(score: float, reference: float) -> float:
    """The score transform used everywhere: log(score / reference); 0 at the reference, about -2.6..+3 in play."""
    return math.log(max(score, SCORE_FLOOR) / reference)


def empty_features(batch: Optional[int] = None) -> Dict[str, np.ndarray]:
    """All-zero features (masks False), each OBS_SHAPES[k], or (batch, *OBS_SHAPES[k]) when batch is given."""
    lead = () if batch is None else (batch, )
    return {k: np.zeros(lead + shape, OBS_DTYPES[k]) for k, shape in OBS_SHAPES.items()}


def player_features(
        global_state: Mapping,
        player_state: Mapping,
        player_id: int,
        team_id: int,
        index_in_team: int,
        consts: GameConsts,
) -> Dict[str, np.ndarray]:
    """Fixed-shape features of one player's view: {key: array of OBS_SHAPES[key]} (float32; masks bool)."""
    out = empty_features()
    _fill_player(out, global_state, player_state, player_id, team_id, index_in_team, consts)
    return out


def team_features(
        global_state: Mapping,
        player_states: Mapping,
        player_ids: Sequence[int],
        team_id: int,
        consts: GameConsts,
) -> Dict[str, np.ndarray]:
    """Features of a team's players (player_ids in team order), stacked: {key: (A, *OBS_SHAPES[key])}."""
    out = empty_features(len(player_ids))
    for a, player_id in enumerate(player_ids):
        row = {k: v[a] for k, v in out.items()}  # views: filled in place
        _fill_player(row, global_state, player_states[player_id], player_id, team_id, a, consts)
    return out


def _fill_player(out, global_state, player_state, player_id, team_id, index_in_team, consts: GameConsts) -> None:
    """Write one player's features into the zeroed arrays of out (shapes of OBS_SHAPES).

    Written for speed as well as reading: numpy's ~1 us per call dominates at these sizes, so calls are few.
    """
    x0, y0, x1, y1 = player_state['rectangle']
    # c = score-weighted centroid of the player's own clones. GoBigger builds the view box around exactly that point
    # and keeps all the player's clones inside it (PlayerStatesUtil.get_rectangle_by_player): c is the box centre.
    centre = np.array(((x0 + x1) / 2, (y0 + y1) / 2))  # (2,) game units
    half = max(x1 - x0, y1 - y0) / 2  # h: everything in view is within [-1, 1] of c after dividing by h
    overlap = player_state['overlap']
    clones = _rows(overlap['clone'], 'clone')  # (N, 10)
    food = _rows(overlap['food'], 'food')  # (F, 4)
    spore = _rows(overlap['spore'], 'spore')  # (S, 7)

    # ---- scalar (SCALAR_DIM,) ----
    # 0 time fraction: last_frame_count / total_frame      1, 2 c_x / map_w, c_y / map_h      3 h / map_w
    # 4 log(own score / score_init)      5 log(our team score / (players_per_team * score_init))
    # 6 log(best other team score / (players_per_team * score_init))   (single-team presets: our own team)
    # 7 tanh(log(our team score / best other team score))      8 can_eject      9 can_split
    # 10 own clone count / part_num_max      11 rank of our team / (team_num - 1): 0 = first, 1 = last
    # 12..15 one-hot of the player's index in its team (all zero from index TEAM_SLOTS on)
    board = global_state['leaderboard']  # {team_id: score}
    ours = board[team_id]
    others = [score for team, score in board.items() if team != team_id]
    best_other = max(others) if others else ours
    map_w, map_h = global_state['border']
    team_ref = consts.player_num_per_team * consts.score_init
    scalar = out['scalar']
    scalar[:12] = (
        global_state['last_frame_count'] / global_state['total_frame'],
        centre[0] / map_w,
        centre[1] / map_h,
        half / map_w,
        log_score(player_state['score'], consts.score_init),
        log_score(ours, team_ref),
        log_score(best_other, team_ref),
        math.tanh(log_score(ours, 1.0) - log_score(best_other, 1.0)),
        player_state['can_eject'],
        player_state['can_split'],
        np.count_nonzero(clones[:, CLONE_PLAYER] == player_id) / consts.part_num_max,
        sum(score > ours for score in others) / max(consts.team_num - 1, 1),
    )
    if index_in_team < TEAM_SLOTS:
        scalar[12 + index_in_team] = 1.0

    # ---- food (FOOD_CHANNELS, FOOD_GRID, FOOD_GRID): food (0) and spore (1) balls per cell * FOOD_CELL_SCALE ----
    # cells cut the view box; row = y, col = x. Food/spores reported just outside the box go to the edge cells.
    xy = np.concatenate([food[:, X:Y + 1], spore[:, X:Y + 1]])  # (F + S, 2)
    cell_xy = ((xy - centre) * (FOOD_GRID / 2 / half) + FOOD_GRID / 2).astype(np.int64)  # (F + S, 2): col, row
    np.minimum(np.maximum(cell_xy, 0, out=cell_xy), FOOD_GRID - 1, out=cell_xy)  # (np.clip: 3x slower here)
    cell = cell_xy[:, 1] * FOOD_GRID + cell_xy[:, 0]  # (F + S,) row-major index in one channel
    cell[len(food):] += FOOD_GRID * FOOD_GRID  # spores count in channel 1
    counts = np.bincount(cell, minlength=FOOD_CHANNELS * FOOD_GRID * FOOD_GRID)
    out['food'][:] = counts.reshape(OBS_SHAPES['food']) * FOOD_CELL_SCALE

    # ---- clone (MAX_CLONE, CLONE_DIM) + clone_mask: the clone balls in view nearest to c, nearest first ----
    # 0, 1 (x, y - c) / h      2 r / h      3 log(score / score_init)      4, 5 (vx, vy) / VEL_SCALE
    # 6 is_own      7 is_teammate (same team, other player)      8 is_enemy      9 distance to c / h
    # 10 eater key score / score_init      11 prey key (eat_ratio * score) / score_init  (see CLONE_EATER)
    keep = _nearest(clones, centre, MAX_CLONE)
    n = len(keep)
    kept = clones[keep]  # (n, 10)
    rel = (kept[:, X:Y + 1] - centre) / half  # (n, 2)
    score = kept[:, SCORE]  # (n,)
    mine = kept[:, CLONE_PLAYER] == player_id
    same_team = kept[:, CLONE_TEAM] == team_id
    clone = out['clone']
    clone[:n, POS_X:POS_Y + 1] = rel
    clone[:n, RADIUS] = kept[:, R] / half
    clone[:n, 3] = np.log(np.maximum(score, SCORE_FLOOR) / consts.score_init)
    clone[:n, 4:6] = kept[:, VX:VY + 1] / VEL_SCALE
    clone[:n, 6] = mine
    clone[:n, 7] = same_team & ~mine
    clone[:n, 8] = ~same_team
    clone[:n, 9] = np.hypot(rel[:, 0], rel[:, 1])
    clone[:n, CLONE_EATER] = score / consts.score_init
    clone[:n, CLONE_PREY] = (consts.eat_ratio * score) / consts.score_init  # in this order: see CLONE_EATER
    out['clone_mask'][:n] = True

    # ---- thorn (MAX_THORN, THORN_DIM) + thorn_mask: thorns nearest to c first ----
    # 0, 1 (x, y - c) / h      2 r / h      3 prey key (eat_ratio * score) / score_init  (see CLONE_EATER)
    if overlap['thorns']:  # often empty: st_t2p2 has only 3-4 thorns on the map
        thorns = _rows(overlap['thorns'], 'thorns')  # (T, 6)
        thorns = thorns[_nearest(thorns, centre, MAX_THORN)]  # (m, 6)
        m = len(thorns)
        thorn = out['thorn']
        thorn[:m, POS_X:RADIUS + 1] = (thorns[:, X:R + 1] - (*centre, 0.)) / half  # x, y, r columns
        thorn[:m, THORN_PREY] = (consts.eat_ratio * thorns[:, SCORE]) / consts.score_init
        out['thorn_mask'][:m] = True

    # ---- food_relation (MAX_CLONE, FOOD_REL_DIM): food balls around each kept clone ----
    # 0, 1, 2 (dx, dy, distance) / h to the nearest food ball      3, 4, 5 the same for the second nearest
    #   (missing when fewer than 2 food in view: dx = dy = 0, distance = FOOD_MISSING_DIST)
    # 6 food balls within FOOD_NEAR_RADII radii of the clone's edge * FOOD_NEAR_SCALE
    food_rel = out['food_relation'][:n]
    food_rel[:, 2] = food_rel[:, 5] = FOOD_MISSING_DIST
    food_count = len(food)
    if n and food_count:
        # in game units here; divided by h once the two nearest are picked
        f_dx = food[:, X] - kept[:, X, None]  # (n, F)
        f_dy = food[:, Y] - kept[:, Y, None]  # (n, F)
        f_dist2 = f_dx * f_dx + f_dy * f_dy  # (n, F) squared distances
        # kth=1 puts the smallest distance at column 0 and the second smallest at column 1
        near = f_dist2.argpartition(1, axis=1)[:, :2] if food_count > 1 else np.zeros((n, 1), np.int64)
        q = near.shape[1]  # 2, or 1 with a single food ball in view
        near += (np.arange(n) * food_count)[:, None]  # (n, q) indices into the raveled (n, F) arrays
        food_rel[:, 0:3 * q:3] = f_dx.take(near) / half
        food_rel[:, 1:3 * q:3] = f_dy.take(near) / half
        food_rel[:, 2:3 * q:3] = np.sqrt(f_dist2.take(near)) / half
        reach = kept[:, R] * (1 + FOOD_NEAR_RADII)  # (n,) game units
        food_rel[:, 6] = (f_dist2 < (reach * reach)[:, None]).sum(1) * FOOD_NEAR_SCALE


def _rows(items: list, kind: str) -> np.ndarray:
    """An overlap list as an (n, ROW_WIDTH[kind]) float64 array (fromiter: ~2x faster than np.array on lists)."""
    width = ROW_WIDTH[kind]
    flat = np.fromiter(chain.from_iterable(items), np.float64, count=len(items) * width)
    return flat.reshape(len(items), width)


def _nearest(rows: np.ndarray, centre: np.ndarray, cap: int) -> np.ndarray:
    """Indices of the rows whose (x, y) lie nearest to centre, nearest first (stable on ties), at most cap."""
    offset = rows[:, X:Y + 1] - centre
    return (offset[:, 0] * offset[:, 0] + offset[:, 1] * offset[:, 1]).argsort(kind='stable')[:cap]
