"""GoBigger's player views (PlayerStatesUtil.get_player_states) with stock's values, built with less overhead.

Stock builds the food positions array once per call and filters it per player with numexpr; the other kinds are
tested ball by ball with BaseBall.judge_in_rectangle. Here the food filter is the same comparisons in numpy, and
the ball tests are stock's expression inlined, over (x, y, r) tuples read once per call instead of once per player.
"""
import numpy as np

from gobigger.utils import PlayerStatesUtil


def _in_rectangle(x: float, y: float, r: float, rectangle) -> bool:
    """BaseBall.judge_in_rectangle, the same expression on plain floats."""
    dx = rectangle[0] - x if rectangle[0] > x else x - rectangle[2] if x > rectangle[2] else 0
    dy = rectangle[1] - y if rectangle[1] > y else y - rectangle[3] if y > rectangle[3] else 0
    return dx**2 + dy**2 <= r**2


class FastPlayerStatesUtil(PlayerStatesUtil):
    """PlayerStatesUtil whose get_player_states returns stock's dict, value for value."""

    def get_player_states(self, food_balls, thorns_balls, spore_balls, players):
        """Stock's signature: the food as a list of balls."""
        fx = np.array([b.position.x for b in food_balls], dtype=np.float64)
        fy = np.array([b.position.y for b in food_balls], dtype=np.float64)
        food = (list(food_balls), np.arange(len(fx)), fx, fy, None)
        return self.get_player_states_from_arrays(food, thorns_balls, spore_balls, players)

    def get_player_states_from_arrays(self, food, thorns_balls, spore_balls, players):
        """food: FastFoodManager.arrays(), (balls at slots, live slots (F,), x (F,), y (F,), r (F,))."""
        food_balls, food_slots, fx, fy, _ = food
        if len(food_slots) > 0:
            first = food_balls[food_slots[0]]  # stock: every food is reported with the first one's radius, score
            food_radius = first.radius
            food_score = first.score
            food_xy = (fx, fy)
        else:
            food_radius = food_score = 0
            food_xy = None
        thorns = [(b.position.x, b.position.y, b.radius, b.score, b.vel.x, b.vel.y) for b in thorns_balls]
        spores = [(b.position.x, b.position.y, b.radius, b.score, b.vel.x, b.vel.y, b.owner) for b in spore_balls]
        clones = [(b.position.x, b.position.y, b.radius, b.score, b.vel.x, b.vel.y, b.direction.x, b.direction.y,
                   p.player_id, p.team_id) for p in players for b in p.balls.values()]
        player_states = {}
        for player in players:
            rectangle = self.get_rectangle_by_player(player)
            overlap = {'food': self._food_in(rectangle, food_xy, food_radius, food_score)}
            overlap['thorns'] = [list(t) for t in thorns if _in_rectangle(t[0], t[1], t[2], rectangle)]
            overlap['spore'] = [list(s) for s in spores if _in_rectangle(s[0], s[1], s[2], rectangle)]
            overlap['clone'] = [list(c) for c in clones if _in_rectangle(c[0], c[1], c[2], rectangle)]
            player_score, can_split, can_eject = player.get_info()
            player_states[player.player_id] = {
                'rectangle': rectangle,
                'overlap': overlap,
                'team_name': player.team_id,
                'score': player_score,
                'can_eject': can_eject,
                'can_split': can_split,
            }
        return player_states

    @staticmethod
    def _food_in(rectangle, food_xy, food_radius, food_score) -> list:
        """Stock's numexpr filter (strict inequalities on the box grown by the food radius) as [x, y, r, score] rows."""
        if food_xy is None:
            return []
        x, y = food_xy
        inside = ((x > rectangle[0] - food_radius) & (x < rectangle[2] + food_radius)
                  & (y > rectangle[1] - food_radius) & (y < rectangle[3] + food_radius))
        x, y = x[inside], y[inside]
        return np.stack((x, y, np.ones_like(x) * food_radius, np.ones_like(x) * food_score), axis=-1).tolist()
