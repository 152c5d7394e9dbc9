"""The fast engine's players and clone balls: GoBigger 0.2.1's own classes with the hot methods made cheap.

Every override keeps stock's arithmetic, in stock's order, on the same types (pygame Vector2 or Python floats), so
the results are bit-identical; what goes is the overhead: ``copy.deepcopy`` of fresh vectors, rich comparisons for
sorting, EasyDict look-ups and repeated method calls in the O(n^2) loops.

The install compiles this module with Cython (setup.py): the ``cython.locals`` below make the hot loops' scalars C
doubles (IEEE binary64 as Python's floats, the same operations in the same order; sqrt is correctly rounded in
both). Where it was not built (COMPILED is False), env.engine='fast' plays the stock engine (engine.compiled()).
"""
import random
from operator import attrgetter
from typing import List

import cython
from cython.cimports.libc.math import sqrt  # C's sqrt when compiled, math.sqrt otherwise: both correctly rounded
from pygame.math import Vector2

from gobigger.balls import CloneBall
from gobigger.players import HumanPlayer

COMPILED = cython.compiled  # True in the module the install built
_by_score = attrgetter('score')


class FastCloneBall(CloneBall):
    """A CloneBall whose direction is not deep-copied and whose offspring are FastCloneBalls too."""

    def update_direction(self) -> None:
        if self.vel.length() != 0:
            self.direction = self.vel.normalize()  # a new vector already: stock deep-copies it once more
        else:
            self.direction = Vector2(random.random(), random.random()).normalize()  # stock draws from global random

    def move(self, given_acc=None, given_acc_center=None, duration=0.05) -> None:
        """CloneBall.move (see _move)."""
        if given_acc_center is None:
            self._move(given_acc, False, 0.0, 0.0, duration)
        else:
            self._move(given_acc, True, given_acc_center.x, given_acc_center.y, duration)

    @cython.locals(gx=cython.double, gy=cython.double, length=cython.double, ax=cython.double, ay=cython.double,
                   inv=cython.double, cx=cython.double, cy=cython.double, acx=cython.double, acy=cython.double,
                   tx=cython.double, ty=cython.double, vel_max_ratio=cython.double, vx=cython.double,
                   vy=cython.double, vel_max=cython.double, x=cython.double, y=cython.double,
                   acc_weight=cython.double, weight=cython.double)
    def _move(self, given_acc, has_center: cython.bint, center_x: cython.double, center_y: cython.double,
              duration: cython.double) -> None:
        """CloneBall.move on floats, given_acc_center as (center_x, center_y) if has_center. pygame's Vector2 ops,
        as measured: v / s is (x * (1 / s), y * (1 / s)), v.normalize() is (x / L, y / L), v.length() is
        sqrt(x * x + y * y); each is written out below."""
        acc_weight = self.acc_weight
        if given_acc is not None:  # (stock also tests `given_acc.length != 0`: a bound method, always true)
            gx, gy = given_acc.x, given_acc.y
            length = sqrt(gx * gx + gy * gy)
            if not length < 1:
                gx, gy = gx / length, gy / length
            ax, ay = gx * acc_weight, gy * acc_weight
            self.acc_given = Vector2(ax, ay)
        else:
            ax, ay = self.acc_given.x, self.acc_given.y
            inv = 1 / acc_weight
            gx, gy = ax * inv, ay * inv
        if has_center:
            inv = 1 / self.radius
            cx, cy = center_x * inv, center_y * inv
            length = sqrt(cx * cx + cy * cy)
            if length != 0 and length > 1:
                cx, cy = cx / length, cy / length
            weight = self.center_acc_weight
            acx, acy = cx * weight, cy * weight
        else:
            cx = cy = acx = acy = 0.0
        tx, ty = ax + acx, ay + acy  # acc_given_total (stock also stores it and acc_given_center: nothing reads them)
        vel_max_ratio = max(sqrt(gx * gx + gy * gy), sqrt(cx * cx + cy * cy))
        # vel_split
        if self.split_frame < self.split_vel_zero_frame:
            self.vel_split -= self.vel_split_piece  # in place, as stock
            self.split_frame += 1
        else:
            self.vel_split = Vector2(0, 0)
        # vel_given, capped by format_vector at vel_max_ball
        vx, vy = self.vel_given.x + tx * duration, self.vel_given.y + ty * duration
        vel_max = (2.35 + 5.66 / self.radius) * vel_max_ratio  # cal_vel_max (stock stores it: vel_max_ball)
        length = sqrt(vx * vx + vy * vy)
        if length != 0 and not length < vel_max:
            vx, vy = vx / length * vel_max, vy / length * vel_max
        self.vel_given = Vector2(vx, vy)
        vx, vy = vx + self.vel_split.x, vy + self.vel_split.y
        self.vel = Vector2(vx, vy)
        x, y = self.position.x + vx * duration, self.position.y + vy * duration
        length = sqrt(vx * vx + vy * vy)
        if length != 0:  # update_direction
            self.direction = Vector2(vx / length, vy / length)
        else:
            self.direction = Vector2(random.random(), random.random()).normalize()
        self.frame_since_last_split += 1
        border = self.border  # check_border
        if x < border.minx or x > border.maxx:
            x = min(max(x, border.minx), border.maxx)
        if y < border.miny or y > border.maxy:
            y = min(max(y, border.miny), border.maxy)
        self.position = Vector2(x, y)

    def split(self, clone_num, direction=None):
        ball = super().split(clone_num, direction=direction)
        if ball:
            ball.__class__ = FastCloneBall
        return ball

    def on_thorns(self, split_num) -> list:
        balls = super().on_thorns(split_num)
        for ball in balls:
            ball.__class__ = FastCloneBall
        return balls


