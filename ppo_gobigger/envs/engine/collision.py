"""GoBigger's 'precision' collision detection, the same answers from compiled loops.

Stock (gobigger/utils/collision_detection.py, PrecisionCollisionDetection) files every ball in a row of the map
(row = int((x - minx) / height * precision)), sorts each row by y (stable), and for each query walks the rows its
box spans, from the last ball of the row with y < top edge (found by binary lifting, so that one ball is checked
too) to the first with y > bottom edge, keeping the balls that ``judge_cover`` the query. The answer here is the
same set in the same order: the cover test (distance < either radius) runs with stock's float operations on every
(query, ball) pair that can cover, the survivors are kept or dropped by stock's row/window rule, and each query's
are ordered by (row, y, gallery index), the order stock visits them. The pairs that can cover: every player ball,
thorn and spore, and the food within reach along x (a binary search in the food sorted by x; a pair covers only if
its distance, >= |dx|, is below the larger radius).

Compiled by the install (setup.py, Cython's pure-Python mode): the scalars below are C doubles, IEEE binary64 as
Python's floats and numpy's, with the same operations in the same order.
"""
from typing import Dict, List

import cython
import numpy as np
from cython.cimports.libc.math import sqrt, trunc

COMPILED = cython.compiled  # True in the module the install built


class FastPrecisionCollisionDetection:
    """Drop-in for PrecisionCollisionDetection(border, precision): ``solve(query_list, gallery_list)``."""

    def __init__(self, border, precision: int = 50) -> None:
        self.border = border
        self.precision = precision
        self._food = self._food_by_x = self._food_x = self._food_r_max = None  # food order by x, cached per view

    def get_row(self, x: float) -> int:
        return int((x - self.border.minx) / self.border.height * self.precision)

    def solve(self, query_list: list, gallery_list: list) -> Dict[int, list]:
        """Stock's signature: the gallery as one list of balls."""
        return self.solve_with_food(query_list, gallery_list, None)

    @cython.boundscheck(False)  # every index below is in range by construction
    @cython.wraparound(False)
    @cython.locals(n_others=cython.Py_ssize_t, n_food=cython.Py_ssize_t, q=cython.Py_ssize_t, j=cython.Py_ssize_t,
                   k=cython.Py_ssize_t, lo=cython.Py_ssize_t, hi=cython.Py_ssize_t, index=cython.Py_ssize_t,
                   px=cython.double, py=cython.double, pr=cython.double, x=cython.double, y=cython.double,
                   r=cython.double, dx=cython.double, dy=cython.double, dis=cython.double, reach=cython.double,
                   food_r_max=cython.double, minx=cython.double, height=cython.double, precision=cython.double,
                   row=cython.double, row_min=cython.double, row_max=cython.double, top=cython.double,
                   bottom=cython.double, ox=cython.double[:], oy=cython.double[:], orr=cython.double[:],
                   fx=cython.double[:], fy=cython.double[:], fr=cython.double[:], food_x=cython.double[:],
                   by_x=cython.Py_ssize_t[:])
    def solve_with_food(self, query_list: list, others: list, food) -> Dict[int, list]:
        """The gallery is ``others`` followed by the food of FastFoodManager.arrays() (None: no food), in that order
        (stock's: player balls, thorns, spores, food). Returns {query index: [balls it collides with]}; a query
        with none is left out (stock lists it with [], which the server skips alike)."""
        results: Dict[int, List] = {}
        if not query_list:
            return results
        n_others = len(others)
        ox, oy, orr = np.empty((3, n_others))  # (n_others,) each
        for k in range(n_others):
            ball = others[k]
            ox[k], oy[k], orr[k] = ball.position.x, ball.position.y, ball.radius
        if food is not None and len(food[1]):
            food_balls, food_slots, food_xs, food_ys, food_rs = food
            if food is not self._food:  # the food changed since the last frame: its order by x again
                self._food, self._food_by_x = food, np.argsort(food_xs, kind='stable').astype(np.intp)
                self._food_x, self._food_r_max = food_xs[self._food_by_x], food_rs.max()
            fx, fy, fr = food_xs, food_ys, food_rs
            by_x, food_x, food_r_max = self._food_by_x, self._food_x, self._food_r_max
        else:
            food_balls = food_slots = None
            fx = fy = fr = food_x = np.zeros(0)
            by_x, food_r_max = np.zeros(0, np.intp), 0.0
        n_food = len(food_x)
        minx, height, precision = self.border.minx, self.border.height, self.precision
        lo = hi = 0
        for q in range(len(query_list)):
            query = query_list[q]
            px, py, pr = query.position.x, query.position.y, query.radius
            # stock's window: rows of the query's box, y at most its bottom edge, and y at least its top edge
            # unless the ball is its row's last one above it (the rare case, _last_above)
            row_min = trunc((px - pr - minx) / height * precision)
            row_max = trunc((px + pr - minx) / height * precision)
            top, bottom = py - pr, py + pr
            reach = max(pr, food_r_max) * (1 + 1e-9)  # the food within reach along x: ranks lo to hi - 1
            lo = _bisect(food_x, px - reach, n_food, True)
            hi = _bisect(food_x, px + reach, n_food, False)
            hits = []  # (row, y, gallery index) of the balls that cover the query and stock's walk reaches
            for k in range(n_others + hi - lo):
                index = k if k < n_others else n_others + by_x[lo + k - n_others]
                if index < n_others:
                    if others[index] is query:  # judge_cover: a ball never covers itself
                        continue
                    x, y, r = ox[index], oy[index], orr[index]
                else:
                    x, y, r = fx[index - n_others], fy[index - n_others], fr[index - n_others]
                dx = px - x
                dy = py - y
                dis = sqrt(dx * dx + dy * dy)
                if not (pr > dis or r > dis):
                    continue
                row = trunc((x - minx) / height * precision)  # get_row: int() truncates toward zero
                if row < row_min or row > row_max or y > bottom:
                    continue
                if y < top and not _last_above(index, row, top, ox, oy, fx, fy, minx, height, precision):
                    continue
                hits.append((row, y, index))
            if hits:
                hits.sort()
                results[q] = [others[j] if j < n_others else food_balls[food_slots[j - n_others]]
                              for _, _, j in hits]
        return results


