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
        results: Dict[int, List] = {}
        if not query_list or not gallery_list:
            return results
        # gallery arrays, (G,)
        gx = np.fromiter((b.position.x for b in gallery_list), dtype=np.float64, count=len(gallery_list))
        gy = np.fromiter((b.position.y for b in gallery_list), dtype=np.float64, count=len(gallery_list))
        gr = np.fromiter((b.radius for b in gallery_list), dtype=np.float64, count=len(gallery_list))
        # query arrays, (Q,)
        qx = np.fromiter((b.position.x for b in query_list), dtype=np.float64, count=len(query_list))
        qy = np.fromiter((b.position.y for b in query_list), dtype=np.float64, count=len(query_list))
        qr = np.fromiter((b.radius for b in query_list), dtype=np.float64, count=len(query_list))
        # judge_cover: dis = (q.position - g.position).length(); q.radius > dis or g.radius > dis   (Q, G)
        dx = qx[:, None] - gx[None, :]
        dy = qy[:, None] - gy[None, :]
        dis = np.sqrt(dx * dx + dy * dy)
        cover = (qr[:, None] > dis) | (gr[None, :] > dis)
        qi, gj = np.nonzero(cover)
        if len(qi) == 0:
            return results
        index_of = {id(b): j for j, b in enumerate(gallery_list)}
        minx, height, precision = self.border.minx, self.border.height, self.precision
        rows = None  # every gallery ball's row, computed only if a ball lies above a query's window
        kept: Dict[int, list] = {}
        for i, j in zip(qi.tolist(), gj.tolist()):
            query = query_list[i]
            if index_of.get(id(query)) == j:  # judge_cover: a ball never covers itself
                continue
            ball = gallery_list[j]
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
            kept.setdefault(i, []).append((row, y, j))
        for i, found in kept.items():
            found.sort()
            results[i] = [gallery_list[j] for _, _, j in found]
        return results