class FastHumanPlayer(HumanPlayer):
    """A HumanPlayer with stock's adjust, centroid and info loops written without per-call overhead."""

    def respawn(self, position) -> bool:
        super().respawn(position)
        for ball in self.balls.values():
            ball.__class__ = FastCloneBall
        return True

    def get_balls(self) -> List[CloneBall]:
        return list(self.balls.values())

    def move(self, direction=None, duration=0.05) -> None:
        """HumanPlayer.move, then its score_decay with CloneBall.score_decay and set_score written out."""
        balls = self.balls
        if not balls:
            return
        if len(balls) == 1:
            for ball in balls.values():
                ball._move(direction, False, 0.0, 0.0, duration)
        else:
            centroid = self.cal_centroid()
            x, y = centroid.x, centroid.y
            for ball in balls.values():  # given_acc_center = centroid - ball.position
                position = ball.position
                ball._move(direction, True, x - position.x, y - position.y, duration)
        for ball in balls.values():
            if ball.score > ball.score_decay_min:
                score = ball.score * (1 - ball.score_decay_rate_per_frame * sqrt(ball.radius))
                ball.score = score
                ball.radius = sqrt(score / 100 * 0.042 + 0.15)  # BaseBall.score_to_radius

    @cython.locals(x=cython.double, y=cython.double, total_score=cython.double, score=cython.double)
    def cal_centroid(self) -> Vector2:
        x = 0
        y = 0
        total_score = 0
        for ball in self.balls.values():
            score = ball.score
            position = ball.position
            x += score * position.x
            y += score * position.y
            total_score += score
        return Vector2(x, y) / total_score

    def get_total_score(self) -> float:
        total_score = 0
        for ball in self.balls.values():
            total_score += ball.score
        return total_score

    def get_info(self):
        settings = self.ball_settings
        eject_min = settings.eject_score_min
        split_min = settings.split_score_min
        under_max = len(self.balls) < settings.part_num_max
        total_score = 0
        can_eject = False
        can_split = False
        for ball in self.balls.values():
            score = ball.score
            total_score += score
            if score > eject_min:
                can_eject = True
            if under_max and score > split_min:
                can_split = True
        return total_score, can_split, can_eject

    @cython.locals(i=cython.Py_ssize_t, j=cython.Py_ssize_t, k=cython.Py_ssize_t, balls_num=cython.Py_ssize_t,
                   eats=cython.Py_ssize_t, minx=cython.double, maxx=cython.double, miny=cython.double,
                   maxy=cython.double, px=cython.double, py=cython.double, r_sum=cython.double, bound=cython.double,
                   dis=cython.double, f=cython.double, s_i=cython.double, s_j=cython.double, w_i=cython.double,
                   w_j=cython.double, x=cython.double, y=cython.double)
    def adjust(self) -> int:
        """Stock's rigid collisions and merges, pair by pair in the same order (largest first, stable), with
        get_dis and rigid_collision (and its check_border) written out on floats; merges call stock's eat."""
        eats = 0
        balls = sorted(self.balls.values(), key=_by_score, reverse=True)  # stock: sorted(balls, reverse=True)
        balls_num = len(balls)
        if balls_num < 2:
            return 0
        border = self.border
        minx, maxx, miny, maxy = border.minx, border.maxx, border.miny, border.maxy
        xs = [b.position.x for b in balls]
        ys = [b.position.y for b in balls]
        rs = [b.radius for b in balls]
        young = [b.frame_since_last_split < b.recombine_frame for b in balls]  # judge_rigid's test, per ball
        gone = [b.is_remove for b in balls]
        moved = [False] * balls_num
        to_remove_balls = []
        for i in range(balls_num - 1):
            if gone[i]:
                continue
            ball_i = balls[i]
            for j in range(i + 1, balls_num):
                if gone[j]:
                    continue
                px, py, r_sum = xs[j] - xs[i], ys[j] - ys[i], rs[i] + rs[j]
                bound = r_sum * 1.000001  # far apart on one axis: the exact test below is certainly false
                if px > bound or -px > bound or py > bound or -py > bound:
                    continue
                dis = sqrt(px * px + py * py)  # get_dis; rigid_collision's p = ball.position - self.position
                if dis < r_sum:
                    ball_j = balls[j]
                    if young[i] or young[j]:
                        # rigid_collision: f * p * (score share), then check_border of both
                        f = min(r_sum - dis, (r_sum - dis) / (dis + 1e-8))
                        s_i, s_j = ball_i.score, ball_j.score
                        w_i, w_j = s_j / (s_i + s_j), s_i / (s_i + s_j)
                        x, y = xs[i] - f * px * w_i, ys[i] - f * py * w_i
                        if x < minx or x > maxx:
                            x = float(min(max(x, minx), maxx))  # a Vector2 stores the border as a float
                        if y < miny or y > maxy:
                            y = float(min(max(y, miny), maxy))
                        xs[i], ys[i] = x, y
                        x, y = xs[j] + f * px * w_j, ys[j] + f * py * w_j
                        if x < minx or x > maxx:
                            x = float(min(max(x, minx), maxx))
                        if y < miny or y > maxy:
                            y = float(min(max(y, miny), maxy))
                        xs[j], ys[j] = x, y
                        moved[i] = moved[j] = True  # positions are written back before an eat and at the end
                    elif dis < rs[i] or dis < rs[j]:
                        eats += 1
                        for k, ball in ((i, ball_i), (j, ball_j)):  # eat reads (and may move) positions
                            if moved[k]:
                                ball.position = Vector2(xs[k], ys[k])
                                moved[k] = False
                        if ball_i.score > ball_j.score:
                            ball_i.eat(ball_j)
                            ball_j.remove()
                            to_remove_balls.append(ball_j)
                        else:
                            ball_j.eat(ball_i)
                            ball_i.remove()
                            to_remove_balls.append(ball_i)
                        ball_i.frame_since_last_split = 0
                        for k, ball in ((i, ball_i), (j, ball_j)):  # eat changed score, radius, maybe position
                            xs[k], ys[k], rs[k] = ball.position.x, ball.position.y, ball.radius
                            young[k] = ball.frame_since_last_split < ball.recombine_frame
                            gone[k] = ball.is_remove
        for k in range(balls_num):
            if moved[k]:
                balls[k].position = Vector2(xs[k], ys[k])
        for ball in to_remove_balls:
            self.remove_balls(ball)
        return eats
