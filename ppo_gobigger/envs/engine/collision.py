"""GoBigger's 'precision' collision detection, answered with numpy over all (query, ball) pairs at once.

Stock (gobigger/utils/collision_detection.py, PrecisionCollisionDetection) files every ball in a row of the map
(row = int((x - minx) / height * precision)), sorts each row by y (stable), and for each query walks the rows its
box spans, from the last ball of the row with y < top edge (found by binary lifting, so that one ball is checked
too) to the first with y > bottom edge, keeping the balls that ``judge_cover`` the query. The answer here is the
same set in the same order: the cover test (distance < either radius) runs with stock's float operations on the
pairs close enough along x to cover (a conservative cut over the whole (Q, G) matrix), and the survivors are then
kept or dropped by stock's row/window rule and ordered by (row, y, gallery index), which is the order stock visits
them.
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
        # Candidates: a pair covers only if dis < the larger radius, and dis >= |dx| up to rounding (~1e-16
        # relative), so pairs with |dx| >= max(q.radius, the largest gallery radius) * (1 + 1e-9) cannot cover.
        # Most pairs (food far along x) drop here after three (Q, G) operations instead of nine.
        reach = np.maximum(qr, gr.max()) * (1 + 1e-9)  # (Q,)
        qi, gj = np.nonzero(np.abs(qx[:, None] - gx[None, :]) < reach[:, None])  # (K,) candidate pairs
        # judge_cover on the candidates: dis = (q.position - g.position).length(); q.radius > dis or g.radius > dis
        dx = qx[qi] - gx[gj]
        dy = qy[qi] - gy[gj]
        dis = np.sqrt(dx * dx + dy * dy)
        cover = (qr[qi] > dis) | (gr[gj] > dis)
        qi, gj = qi[cover], gj[cover]
        if len(qi) == 0:
            return results
        # stock's window, per pair: the ball's row within the query's rows, y at most the bottom edge, and y at
        # least the top edge unless the ball is its row's last one above it (checked one by one below, rare)
        minx, height, precision = self.border.minx, self.border.height, self.precision
        px, py, pr = qx[qi], qy[qi], qr[qi]  # (K,) per pair
        x, y = gx[gj], gy[gj]
        row = np.trunc((x - minx) / height * precision)  # get_row: int() truncates toward zero
        left = py - pr
        keep = ((row >= np.trunc((px - pr - minx) / height * precision))
                & (row <= np.trunc((px + pr - minx) / height * precision)) & (y <= py + pr))
        above = keep & (y < left)
        if above.any():
            rows = np.trunc((gx - minx) / height * precision)  # every gallery ball's row
            for k in np.flatnonzero(above):
                candidates = np.flatnonzero((rows == row[k]) & (gy < left[k]))
                keep[k] = candidates[np.lexsort((candidates, gy[candidates]))[-1]] == gj[k]
        qi, gj, row, y = qi[keep], gj[keep], row[keep], y[keep]
        order = np.lexsort((gj, y, row, qi))  # per query, the order stock visits them: row, then y, then index
        for i, j in zip(qi[order].tolist(), gj[order].tolist()):
            query = query_list[i]
            ball = others[j] if j < n_others else food_balls[food_slots[j - n_others]]
            if ball is not query:  # judge_cover: a ball never covers itself (ball ids are unique)
                results.setdefault(i, []).append(ball)
        return results
