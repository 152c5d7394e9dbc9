"""The fast engine's game: GoBigger 0.2.1's Server and GoBiggerEnv with the fast players, collisions and views.

What differs from stock is how, never what: the frame step below is stock's ``Server.step_one_frame`` line for
line, except that balls are sorted by a key (the same stable order as stock's rich comparisons), player balls are
FastCloneBalls (balls.py), collisions are answered by FastPrecisionCollisionDetection (collision.py) and the views
by FastPlayerStatesUtil (views.py).
"""
from operator import attrgetter

from pygame.math import Vector2

from gobigger.envs import GoBiggerEnv
from gobigger.managers import PlayerManager
from gobigger.server import Server

from .balls import FastCloneBall, FastHumanPlayer
from .collision import FastPrecisionCollisionDetection
from .food import FastFoodManager
from .views import FastPlayerStatesUtil

_by_score = attrgetter('score')


class FastPlayerManager(PlayerManager):
    """PlayerManager whose players are FastHumanPlayers owning FastCloneBalls."""

    def init_balls(self, custom_init=None) -> None:
        super().init_balls(custom_init=custom_init)
        for player in self.players.values():
            player.__class__ = FastHumanPlayer
            for ball in player.balls.values():
                ball.__class__ = FastCloneBall

    def get_balls(self) -> list:
        return [ball for player in self.players.values() for ball in player.balls.values()]

    def get_clone_num(self, ball) -> int:
        return len(self.players[ball.player_id].balls)


class FastServer(Server):
    """Server with the fast pieces swapped in after stock's own construction (same config, same random draws)."""

    def __init__(self, cfg=None, seed=None) -> None:
        super().__init__(cfg=cfg, seed=seed)
        self.player_manager.__class__ = FastPlayerManager
        self.food_manager.__class__ = FastFoodManager
        self.food_manager._clear_arrays()
        if self.collision_detection_type == 'precision':
            self.collision_detection = FastPrecisionCollisionDetection(border=self.border)

    def init_obs(self) -> None:
        super().init_obs()
        self.player_states_util = FastPlayerStatesUtil(self.obs_settings)

    def obs(self, obs_type='all', observe=None):
        """Stock's obs(), the views built from the food arrays; only those of the players in ``observe`` (ids;
        None: all). Building views changes nothing in the game."""
        assert obs_type in ['all', 'single']
        global_state = self.get_global_state()
        player_states = self.player_states_util.get_player_states_from_arrays(
            food=self.food_manager.arrays(), thorns_balls=self.thorns_manager.get_balls(),
            spore_balls=self.spore_manager.get_balls(), players=self.player_manager.get_players(), observe=observe)
        self.leaderboard = global_state['leaderboard']
        return global_state, player_states, {'eats': self.eats}

    def step_one_frame(self, actions=None) -> None:
        moving_balls = []  # Record all balls in motion
        total_balls = []  # Record all balls
        players = self.player_manager.get_players()
        duration = self.frame_duration
        if actions is not None and isinstance(actions, dict):
            for player in players:
                if player.player_id in actions:
                    direction_x, direction_y, action_type = actions[player.player_id]
                    if direction_x is None or direction_y is None:
                        direction = None
                    else:
                        direction = Vector2(direction_x, direction_y)
                        if direction.length() > 1:
                            direction = direction.normalize()
                    if action_type == 1:  # eject
                        for tmp_spore_ball in player.eject(direction=direction):
                            if tmp_spore_ball:
                                self.spore_manager.add_balls(tmp_spore_ball)
                                if self.save_frame:
                                    self.diff_balls_modify[2][tmp_spore_ball.ball_id] = tmp_spore_ball.save()
                    elif action_type == 2:  # split
                        self.player_manager.add_balls(player.split(direction=direction))
                    player.move(direction=direction, duration=duration)
                else:
                    player.move(duration=duration)
                moving_balls.extend(player.balls.values())
        else:
            for player in players:
                player.move(duration=duration)
                moving_balls.extend(player.balls.values())
        moving_balls.sort(key=_by_score, reverse=True)  # stock: sorted(moving_balls, reverse=True), also stable
        for thorns_ball in self.thorns_manager.get_balls():
            if thorns_ball.moving:
                thorns_ball.move(duration=duration)
                if self.save_frame:
                    self.diff_balls_modify[1][thorns_ball.ball_id] = thorns_ball.save()
            moving_balls.append(thorns_ball)
        for spore_ball in self.spore_manager.get_balls():
            if spore_ball.moving:
                spore_ball.move(duration=duration)
                if self.save_frame:
                    self.diff_balls_modify[2][spore_ball.ball_id] = spore_ball.save()
        eats = self.player_manager.adjust()
        for player_id, clone_self_num in eats.items():
            self.eats[player_id]['clone_self'] += clone_self_num
        total_balls.extend(self.player_manager.get_balls())
        total_balls.extend(self.thorns_manager.get_balls())
        total_balls.extend(self.spore_manager.get_balls())
        if isinstance(self.collision_detection, FastPrecisionCollisionDetection):  # the food from its arrays
            collisions_dict = self.collision_detection.solve_with_food(moving_balls, total_balls,
                                                                       self.food_manager.arrays())
        else:
            total_balls.extend(self.food_manager.get_balls())
            collisions_dict = self.collision_detection.solve(moving_balls, total_balls)
        for index, targets in sorted(collisions_dict.items()):  # stock: every index in order; empty ones do nothing
            moving_ball = moving_balls[index]
            if not moving_ball.is_remove:
                for target_ball in targets:
                    self.deal_with_collision(moving_ball, target_ball)
        new_food_balls = self.food_manager.step(duration=duration)
        new_thorns_balls = self.thorns_manager.step(duration=duration)
        self.spore_manager.step(duration=duration)
        self.player_manager.step()
        self.last_frame_count += 1
        if self.save_frame:
            self.diff_balls_modify[0].update(new_food_balls)
            self.diff_balls_modify[1].update(new_thorns_balls)
            for ball in self.player_manager.get_balls():
                self.diff_balls_modify[3][ball.ball_id] = ball.save()


class FastGoBiggerEnv(GoBiggerEnv):
    """GoBiggerEnv (gym interface, step_mul frames per step) over a FastServer."""

    def init_server(self) -> None:
        self.server = FastServer(cfg=self.server_cfg)

    def step(self, actions, observe=None):
        """Stock's step; player_states holds only the players in ``observe`` (ids; None: all), except at the end of
        the game, whose last observation is always whole. Between an env's decisions only the bots read views."""
        for i in range(self.step_mul):
            done = self.server.step(actions=actions if i == 0 else None)
        global_state, player_states, info = self.server.obs(observe=None if done else observe)
        total_score = [global_state['leaderboard'][i] for i in range(len(global_state['leaderboard']))]
        assert len(self.last_total_score) == len(total_score)
        reward = [total_score[i] - self.last_total_score[i] for i in range(len(total_score))]
        self.last_total_score = total_score
        return [global_state, player_states], reward, done, info
