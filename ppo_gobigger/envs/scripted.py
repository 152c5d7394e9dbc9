"""Scripted players written from GoBigger 0.2's rules: stronger opponents than its BotAgent, and a stand-in.

One ScriptedAgent plays one player. Each GoBigger step it reads its own view (and its teammates', when given) and
picks the first tactic that applies:

1. flee: a potential field pushes our balls away from every enemy ball that could eat them (score > EAT_RATIO x ours),
   weighted by how much bigger the enemy is and how close its edge is, plus a push off the walls and a pull towards
   the team's biggest ball (regroup). Never splits while fleeing.
2. split attack: a smaller enemy ball within split reach whose score our split halves would still beat by
   `split_margin`, when no enemy near could eat such a half: action_type 2 towards where the target will be.
3. hunt: chase the most valuable enemy ball we can eat within `hunt_range`.
4. merge: after a split, once the pieces may merge again, a zero direction lets the player's centre pull them together.
5. thorns: a thorns ball our biggest ball can eat, when no enemy near could eat the pieces it bursts into.
6. food: the densest cluster of food in view, nearest first.

Units are the game's: positions and radii in map units (st_t2p2: a 64 x 64 map), scores as GoBigger counts them.
An agent is deterministic given the states it is shown: it draws no random numbers (reset(seed) only clears its
memory of its last split). Variants (SCRIPTED_VARIANTS) differ in their Tactics; 'holdout' is for evaluation only.
"""

from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

EAT_RATIO = 1.3  # a ball eats another whose centre it covers if its score is > EAT_RATIO x the other's
SPLIT_ZERO_FRAMES = 14  # frames for a split ball's extra speed to decay (the presets' split_vel_zero_frame)
RECOMBINE_FRAMES = 400  # frames after a split before a player's balls merge (the presets' recombine_frame)
THORN_PIECE_MAX = 5000  # largest piece a ball bursts into on eating thorns (on_thorns_part_score_max)


@dataclass(frozen=True)
class Tactics:
    """Weights and thresholds of the scripted family. Distances in map units, ratios of scores."""
    flee_range: float = 7.0  # a threat repels when its edge is closer than this to our ball's centre
    flee_split_aware: float = 0.5  # share of a threat's own split reach added to flee_range when it could split on us
    flee_trigger: float = 0.15  # flee once the strongest threat's closeness (0 far .. 1 touching) exceeds this
    wall_range: float = 5.0  # while fleeing, the walls push once our centre is nearer than this
    wall_weight: float = 1.5  # strength of the wall push against a flee field of strength 1
    regroup_weight: float = 0.6  # while fleeing, pull towards a teammate ball bigger than the threat
    hunt_margin: float = 1.45  # chase an enemy ball when our biggest ball's score is > this x its score
    hunt_range: float = 10.0  # ... and its centre is within this distance of our biggest ball's
    split_margin: float = 1.45  # split-attack only if half of our ball is > this x the target's score
    split_reach: float = 0.75  # share of the computed split reach (SPLIT_ZERO_FRAMES flight) trusted for an attack
    split_max_clones: int = 4  # no split attack once we own this many balls
    safe_range: float = 14.0  # no split or thorns when an enemy that could eat the pieces is this near
    lead_time: float = 0.35  # seconds of the target's velocity added to its position when aiming a split
    merge_spread: float = 3.0  # merge when our balls' edges are on average this far off their centre ...
    merge_min_clones: int = 3  # ... and we own at least this many balls, RECOMBINE_FRAMES after our last split
    thorn_margin: float = 1.35  # go for thorns only if our biggest ball's score is > this x the thorns ball's
    thorn_safe_range: float = 8.0  # ... and no enemy that could eat the pieces it bursts into is this near
    food_cluster_radius: float = 3.0  # food within this distance of a food ball counts to its cluster


SCRIPTED_VARIANTS: Dict[str, Tactics] = {
    # the family's default: careful, hunts what it can catch, splits only with a wide margin
    'hunter': Tactics(),
    # kept out of every training pool, for evaluation only (a stranger's style): splits on more, from farther, with
    # more balls out, flees later and regroups less
    'holdout': Tactics(flee_range=5.0, flee_trigger=0.25, regroup_weight=0.2, hunt_margin=1.35, hunt_range=14.0,
                       split_margin=1.35, split_reach=0.9, split_max_clones=8, safe_range=10.0, merge_min_clones=5),
}


