"""GoBigger's 'precision' collision detection, answered with numpy over all (query, ball) pairs at once.

Stock (gobigger/utils/collision_detection.py, PrecisionCollisionDetection) files every ball in a row of the map
(row = int((x - minx) / height * precision)), sorts each row by y (stable), and for each query walks the rows its
box spans, from the last ball of the row with y < top edge (found by binary lifting, so that one ball is checked
too) to the first with y > bottom edge, keeping the balls that ``judge_cover`` the query. The answer here is the
same set in the same order: the cover test (distance < either radius) runs with stock's float operations on the
pairs close enough along x to cover (a conservative window found by binary search in the gallery sorted by x), and
the survivors are then kept or dropped by stock's row/window rule and ordered by (row, y, gallery index), which is
the order stock visits them.
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
        # every query is one of ``others`` in the server's frame (player balls, thorns): read it from there, and
        # drop its pair with itself below (judge_cover: a ball never covers itself; ball ids are unique)
        index = {id(b): j for j, b in enumerate(others)}
        own = np.array([index.get(id(b), -1) for b in query_list])  # (Q,) the query's gallery index, -1: none
        if (own >= 0).all():
            qx, qy, qr = gx[own], gy[own], gr[own]  # (Q,)
        else:
            qx, qy, qr = np.array([(b.position.x, b.position.y, b.radius) for b in query_list],
                                  dtype=np.float64).reshape(-1, 3).T
        # Candidates: a pair covers only if dis < the larger radius, and dis >= |dx| up to rounding (~1e-16
        # relative), so only balls with x in (qx - reach, qx + reach), reach = max(q.radius, the largest gallery
        # radius) * (1 + 1e-9), can cover: found by binary search in the gallery sorted by x
        reach = np.maximum(qr, gr.max()) * (1 + 1e-9)  # (Q,)
        by_x = np.argsort(gx, kind='stable')
        sorted_x = gx[by_x]
        lo = np.searchsorted(sorted_x, qx - reach, side='right')  # (Q,) first gallery rank inside the window
        counts = np.searchsorted(sorted_x, qx + reach, side='left') - lo
        qi = np.repeat(np.arange(len(qx)), counts)  # (K,) candidate pairs
        gj = by_x[np.arange(len(qi)) + np.repeat(lo - np.cumsum(counts) + counts, counts)]
        # judge_cover on the candidates: dis = (q.position - g.position).length(); q.radius > dis or g.radius > dis
        dx = qx[qi] - gx[gj]
        dy = qy[qi] - gy[gj]
        dis = np.sqrt(dx * dx + dy * dy)
        cover = ((qr[qi] > dis) | (gr[gj] > dis)) & (gj != own[qi])
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
            ball = others[j] if j < n_others else food_balls[food_slots[j - n_others]]
            if ball is not query_list[i]:  # (a query outside ``others``: its own pair is dropped here)
                results.setdefault(i, []).append(ball)
        return results
