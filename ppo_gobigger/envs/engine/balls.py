"""The fast engine's players and clone balls: GoBigger 0.2.1's own classes with the hot methods made cheap.

Every override keeps stock's arithmetic, in stock's order, on the same types (pygame Vector2 or Python floats), so
the results are bit-identical; what goes is the overhead: ``copy.deepcopy`` of fresh vectors, rich comparisons for
sorting, EasyDict look-ups and repeated method calls in the O(n^2) loops.
"""
import random
from operator import attrgetter
from typing import List

from pygame.math import Vector2

from gobigger.balls import CloneBall
from gobigger.players import HumanPlayer

_by_score = attrgetter('score')


class FastCloneBall(CloneBall):
    """A CloneBall whose direction is not deep-copied and whose offspring are FastCloneBalls too."""

    def update_direction(self) -> None:
        vel = self.vel
        if vel.x != 0 or vel.y != 0:  # stock: vel.length() != 0, true exactly when a component is non-zero
            self.direction = vel.normalize()  # a new vector already: stock deep-copies it once more
        else:
            self.direction = Vector2(random.random(), random.random()).normalize()  # stock draws from global random

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

    def adjust(self) -> int:
        """Stock's rigid collisions and merges, pair by pair in the same order (largest first, stable)."""
        eats = 0
        balls = sorted(self.balls.values(), key=_by_score, reverse=True)  # stock: sorted(balls, reverse=True)
        balls_num = len(balls)
        to_remove_balls = []
        for i in range(balls_num - 1):
            ball_i = balls[i]
            if ball_i.is_remove:
                continue
            for j in range(i + 1, balls_num):
                ball_j = balls[j]
                if ball_j.is_remove:
                    continue
                dis = (ball_i.position - ball_j.position).length()
                if dis < ball_i.radius + ball_j.radius:
                    if (ball_i.frame_since_last_split < ball_i.recombine_frame
                            or ball_j.frame_since_last_split < ball_j.recombine_frame):
                        ball_i.rigid_collision(ball_j)
                    elif dis < ball_i.radius or dis < ball_j.radius:
                        eats += 1
                        if ball_i.score > ball_j.score:
                            ball_i.eat(ball_j)
                            ball_j.remove()
                            to_remove_balls.append(ball_j)
                        else:
                            ball_j.eat(ball_i)
                            ball_i.remove()
                            to_remove_balls.append(ball_i)
                        ball_i.frame_since_last_split = 0
        for ball in to_remove_balls:
            self.remove_balls(ball)
        return eats