def check_variant(name: str) -> Tactics:
    """The Tactics of a variant of SCRIPTED_VARIANTS; ValueError naming ``name`` and the allowed names otherwise."""
    if name not in SCRIPTED_VARIANTS:
        raise ValueError(f'unknown scripted_variant {name!r}; allowed: {tuple(SCRIPTED_VARIANTS)}')
    return SCRIPTED_VARIANTS[name]


def score_to_radius(score: np.ndarray) -> np.ndarray:
    """GoBigger's ball radius (map units) of a score."""
    return np.sqrt(np.asarray(score, np.float64) / 100 * 0.042 + 0.15)


def split_reach(half_radius: np.ndarray) -> np.ndarray:
    """How far from a ball's centre the centre of its split-off half lands (map units), plus the half's radius:
    spawned 2 radii ahead, then carried by the split speed (4.75 + 0.95 r) * 40 / SPLIT_ZERO_FRAMES units/s decaying
    linearly to zero over SPLIT_ZERO_FRAMES frames of 0.05 s. A target's centre closer than this can be eaten."""
    flight = (4.75 + 0.95 * half_radius) * (SPLIT_ZERO_FRAMES - 1) / SPLIT_ZERO_FRAMES
    return 3.0 * half_radius + flight


def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.hypot(v[0], v[1]))
    return v / n if n > 1e-9 else np.zeros(2)


