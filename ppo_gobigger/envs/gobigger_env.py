"""DI-engine env for GoBigger 0.2: we control one team of A players; the other teams are played by opponents.

Observation: {key: array (A, *OBS_SHAPES[key])} from features.py (float32; the MASK_KEYS are bool).
Action: A indices into the action table of actions.py (gym MultiDiscrete([ACTION_NUM] * A)).
Reward: (A,) float32, one per player, by cfg.reward: one of rewards.REWARD_KINDS (the change of ln(our team's score /
the best other team's) by default; see rewards.py) mixed with each player's own by cfg.team_spirit.
Evaluation reports the true outcome (win, rank, score_ratio from the final leaderboard, teams.outcome) whatever the
reward, and what the team ate in the game (teams.EAT_COUNTS: food, thorns, other teams' and teammates' balls, and how
often it was eaten).

With opponents played by the pipeline's policies (cfg.opponent in opponents.POLICY_OPPONENTS: 'self', 'league') the
caller plays every team, G = team_num of them, ours first and then the others by team id (team i, or team index i:
the i-th team in the caller's order, not GoBigger's team id: team 0 is GoBigger's team cfg.team_id):
observation {key: (G, A, ...)}, action (G, A) indices, reward (G, A), and the episode-end info carries each team's
outcome under 'teams'. The action may also be {'action': (G, A), 'bot_level': (G,), 'hold': (G,)}: a team with
bot_level k > 0 is played this step by the env's level-k bots (its actions are checked, then ignored), as a league's
bot members are; a team with hold True gives no new action this step (its players keep moving as they were, as between
the decisions of action_repeat), so that the league plays each policy at the decision rate it was trained with.
"""

import copy
import logging
import os
import random
from typing import Any, Dict, List, Mapping, Optional

import gym
import numpy as np
from ding.envs import BaseEnv, BaseEnvTimestep
from ding.utils import ENV_REGISTRY, deep_merge_dicts
from easydict import EasyDict

from .engine import DEFAULT_ENGINE, check_engine, create_game, step_game
from .actions import ACTION_NUM, check_actions, check_teams_action, from_game_action, to_game_action
from .features import OBS_DTYPES, OBS_SHAPES, GameConsts, team_features
from .game import STEP_MUL, GlobalRandom, env_configs, game_config
from .opponents import BOT_LEVELS, ENV_OPPONENTS, POLICY_OPPONENTS, Opponents, check_opponent
from .rewards import TeamReward, check_reward
from .scripted import check_variant
from .teams import episode_end_info, player_scores

SEED_STRIDE = 1_000_000  # game seeds of one env seed: 2 * (seed * SEED_STRIDE + episode) + is_evaluator
# set on each env's own copy of the config by the pipeline, not by users (config.default_config leaves them out)
INSTANCE_KEYS = ('team_id', 'is_evaluator', 'first_episode')


