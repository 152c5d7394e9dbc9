"""GoBigger's 'precision' collision detection, answered with numpy over all (query, ball) pairs at once.

Stock (gobigger/utils/collision_detection.py, PrecisionCollisionDetection) files every ball in a row of the map
(row = int((x - minx) / height * precision)), sorts each row by y (stable), and for each query walks the rows its
box spans, from the last ball of the row with y < top edge (found by binary lifting, so that one ball is checked
too) to the first with y > bottom edge, keeping the balls that ``judge_cover`` the query. The answer here is the
same set in the same order: the cover test (distance < either radius) runs on the whole (Q, G) matrix with stock's
float operations, and the survivors are then kept or dropped by stock's row/window rule and ordered by
(row, y, gallery index), which is the order stock visits them.
"""
from typing import Dict, List

import numpy as np


class FastPrecisionCollisionDetection:
    """Drop-in for PrecisionCollisionDetection(border, precision): ``solve(query_list, gallery_list)``."""

    def __init__(self, border, precision: int = 50) -> None:
        self.border = border
        self.precision = precision

    def get_row(self, x: float) -> int:
        return int((x - self.border.minx) / self.border.height * self.precision)

    def solve(self, query_list: list, gallery_list: list) -> Dict[int, list]:
        """Stock's signature: the gallery as one list of balls."""
        return self.solve_with_food(query_list, gallery_list, None)

    def solve_with_food(self, query_list: list, others: list, food) -> Dict[int, list]:
        """The gallery is ``others`` followed by the food of FastFoodManager.arrays() (None: no food), in that order
        (stock's: player balls, thorns, spores, food). Returns {query index: [balls it collides with]}; a query
        with none is left out (stock lists it with [], which the server skips alike)."""
        results: Dict[int, List] = {}
        if not query_list:
            return results
        n_others = len(others)
        gx, gy, gr = np.array([(b.position.x, b.position.y, b.radius) for b in others],
                              dtype=np.float64).reshape(-1, 3).T
        if food is not None:
            food_balls, food_slots, fx, fy, fr = food
            gx, gy, gr = np.concatenate((gx, fx)), np.concatenate((gy, fy)), np.concatenate((gr, fr))  # (G,)
        if len(gx) == 0:
            return results
        # query arrays, (Q,)
        qx, qy, qr = np.array([(b.position.x, b.position.y, b.radius) for b in query_list],
                              dtype=np.float64).reshape(-1, 3).T
        # judge_cover: dis = (q.position - g.position).length(); q.radius > dis or g.radius > dis   (Q, G)
        dx = qx[:, None] - gx[None, :]
        dy = qy[:, None] - gy[None, :]
        dis = np.sqrt(dx * dx + dy * dy)
        cover = (qr[:, None] > dis) | (gr[None, :] > dis)
        qi, gj = np.nonzero(cover)
        if len(qi) == 0:
            return results
        minx, height, precision = self.border.minx, self.border.height, self.precision
        rows = None  # every gallery ball's row, computed only if a ball lies above a query's window
        kept: Dict[int, list] = {}
        for i, j in zip(qi.tolist(), gj.tolist()):
            query = query_list[i]
            ball = others[j] if j < n_others else food_balls[food_slots[j - n_others]]
            if ball is query:  # judge_cover: a ball never covers itself (ball ids are unique)
                continue
            px, py, pr = query.position.x, query.position.y, query.radius
            x, y = ball.position.x, ball.position.y
            row = int((x - minx) / height * precision)
            if row < int((px - pr - minx) / height * precision) or row > int((px + pr - minx) / height * precision):
                continue
            right = py + pr
            if y > right:
                continue
            left = py - pr
            if y < left:  # stock checks only the last ball of the row above the window
                if rows is None:
                    rows = np.trunc((gx - minx) / height * precision)
                above = np.nonzero((rows == row) & (gy < left))[0]
                last = above[np.lexsort((above, gy[above]))[-1]]
                if last != j:
                    continue
            kept.setdefault(i, []).append((row, y, j, ball))
        for i, found in kept.items():
            found.sort(key=lambda t: t[:3])
            results[i] = [t[3] for t in found]
        return results
