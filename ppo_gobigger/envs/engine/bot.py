"""GoBigger 0.2.1's BotAgent with cheap preprocessing: the same decisions and the same global-`random` draws.

Stock turns every ball in view into a dict holding a pygame Vector2, deep-copies every clone dict to sort it and
every closer food while searching the nearest. Nothing downstream mutates those dicts, so the copies go; of the
clones only the largest own and the largest other ball get a Vector2 (no level reads another's position), the
spores none (no level reads them); its plan queue needs no locks; the food stays an (F, 2) array and the nearest one is found with numpy using stock's distance arithmetic
(sqrt(dx*dx + dy*dy), the first strict minimum below 10000).
"""
from collections import deque

import numpy as np
from pygame.math import Vector2

from gobigger.agents import BotAgent


class _PlanQueue(deque):
    """The put / get / qsize of the queue.Queue in which BotAgent keeps its planned actions, without the locks
    (one thread steps a bot): a put and a get cost ~3 us of a ~17 us step with them."""
    put = deque.append
    get = deque.popleft

    def qsize(self) -> int:
        return len(self)


class FastBotAgent(BotAgent):
    """BotAgent(name, level) whose step returns what stock's returns, draw for draw."""

    def __init__(self, name=None, level=3) -> None:
        super().__init__(name=name, level=level)
        self.actions_queue = _PlanQueue()

    def preprocess(self, overlap):
        new_overlap = {}
        for k, v in overlap.items():
            if k == 'food':
                new_overlap[k] = np.array(v, dtype=np.float64).reshape(-1, 4)[:, :2] if len(v) else None
            elif k == 'clone':  # 'position' is added by process_clone_balls to the only balls read for it
                new_overlap[k] = [{'radius': vv[2], 'player': int(vv[-2]), 'team': int(vv[-1]), 'row': vv}
                                  for vv in v]
            elif k == 'spore':
                new_overlap[k] = []  # no level of the bot reads the spores
            else:
                new_overlap[k] = [{'position': Vector2(vv[0], vv[1]), 'radius': vv[2]} for vv in v]
        return new_overlap

    def process_clone_balls(self, clone_balls):
        name = self.name
        my_clone_balls = [ball for ball in clone_balls if ball['player'] == name]
        my_clone_balls.sort(key=lambda a: a['radius'], reverse=True)
        others_clone_balls = [ball for ball in clone_balls if ball['player'] != name]
        others_clone_balls.sort(key=lambda a: a['radius'], reverse=True)
        for balls in (my_clone_balls, others_clone_balls):  # every level reads the position of the largest only
            if balls:
                row = balls[0]['row']
                balls[0]['position'] = Vector2(row[0], row[1])
        return my_clone_balls, others_clone_balls

    def process_thorns_balls(self, thorns_balls, my_max_clone_ball):
        min_distance = 10000
        min_thorns_ball = None
        my_radius, my_position = my_max_clone_ball['radius'], my_max_clone_ball['position']
        for thorns_ball in thorns_balls:
            if self.can_eat(my_radius, thorns_ball['radius']):
                distance = (thorns_ball['position'] - my_position).length()
                if distance < min_distance:
                    min_distance = distance
                    min_thorns_ball = thorns_ball
        return min_distance, min_thorns_ball

    def process_food_balls(self, food_xy, my_max_clone_ball):
        """food_xy: (F, 2) array or None. Returns (distance, {'position', 'radius'}) of the nearest, or (10000, None)."""
        if food_xy is None:
            return 10000, None
        position = my_max_clone_ball['position']
        dx = food_xy[:, 0] - position.x
        dy = food_xy[:, 1] - position.y
        distance = np.sqrt(dx * dx + dy * dy)  # (F,): Vector2.length of (food - mine)
        k = int(np.argmin(distance))  # the first of equal minima, as stock's strict '<'
        if not distance[k] < 10000:
            return 10000, None
        return float(distance[k]), {'position': Vector2(food_xy[k, 0], food_xy[k, 1])}