@ENV_REGISTRY.register('gobigger')
class GoBiggerEnv(BaseEnv):
    """One GoBigger game with our team under control. Lazy: the game is created at the first reset()."""

    config = dict(
        preset='st_t2p2',  # a GoBigger st_* preset (see game.PRESETS); st_tXpY = X teams of Y players
        custom_cfg={},  # deep-merged into the preset, e.g. {'frame_limit': 600}; keys must exist in the preset
        # who plays the other teams: one of opponents.OPPONENT_KINDS. 'self' and 'league' are played by the
        # pipeline (the env takes every team's actions, see above); evaluator envs then play 'bot' opponents
        opponent='league',
        bot_level=3,  # BotAgent level, one of opponents.BOT_LEVELS: the bots of 'bot' opponents and of evaluation
        # None: our team plays the actions it is given. 'bot' / 'random' / 'scripted': an opponent kind plays our team
        # instead (the given actions are checked, then ignored; info['stand_in_action'] says what it played): the
        # reference results of benchmarks/learning.py (opponent 'bot', 'random' or 'scripted' only)
        stand_in=None,
        stand_in_bot_level=2,  # BotAgent level of a 'bot' stand-in, one of opponents.BOT_LEVELS
        scripted_variant='hunter',  # Tactics of 'scripted' opponents and stand-in: a scripted.SCRIPTED_VARIANTS name
        # which GoBigger runs the game, one of engine.ENGINES: 'fast' plays stock GoBigger 0.2.1's game bit for bit
        # at ~2-3x its speed (tests/test_engine.py compares every observation); 'stock' is gobigger as installed
        engine=DEFAULT_ENGINE,
        # GoBigger steps per env step: our team decides on the first and its moves hold their heading through the
        # others (eject and split happen once), while the bots act on every one. An env step is
        # STEP_MUL * action_repeat = 8 frames (0.4 s; 450 decisions in an st_t2p2 game); the reward is summed.
        action_repeat=4,
        reward='log_ratio',  # training reward, one of rewards.REWARD_KINDS: log_score, log_ratio
        team_spirit=0.5,  # share of the team's reward in each player's reward; the rest is ln(its own score)'s
        # ---- set per env by the pipeline (INSTANCE_KEYS) ----
        team_id=0,  # the team we control, in [0, team_num)
        is_evaluator=False,  # set by create_evaluator_env_cfg; keeps evaluation games apart from training games
        first_episode=0,  # episode index of the first game after seed(); set on --resume to continue the games
        # ---- read by the pipeline, not by the game ----
        collector_env_num=8,  # envs that collect training games
        evaluator_env_num=2,  # envs that play the evaluation games
        n_evaluator_episode=8,  # games per evaluation, spread evenly over the evaluator envs
        # the DI-engine env manager's own keys; its type (base, subprocess, async_subprocess) is create_config's
        # env_manager.type, which env.manager.type overrides (e.g. --set env.manager.type=base)
        manager=dict(),
    )

    @classmethod
    def default_config(cls) -> EasyDict:
        return EasyDict(copy.deepcopy(cls.config))

    def __init__(self, cfg: Mapping) -> None:
        cfg = EasyDict(deep_merge_dicts(self.config, dict(cfg)))  # keys other than those above are ignored
        self._game_cfg = game_config(cfg.preset, cfg.custom_cfg)  # what the game will run
        self._consts = GameConsts.from_game_cfg(self._game_cfg)
        team_num, A = self._consts.team_num, self._consts.player_num_per_team
        if cfg.team_id not in range(team_num):
            raise ValueError(f'team_id {cfg.team_id!r} is not in [0, {team_num}) for preset {cfg.preset}')
        check_opponent(cfg.opponent, cfg.bot_level)
        check_variant(cfg.scripted_variant)
        check_engine(cfg.engine)
        self._policy_opponents = cfg.opponent in POLICY_OPPONENTS
        if self._policy_opponents and cfg.stand_in is not None:
            raise ValueError(f'stand_in {cfg.stand_in!r} needs opponent in {ENV_OPPONENTS}; with opponent '
                             f'{cfg.opponent!r} the caller plays every team')
        if isinstance(cfg.action_repeat, bool) or not (isinstance(cfg.action_repeat, int) and cfg.action_repeat >= 1):
            raise ValueError(f'action_repeat must be a positive int; got {cfg.action_repeat!r}')
        check_reward(cfg.reward, cfg.team_spirit)
        self._cfg = cfg
        self._player_num = A
        # the team ids whose actions the caller gives, in its order: ours, then (policy opponents) the others by id
        others = [t for t in range(team_num) if t != cfg.team_id]
        self._teams = [cfg.team_id] + (others if self._policy_opponents else [])
        # GoBigger numbers players by team: team t owns players t*A .. t*A+A-1 (checked at the first reset)
        self._team_players = [[t * A + j for j in range(A)] for t in self._teams]  # per team index: its player ids
        self._our_ids = self._team_players[0]
        other_ids = [t * A + j for t in others for j in range(A)]
        border = (self._game_cfg.map_width, self._game_cfg.map_height)  # scripted players keep off the walls
        self._opponents = (
            None if self._policy_opponents else
            Opponents(cfg.opponent, other_ids, cfg.bot_level, cfg.engine, cfg.scripted_variant, border)
        )
        self._team_bots: Dict[int, Opponents] = {}  # team index -> the bots playing it in this game (bot_level > 0)
        self._stand_in = (
            None if cfg.stand_in is None else
            Opponents(cfg.stand_in, self._our_ids, cfg.stand_in_bot_level, cfg.engine, cfg.scripted_variant, border)
        )

        self._lead = (len(self._teams), A) if self._policy_opponents else (A, )  # leading axes of every array
        self._observation_space = gym.spaces.Dict(
            {
                k: gym.spaces.Box(
                    low=0 if OBS_DTYPES[k] is np.bool_ else -np.inf,
                    high=1 if OBS_DTYPES[k] is np.bool_ else np.inf,
                    shape=self._lead + shape,
                    dtype=OBS_DTYPES[k],
                )
                for k, shape in OBS_SHAPES.items()
            }
        )  # bool Boxes travel fine through DI-engine's shared memory (ShmBuffer maps np.bool_ to ctypes.c_bool)
        self._action_space = gym.spaces.MultiDiscrete(np.full(self._lead, ACTION_NUM))
        self._reward_space = gym.spaces.Box(-np.inf, np.inf, self._lead, np.float32)

        self._game = None  # gobigger GoBiggerEnv, created at the first reset
        self._seed: Optional[int] = None
        self._dynamic_seed = True
        self._episode = 0  # episodes started since the last seed()
        self._game_seed: Optional[int] = None
        self._random = GlobalRandom()  # this game's own state of the global `random` module
        self._player_states = None  # the last raw player_states (opponents act on them); None: reset() needed
        self._episode_returns = np.zeros(len(self._teams))  # per team: the mean of its players' returns
        self._rewards = [TeamReward(cfg.reward, t, cfg.team_spirit) for t in self._teams]
        self._replay_dir: Optional[str] = None

    # ---- spaces ----
    @property
    def observation_space(self) -> gym.spaces.Dict:
        return self._observation_space

    @property
    def action_space(self) -> gym.spaces.MultiDiscrete:
        return self._action_space

    @property
    def reward_space(self) -> gym.spaces.Box:
        return self._reward_space

    @property
    def game_seed(self) -> Optional[int]:
        """The seed of the current game (None before the first reset)."""
        return self._game_seed

    # ---- BaseEnv ----
    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        """Episode k after this call (counted from cfg.first_episode) plays game seed
        2 * (seed * SEED_STRIDE + k) + is_evaluator (k = 0 if not dynamic_seed): reproducible, and training and
        evaluation games never share a seed."""
        if not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f'seed must be a non-negative int; got {seed!r}')
        self._seed = int(seed)
        self._dynamic_seed = bool(dynamic_seed)
        self._episode = int(self._cfg.first_episode)

    def reset(self) -> Dict[str, np.ndarray]:
        if self._game is None:
            self._create_game()
        if self._seed is None:
            self.seed(random.SystemRandom().randrange(2**31))
        episode = self._episode if self._dynamic_seed else 0
        self._game_seed = 2 * (self._seed * SEED_STRIDE + episode) + int(self._cfg.is_evaluator)
        self._episode += 1
        # GoBiggerEnv.seed() swaps in a new random.Random that the managers never see; re-seed theirs in place.
        self._game.server._random.seed(self._game_seed)
        self._random.seed(self._game_seed)
        if self._opponents is not None:
            self._opponents.reset(self._game_seed)
        self._team_bots = {}
        if self._stand_in is not None:
            self._stand_in.reset(self._game_seed + 1)  # its own random stream, apart from a random opponent's
        if self._replay_dir is not None:
            self._save_video_of_next_game()

        with self._random.owned():
            global_state, player_states = self._game.reset()
        teams = dict(self._game.get_team_infos())  # {team_id: [player_id, ...]}
        for team, ids in zip(self._teams, self._team_players):
            if teams[team] != ids:
                raise RuntimeError(f'GoBigger numbered team {team} as {teams}; expected {ids}')
        self._player_states = player_states
        self._episode_returns[:] = 0.0
        for reward, ids in zip(self._rewards, self._team_players):
            reward.reset(global_state['leaderboard'], player_scores(player_states, ids))
        return self._observation(global_state, player_states)

    def step(self, action: Any) -> BaseEnvTimestep:
        A = self._player_num  # actions (G, A), bot_levels (G,), holds (G,); a bad action is the caller's error
        if self._policy_opponents:
            actions, bot_levels, holds = check_teams_action(action, len(self._teams), A, BOT_LEVELS)
        else:
            actions, bot_levels, holds = check_actions(action, A)[None], np.zeros(1, np.int64), np.zeros(1, bool)
        if self._player_states is None:
            raise RuntimeError('call reset() first (the game is over, failed, or was never started)')
        try:
            given = {
                pid: to_game_action(k)
                for ids, team_actions, level, hold in zip(self._team_players, actions, bot_levels, holds)
                if not (level or hold) for pid, k in zip(ids, team_actions)
            }
            with self._random.owned():
                bots = self._bots_of_teams(bot_levels)
                if self._opponents is not None:
                    bots.append(self._opponents)
                # before the last GoBigger step, only the views the bots (and a stand-in) act on are needed
                watchers = bots + ([self._stand_in] if self._stand_in is not None else [])
                watched = {pid for players in watchers for pid in players.watched_ids}
                last = self._cfg.action_repeat - 1
                for repeat in range(self._cfg.action_repeat):
                    if self._stand_in is not None:  # a stand-in plays our side at the opponents' rate
                        given = self._stand_in.act(self._player_states)
                        if repeat == 0:
                            played = np.array([from_game_action(given[pid]) for pid in self._our_ids])
                    # after the first GoBigger step the given players get no action: they keep moving as they were
                    game_actions = dict(given) if repeat == 0 or self._stand_in is not None else {}
                    for players in bots:  # bots and random opponents act on every GoBigger step
                        game_actions.update(players.act(self._player_states))
                    (global_state, player_states), _, done, _ = step_game(
                        self._game, game_actions, None if repeat == last else watched)
                    self._player_states = player_states
                    if done:
                        break
            obs = self._observation(global_state, player_states)
        except Exception as e:  # a game failure must not kill a subprocess env manager: report it as abnormal
            logging.warning('GoBigger step failed (game seed %s); abnormal timestep', self._game_seed, exc_info=True)
            self._drop_game()  # the next reset() builds a fresh game
            info = {'abnormal': True, 'error': repr(e)}
            obs = {k: np.zeros(self._lead + OBS_SHAPES[k], OBS_DTYPES[k]) for k in OBS_SHAPES}
            return BaseEnvTimestep(obs, np.zeros(self._lead, np.float32), False, info)

        leaderboard = global_state['leaderboard']
        rewards = np.stack([
            reward.step(leaderboard, player_scores(player_states, ids))
            for reward, ids in zip(self._rewards, self._team_players)
        ])  # (G, A)
        self._episode_returns += rewards.mean(axis=1)
        reward = rewards if self._policy_opponents else rewards[0]
        info = {}
        if done:
            info = episode_end_info(leaderboard, self._game.server.eats, self._teams, self._team_players,
                                    self._episode_returns, self._game_seed, self._policy_opponents)
            self._player_states = None
        if self._stand_in is not None:
            info['stand_in_action'] = played  # (A,) the stand-in's moves as action indices: demonstrations
        return BaseEnvTimestep(obs, reward, bool(done), info)

    def close(self) -> None:
        self._drop_game()

    def random_action(self) -> np.ndarray:
        return self._action_space.sample()

    def enable_save_replay(self, replay_path: str) -> None:
        """Save every following game as a video, replay_path/<preset>_seed<game seed>-all.mp4, written at its end."""
        os.environ.setdefault('SDL_VIDEODRIVER', 'dummy')  # GoBigger renders with pygame: no display needed
        os.makedirs(replay_path, exist_ok=True)
        self._replay_dir = replay_path

    @staticmethod
    def create_collector_env_cfg(cfg: Mapping) -> List[Mapping]:
        """DI-engine's hook (its entries' get_vec_env_setting): one config per collector env. Its collectors play one
        policy action per env, so opponents played by policies are refused here; the package's pipeline plays them
        (pipeline/play/env_manager.py takes env_configs)."""
        if cfg.get('opponent') in POLICY_OPPONENTS:
            raise ValueError(
                f"env.opponent {cfg['opponent']!r}: the env asks for every team's actions, and DI-engine's collectors "
                "play one policy action per env. Train it with gobigger-train (ppo_gobigger.train); DI-engine's "
                "entries run opponent 'bot' or 'random' (e.g. config/gobigger_ppo_vs_bots_config.py)")
        return env_configs(cfg, cfg['collector_env_num'], is_evaluator=False)

    @staticmethod
    def create_evaluator_env_cfg(cfg: Mapping) -> List[Mapping]:
        return env_configs(cfg, cfg['evaluator_env_num'], is_evaluator=True)

    def __repr__(self) -> str:
        c = self._cfg
        return (
            f'GoBiggerEnv(preset={c.preset}, team_id={c.team_id}, players={self._player_num}, '
            f'opponents={self._opponents or repr(c.opponent)}, evaluator={c.is_evaluator}'
            + (f', stand_in={self._stand_in})' if self._stand_in is not None else ')')
        )

    # ---- helpers ----
    def _observation(self, global_state: Mapping, player_states: Mapping) -> Dict[str, np.ndarray]:
        per_team = [
            team_features(global_state, player_states, ids, team, self._consts)
            for team, ids in zip(self._teams, self._team_players)
        ]
        return {k: np.stack([f[k] for f in per_team]) for k in per_team[0]} if self._policy_opponents else per_team[0]

    def _bots_of_teams(self, bot_levels: np.ndarray) -> List[Opponents]:
        """The bots playing the teams with a bot level this step; a team keeps its bots (and their plans) through a
        game while its level stays the same."""
        bots = []
        for i, level in enumerate(bot_levels):
            if level:
                if i not in self._team_bots or self._team_bots[i].bot_level != level:
                    self._team_bots[i] = Opponents('bot', self._team_players[i], int(level), self._cfg.engine)
                    self._team_bots[i].reset(self._game_seed + 2 + i)
                bots.append(self._team_bots[i])
        return bots

    def _create_game(self) -> None:
        """Create this env's GoBigger game: the one place a game is made (reset() calls it when there is none)."""
        with self._random.owned():  # GoBigger's Server() draws a (then unused) seed from the global `random`
            self._game = create_game(self._cfg.preset, self._cfg.custom_cfg, STEP_MUL, self._cfg.engine)

    def _save_video_of_next_game(self) -> None:
        # Server.reset() rebuilds its playback from these settings (see the GoBigger note's Replays section)
        playback = self._game.server.playback_settings
        playback.playback_type = 'by_video'
        playback.by_video.save_video = True
        playback.by_video.save_dir = self._replay_dir
        playback.by_video.save_name_prefix = f'{self._cfg.preset}_seed{self._game_seed}'

    def _drop_game(self) -> None:
        if self._game is not None:
            try:
                self._game.close()
            except Exception:  # closing a broken game must not hide the original failure
                logging.warning('closing the GoBigger game failed', exc_info=True)
        self._game = None
        self._player_states = None


ENV_REGISTRY.register('gobigger_ppo', GoBiggerEnv)  # the env type in older saved create_configs (CHANGELOG.md)
