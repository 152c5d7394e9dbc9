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


def _in_rectangles(rectangles: np.ndarray, balls: list) -> np.ndarray:
    """judge_in_rectangle of every ball (tuples starting x, y, r) in every rectangle (P, 4) -> (P, B) bool.

    Stock squares with Python's ``**`` (libm pow, which differs from x * x in the last bit for about 1 in 1,000
    values); numpy squares by multiplying. So numpy decides only where the two sides differ by far more than a
    few ulps, and the rare pairs within 1e-9 (relative) of the boundary are decided by stock's own expression."""
    xyr = np.array([b[:3] for b in balls], dtype=np.float64).reshape(-1, 3)
    x, y, r = xyr[None, :, 0], xyr[None, :, 1], xyr[None, :, 2]  # (1, B)
    x0, y0, x1, y1 = (rectangles[:, k:k + 1] for k in range(4))  # (P, 1)
    # stock's dx: x0 - x left of the box, x - x1 right of it, else 0; at most one of the two is > 0 (x0 <= x1)
    dx = np.maximum(np.maximum(x0 - x, x - x1), 0.0)  # (P, B)
    dy = np.maximum(np.maximum(y0 - y, y - y1), 0.0)
    d2, r2 = dx * dx + dy * dy, r * r
    inside = d2 <= r2
    for p, b in zip(*np.nonzero(np.abs(d2 - r2) <= 1e-9 * (d2 + r2))):
        inside[p, b] = _in_rectangle(balls[b][0], balls[b][1], balls[b][2], rectangles[p].tolist())
    return inside


class FastPlayerStatesUtil(PlayerStatesUtil):
    """PlayerStatesUtil whose get_player_states returns stock's dict, value for value."""

    def get_player_states(self, food_balls, thorns_balls, spore_balls, players):
        """Stock's signature: the food as a list of balls."""
        fx = np.array([b.position.x for b in food_balls], dtype=np.float64)
        fy = np.array([b.position.y for b in food_balls], dtype=np.float64)
        food = (list(food_balls), np.arange(len(fx)), fx, fy, None)
        return self.get_player_states_from_arrays(food, thorns_balls, spore_balls, players)

    def get_player_states_from_arrays(self, food, thorns_balls, spore_balls, players, observe=None):
        """food: FastFoodManager.arrays(), (balls at slots, live slots (F,), x (F,), y (F,), r (F,)).
        observe: the ids of the players whose states are built (None: all); what each of them sees is the same."""
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
        if observe is not None:
            players = [p for p in players if p.player_id in observe]
        rectangles = [self.get_rectangle_by_player(player) for player in players]
        rect_array = np.array(rectangles, dtype=np.float64).reshape(-1, 4)  # (P, 4)
        # one (P, B) test for the three kinds together, as lists of bools (cheaper to pick from than arrays)
        balls = thorns + spores + clones
        seen = _in_rectangles(rect_array, balls).tolist() if balls else [[]] * len(players)
        kinds = (('thorns', 0, len(thorns)), ('spore', len(thorns), len(thorns) + len(spores)),
                 ('clone', len(thorns) + len(spores), len(balls)))
        food_seen = self._food_in(rect_array, food_xy, food_radius, food_score)
        player_states = {}
        for p, (player, rectangle) in enumerate(zip(players, rectangles)):
            overlap = {'food': food_seen[p]}
            for kind, start, end in kinds:
                overlap[kind] = [list(b) for b, s in zip(balls[start:end], seen[p][start:end]) if s]
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

    def get_rectangle_by_player(self, player):
        """Stock's, on floats: Vector2 subtraction and abs are the same float operations."""
        centroid = player.cal_centroid()
        cx, cy = centroid.x, centroid.y
        xs_max = 0
        ys_max = 0
        for ball in player.balls.values():
            position, radius = ball.position, ball.radius
            x = abs(cx - position.x) + radius
            if x > xs_max:
                xs_max = x
            y = abs(cy - position.y) + radius
            if y > ys_max:
                ys_max = y
        partial = self.obs_settings.partial
        xs_max = max(xs_max, partial.vision_x_min)
        ys_max = max(ys_max, partial.vision_y_min)
        scale_up_len = max(xs_max, ys_max)
        ratio = partial.scale_up_ratio
        left_top_x = cx - scale_up_len * ratio
        left_top_y = cy - scale_up_len * ratio
        right_bottom_x = left_top_x + scale_up_len * ratio * 2
        right_bottom_y = left_top_y + scale_up_len * ratio * 2
        return (left_top_x, left_top_y, right_bottom_x, right_bottom_y)

    @staticmethod
    def _food_in(rectangles: np.ndarray, food_xy, food_radius, food_score) -> list:
        """Stock's numexpr filter (strict inequalities on each player's box grown by the food radius), for all
        players (P, 4) at once -> per player, its [x, y, r, score] rows in food order."""
        if food_xy is None:
            return [[] for _ in range(len(rectangles))]
        x, y = food_xy  # (F,)
        x0, y0, x1, y1 = (rectangles[:, k:k + 1] for k in range(4))  # (P, 1)
        inside = ((x > x0 - food_radius) & (x < x1 + food_radius)
                  & (y > y0 - food_radius) & (y < y1 + food_radius))  # (P, F)
        rows = np.empty((len(x), 4))  # (F, 4): x, y, radius, score
        rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3] = x, y, food_radius, food_score
        return [rows[seen].tolist() for seen in inside]