@cython.cfunc
@cython.boundscheck(False)
@cython.wraparound(False)
@cython.locals(lo=cython.Py_ssize_t, hi=cython.Py_ssize_t, mid=cython.Py_ssize_t)
def _bisect(xs: cython.double[:], v: cython.double, n: cython.Py_ssize_t, right: cython.bint) -> cython.Py_ssize_t:
    """In ascending xs[:n], the first i with xs[i] > v if ``right`` (bisect_right), else with xs[i] >= v
    (bisect_left); n if none."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if (v < xs[mid]) if right else not (xs[mid] < v):
            hi = mid
        else:
            lo = mid + 1
    return lo


@cython.cfunc
@cython.boundscheck(False)
@cython.wraparound(False)
@cython.locals(j=cython.Py_ssize_t, n_others=cython.Py_ssize_t, best=cython.Py_ssize_t, x=cython.double,
               y=cython.double, best_y=cython.double)
def _last_above(index: cython.Py_ssize_t, row: cython.double, top: cython.double, ox: cython.double[:],
                oy: cython.double[:], fx: cython.double[:], fy: cython.double[:], minx: cython.double,
                height: cython.double, precision: cython.double) -> cython.bint:
    """Whether gallery ball ``index`` (others, then food) is the last (by y, then index) of the balls of its row
    with y < top."""
    n_others = ox.shape[0]
    best, best_y = -1, 0.0
    for j in range(n_others + fx.shape[0]):
        if j < n_others:
            x, y = ox[j], oy[j]
        else:
            x, y = fx[j - n_others], fy[j - n_others]
        if y < top and trunc((x - minx) / height * precision) == row and (best < 0 or y >= best_y):
            best, best_y = j, y
    return best == index