class ScriptedAgent:
    """Plays one player with the given Tactics. step(state, allies) -> [x, y, action_type] (a unit direction)."""

    def __init__(self, player_id: int, tactics: Tactics, border: Optional[Tuple[float, float]] = None,
                 frames_per_step: int = 2) -> None:
        self.player_id = int(player_id)
        self.tactics = tactics
        self.border = border  # map (width, height); None: no wall term
        self.frames_per_step = frames_per_step  # game frames between two calls of step (GoBigger's step_mul)
        self._frame = 0
        self._last_split: Optional[int] = None  # frame of our last split (ours, or a thorns ball's burst)
        self._clones = 0  # how many balls we owned at the last step

    def reset(self, seed: int = 0) -> None:
        """Start a game (the agent draws no random numbers: the seed is accepted for the Opponents interface)."""
        self._frame, self._last_split, self._clones = 0, None, 0

    def step(self, state: Mapping, allies: Sequence[Mapping] = ()) -> List:
        """GoBigger action [x, y, action_type] for the player whose player_state is ``state``; ``allies`` are its
        teammates' player_states, whose views add to its own for seeing balls (not food)."""
        self._frame += self.frames_per_step
        action = self._decide(state, allies)
        if action[2] == 2:
            self._last_split = self._frame
        return action

    # ---- the decision ----
    def _decide(self, state: Mapping, allies: Sequence[Mapping]) -> List:
        t = self.tactics
        balls = _clones([state] + list(allies))  # (N, 10) rows [x, y, r, score, vx, vy, dx, dy, player, team]
        team = int(state['team_name'])
        mine = balls[balls[:, 8] == self.player_id]
        if len(mine) == 0:  # not yet respawned: nothing to steer
            return [0.0, 0.0, 0]
        enemies = balls[balls[:, 9] != team]
        friends = balls[(balls[:, 9] == team) & (balls[:, 8] != self.player_id)]
        if len(mine) > self._clones > 0:  # a split or a burst on thorns: no merging for RECOMBINE_FRAMES
            self._last_split = self._frame
        self._clones = len(mine)
        pos, score = mine[:, :2], mine[:, 3]  # (M, 2), (M,)
        centre = (pos * score[:, None]).sum(0) / score.sum()
        big = mine[np.argmax(score)]

        flee, closeness, threat = self._flee_field(mine, enemies)
        if closeness > t.flee_trigger:
            move = flee + self._wall(centre) * float(np.hypot(*flee))
            if len(friends):
                ally = friends[np.argmax(friends[:, 3])]
                if ally[3] > threat / EAT_RATIO:  # a teammate the threat cannot eat: hide beside it
                    move = move + t.regroup_weight * float(np.hypot(*flee)) * _unit(ally[:2] - centre)
            return self._move(self._slide(move, centre), centre)

        prey = enemies[enemies[:, 3] * t.hunt_margin < big[3]] if len(enemies) else enemies
        if len(prey):
            dist = np.hypot(*(prey[:, :2] - big[:2]).T)
            attack = self._split_target(big, prey, dist, enemies, len(mine), bool(state.get('can_split', True)))
            if attack is not None:
                return [*_unit(attack - big[:2]).tolist(), 2]
            near = dist < t.hunt_range
            if near.any():
                k = int(np.argmax(np.where(near, prey[:, 3] / (dist + 1.0), -1.0)))
                return self._move(prey[k, :2] + prey[k, 4:6] * t.lead_time - big[:2], centre)

        if self._should_merge(mine, centre):
            return [0.0, 0.0, 0]
        thorn = self._thorn_target(big, _rows(state, 'thorns', 6), enemies)
        if thorn is not None:
            return self._move(thorn - big[:2], centre)
        return self._move(self._food_target(centre, _rows(state, 'food', 4)) - centre, centre)

    def _flee_field(self, mine: np.ndarray, enemies: np.ndarray) -> Tuple[np.ndarray, float, float]:
        """(push (2,), closeness of the worst threat in [0, 1] (less for a ball under half our biggest: pieces
        alone do not make the player flee), score of the biggest threat in range). Each enemy
        ball e that can eat our ball m pushes m's way, weighted by m's share of our score, min(s_e / s_m, 4) and
        (1 - gap / range)^2, gap = |p_m - p_e| - r_e and range = flee_range (+ part of e's split reach if half of e
        could still eat m)."""
        t = self.tactics
        push, worst, threat = np.zeros(2), 0.0, 0.0
        if len(enemies) == 0:
            return push, worst, threat
        total = mine[:, 3].sum()
        for m in mine:
            eaters = enemies[enemies[:, 3] > EAT_RATIO * m[3]]
            if len(eaters) == 0:
                continue
            away = m[:2] - eaters[:, :2]  # (E, 2)
            dist = np.maximum(np.hypot(*away.T), 1e-6)
            reach = np.where(eaters[:, 3] / 2 > EAT_RATIO * m[3],
                             t.flee_split_aware * split_reach(score_to_radius(eaters[:, 3] / 2)), 0.0)
            close = np.clip(1.0 - (dist - eaters[:, 2]) / (t.flee_range + reach), 0.0, 1.0)  # (E,)
            weight = np.minimum(eaters[:, 3] / m[3], 4.0) * close**2 * (m[3] / total)
            push += (away / dist[:, None] * weight[:, None]).sum(0)
            worst = max(worst, float(close.max()) * min(1.0, 2.0 * m[3] / mine[:, 3].max()))
            if close.max() > 0:
                threat = max(threat, float(eaters[close > 0, 3].max()))
        return push, worst, threat

    def _wall(self, centre: np.ndarray) -> np.ndarray:
        """Push (2,) away from the walls nearer than wall_range, growing linearly to wall_weight at the wall."""
        if self.border is None:
            return np.zeros(2)
        t, (w, h) = self.tactics, self.border
        x, y = centre
        near = lambda d: max(0.0, 1.0 - d / t.wall_range) * t.wall_weight  # noqa: E731
        return np.array([near(x) - near(w - x), near(y) - near(h - y)])

    def _slide(self, move: np.ndarray, centre: np.ndarray) -> np.ndarray:
        """A flee move (2,) that still points into a wall nearer than wall_range turns along it: its part into the
        wall goes to the other axis, on the side the move already leans to (else towards the map's middle)."""
        if self.border is None:
            return move
        out, near = move.copy(), self.tactics.wall_range
        for axis in (0, 1):
            size, c, other = self.border[axis], centre[axis], 1 - axis
            if (c < near and move[axis] < 0) or (size - c < near and move[axis] > 0):
                side = np.sign(move[other]) or np.sign(self.border[other] / 2 - centre[other]) or 1.0
                out[other] += side * abs(move[axis])
                out[axis] = 0.0
        return out

    def _split_target(self, big: np.ndarray, prey: np.ndarray, dist: np.ndarray, enemies: np.ndarray, clones: int,
                      can_split: bool) -> Optional[np.ndarray]:
        """Where to aim a split attack from our biggest ball (2,), or None. prey: (P, 10) enemy balls we can eat,
        dist: (P,) their distances from it."""
        t = self.tactics
        half = big[3] / 2
        if not can_split or clones >= t.split_max_clones:
            return None
        ok = (half > t.split_margin * prey[:, 3]) & (dist < t.split_reach * split_reach(score_to_radius(half)))
        if not ok.any():
            return None
        danger = enemies[enemies[:, 3] > EAT_RATIO * half / 2]  # could eat a quarter: what a second split leaves
        danger_dist = np.hypot(*(danger[:, :2] - big[:2]).T) if len(danger) else np.zeros(0)
        targets = {tuple(p[:2]) for p in prey[ok]}
        if any(tuple(d[:2]) not in targets and dd < t.safe_range for d, dd in zip(danger, danger_dist)):
            return None
        k = int(np.argmax(np.where(ok, prey[:, 3], -1.0)))
        return prey[k, :2] + prey[k, 4:6] * t.lead_time

    def _should_merge(self, mine: np.ndarray, centre: np.ndarray) -> bool:
        t = self.tactics
        if len(mine) < t.merge_min_clones:
            return False
        if self._last_split is not None and self._frame - self._last_split < RECOMBINE_FRAMES:
            return False
        gap = np.hypot(*(mine[:, :2] - centre).T) - mine[:, 2]  # (M,) how far each ball's edge is off the centre
        spread = float((gap * mine[:, 3]).sum() / mine[:, 3].sum())
        return spread > t.merge_spread

    def _thorn_target(self, big: np.ndarray, thorns: np.ndarray, enemies: np.ndarray) -> Optional[np.ndarray]:
        """The nearest thorns ball (position (2,)) our biggest ball can eat, unless an enemy that could eat the
        pieces it bursts into (up to THORN_PIECE_MAX) is within thorn_safe_range; else None."""
        t = self.tactics
        edible = thorns[thorns[:, 3] * t.thorn_margin < big[3]] if len(thorns) else thorns
        if len(edible) == 0:
            return None
        piece = min(THORN_PIECE_MAX, big[3] / 4)
        if len(enemies):
            eaters = enemies[enemies[:, 3] > EAT_RATIO * piece]
            if len(eaters) and np.hypot(*(eaters[:, :2] - big[:2]).T).min() < t.thorn_safe_range:
                return None
        return edible[int(np.argmin(np.hypot(*(edible[:, :2] - big[:2]).T))), :2]

    def _food_target(self, centre: np.ndarray, food: np.ndarray) -> np.ndarray:
        """The food ball (position (2,)) heading the densest cluster near us: the most food within
        food_cluster_radius of it per unit of distance from our centre; the map's centre with no food in view."""
        if len(food) == 0:
            return np.array(self.border, np.float64) / 2 if self.border else centre
        xy = food[:, :2]  # (F, 2)
        pair = np.hypot(*(xy[:, None, :] - xy[None, :, :]).transpose(2, 0, 1))  # (F, F)
        cluster = (pair < self.tactics.food_cluster_radius).sum(1)  # (F,), itself included
        dist = np.hypot(*(xy - centre).T)
        return xy[int(np.argmax(cluster / (dist + 2.0)))]

    def _move(self, direction: np.ndarray, centre: np.ndarray) -> List:
        """A move along ``direction`` (towards the map's centre if it is zero)."""
        d = _unit(direction)
        if not d.any():
            d = _unit(np.array(self.border, np.float64) / 2 - centre) if self.border else np.array([1.0, 0.0])
        if not d.any():
            d = np.array([1.0, 0.0])
        return [float(d[0]), float(d[1]), 0]


def _rows(state: Mapping, key: str, width: int) -> np.ndarray:
    """One overlap list of a player_state as an (n, width) float array."""
    rows = state['overlap'].get(key) or []
    return np.asarray(rows, np.float64).reshape(-1, width)[:, :width]


def _clones(states: Sequence[Mapping]) -> np.ndarray:
    """The clone balls in the union of the given views, (N, 10), each once (a ball seen by two players is one)."""
    balls = np.concatenate([_rows(s, 'clone', 10) for s in states])
    if len(states) > 1 and len(balls):
        _, first = np.unique(np.round(balls[:, [0, 1, 8]], 6), axis=0, return_index=True)
        balls = balls[np.sort(first)]
    return balls

