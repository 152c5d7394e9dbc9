"""DI-engine env for GoBigger 0.2: we control one team of A players; the other teams are played by opponents.

Observation: {key: array (A, *OBS_SHAPES[key])} from features.py (float32; the MASK_KEYS are bool).
Action: A indices into the action table of actions.py (gym MultiDiscrete([ACTION_NUM] * A)).
Reward: (A,) float32, one per player, by cfg.reward: one of rewards.REWARD_KINDS ('score', the change of our team's
score / reward_scale, by default; see rewards.py for the others) mixed with each player's own by cfg.team_spirit.
Evaluation reports the true outcome (win, rank, score_ratio from the final leaderboard) whatever the reward.
"""

import contextlib
import copy
import logging
import math
import os
import random
from typing import Any, Dict, List, Mapping, Optional

import gobigger.configs
import gym
import numpy as np
from ding.envs import BaseEnv, BaseEnvTimestep
from ding.utils import ENV_REGISTRY, deep_merge_dicts
from easydict import EasyDict
from gobigger.envs import create_env

from .actions import ACTION_NUM, check_actions, from_game_action, to_game_action
from .features import OBS_DTYPES, OBS_SHAPES, GameConsts, empty_features, team_features
from .opponents import Opponents, check_opponent
from .rewards import TeamReward, check_reward, other_scores

PRESETS = tuple(sorted(name for name in vars(gobigger.configs) if name.startswith('st_')))  # st_tXpY: X teams of Y
SEED_STRIDE = 1_000_000  # game seeds of one env seed: 2 * (seed * SEED_STRIDE + episode) + is_evaluator


@ENV_REGISTRY.register('gobigger_ppo')
class GoBiggerPPOEnv(BaseEnv):
    """One GoBigger game with our team under control. Lazy: the game is created at the first reset()."""

    config = dict(
        preset='st_t2p2',  # a GoBigger st_* preset (see PRESETS); st_tXpY = X teams of Y players
        custom_cfg={},  # deep-merged into the preset, e.g. {'frame_limit': 600}; keys must exist in the preset
        opponent='bot',  # who plays the other teams: one of opponents.OPPONENT_KINDS
        bot_level=3,  # BotAgent level, one of opponents.BOT_LEVELS (3 is the strongest)
        team_id=0,  # the team we control, in [0, team_num)
        # None: our team plays the actions it is given. 'bot' / 'random': an opponent kind plays our team instead
        # (the given actions are checked, then ignored; info['stand_in_action'] says what it played) -- the
        # reference rows of benchmarks/learning.py and the demonstrations of policy.pretrain
        stand_in=None,
        stand_in_bot_level=2,  # BotAgent level of a 'bot' stand-in, one of opponents.BOT_LEVELS
        step_mul=2,  # game frames per GoBigger step, where the opponents decide (20 frames = 1 s of game time)
        # GoBigger steps per env step: our team decides on the first and its moves hold their heading through the
        # others (eject and split happen once), while the opponents act on every one. An env step is
        # step_mul * action_repeat frames; the reward is summed over them.
        action_repeat=1,
        reward='score',  # training reward, one of rewards.REWARD_KINDS: score, margin, log_score, log_ratio
        reward_scale=1000.0,  # the score and margin rewards are divided by this
        # share of the team's reward in each player's reward; the rest is the player's own (score, log_score only)
        team_spirit=1.0,
        is_evaluator=False,  # set by create_evaluator_env_cfg; keeps evaluation games apart from training games
        first_episode=0,  # episode index of the first game after seed(); set on --resume to continue the games
        # ---- read by the pipeline, not by the game ----
        collector_env_num=4,  # envs that collect training games
        evaluator_env_num=2,  # envs that play the evaluation games
        n_evaluator_episode=4,  # games per evaluation, spread evenly over the evaluator envs
        stop_value=None,  # stop training once an evaluation's reward_mean reaches this (None: never)
        manager=dict(type='subprocess'),  # DI-engine env manager: type base / subprocess / async_subprocess + its keys
    )

    @classmethod
    def default_config(cls) -> EasyDict:
        return EasyDict(copy.deepcopy(cls.config))

    def __init__(self, cfg: Mapping) -> None:
        cfg = EasyDict(deep_merge_dicts(self.config, dict(cfg)))  # keys other than those above are ignored
        if cfg.preset not in PRESETS:
            raise ValueError(f'unknown GoBigger preset {cfg.preset!r}; valid presets: {PRESETS}')
        preset_cfg = getattr(gobigger.configs, cfg.preset)
        _check_known_keys(cfg.custom_cfg, preset_cfg, 'custom_cfg')
        self._game_cfg = EasyDict(deep_merge_dicts(preset_cfg, cfg.custom_cfg))  # what the game will run
        self._consts = GameConsts.from_game_cfg(self._game_cfg)
        team_num, A = self._consts.team_num, self._consts.player_num_per_team
        if cfg.team_id not in range(team_num):
            raise ValueError(f'team_id {cfg.team_id!r} is not in [0, {team_num}) for preset {cfg.preset}')
        check_opponent(cfg.opponent, cfg.bot_level)
        for key in ('step_mul', 'action_repeat'):
            if isinstance(cfg[key], bool) or not (isinstance(cfg[key], int) and cfg[key] >= 1):
                raise ValueError(f'{key} must be a positive int; got {cfg[key]!r}')
        check_reward(cfg.reward, cfg.reward_scale, cfg.team_spirit)
        self._cfg = cfg
        self._player_num = A
        # GoBigger numbers players by team: team t owns players t*A .. t*A+A-1 (checked at the first reset)
        self._our_ids = [cfg.team_id * A + j for j in range(A)]
        other_ids = [pid for pid in range(team_num * A) if pid not in self._our_ids]
        self._opponents = Opponents(cfg.opponent, other_ids, cfg.bot_level)
        self._stand_in = (
            None if cfg.stand_in is None else Opponents(cfg.stand_in, self._our_ids, cfg.stand_in_bot_level)
        )

        self._observation_space = gym.spaces.Dict(
            {
                k: gym.spaces.Box(
                    low=0 if OBS_DTYPES[k] is np.bool_ else -np.inf,
                    high=1 if OBS_DTYPES[k] is np.bool_ else np.inf,
                    shape=(A, ) + shape,
                    dtype=OBS_DTYPES[k],
                )
                for k, shape in OBS_SHAPES.items()
            }
        )  # bool Boxes travel fine through DI-engine's shared memory (ShmBuffer maps np.bool_ to ctypes.c_bool)
        self._action_space = gym.spaces.MultiDiscrete([ACTION_NUM] * A)
        self._reward_space = gym.spaces.Box(-np.inf, np.inf, (A, ), np.float32)

        self._game = None  # gobigger GoBiggerEnv, created at the first reset
        self._seed: Optional[int] = None
        self._dynamic_seed = True
        self._episode = 0  # episodes started since the last seed()
        self._game_seed: Optional[int] = None
        self._global_random_state = None  # this game's state of the global `random` (see _own_global_random)
        self._player_states = None  # the last raw player_states (opponents act on them); None: reset() needed
        self._episode_return = 0.0
        self._reward = TeamReward(cfg.reward, cfg.team_id, cfg.reward_scale, cfg.team_spirit)
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
            with self._own_global_random():  # GoBigger's Server() draws a (then unused) seed from the global `random`
                self._game = create_env(self._cfg.preset, self._cfg.custom_cfg, step_mul=self._cfg.step_mul)
        if self._seed is None:
            self.seed(random.SystemRandom().randrange(2**31))
        episode = self._episode if self._dynamic_seed else 0
        self._game_seed = 2 * (self._seed * SEED_STRIDE + episode) + int(self._cfg.is_evaluator)
        self._episode += 1
        # GoBiggerEnv.seed() swaps in a new random.Random that the managers never see; re-seed theirs in place.
        self._game.server._random.seed(self._game_seed)
        self._global_random_state = random.Random(self._game_seed).getstate()
        self._opponents.reset(self._game_seed)
        if self._stand_in is not None:
            self._stand_in.reset(self._game_seed + 1)  # its own random stream, apart from a random opponent's
        if self._replay_dir is not None:
            self._save_video_of_next_game()

        with self._own_global_random():
            global_state, player_states = self._game.reset()
        teams = dict(self._game.get_team_infos())  # {team_id: [player_id, ...]}
        if teams[self._cfg.team_id] != self._our_ids:
            raise RuntimeError(f'GoBigger numbered team {self._cfg.team_id} as {teams}; expected {self._our_ids}')
        self._player_states = player_states
        self._episode_return = 0.0
        self._reward.reset(global_state['leaderboard'], self._player_scores(player_states))
        return team_features(global_state, player_states, self._our_ids, self._cfg.team_id, self._consts)

    def step(self, action: Any) -> BaseEnvTimestep:
        action = check_actions(action, self._player_num)  # (A,) int64; a bad action is the caller's error
        if self._player_states is None:
            raise RuntimeError('call reset() first (the game is over, failed, or was never started)')
        try:
            ours = {pid: to_game_action(k) for pid, k in zip(self._our_ids, action)}
            with self._own_global_random():
                for repeat in range(self._cfg.action_repeat):
                    if self._stand_in is not None:  # a stand-in plays our side at the opponents' rate
                        ours = self._stand_in.act(self._player_states)
                        if repeat == 0:
                            played = np.array([from_game_action(ours[pid]) for pid in self._our_ids])
                    # after the first GoBigger step our players get no action: they keep moving as they were
                    game_actions = dict(ours) if repeat == 0 or self._stand_in is not None else {}
                    game_actions.update(self._opponents.act(self._player_states))
                    (global_state, player_states), _, done, _ = self._game.step(game_actions)
                    self._player_states = player_states
                    if done:
                        break
            obs = team_features(global_state, player_states, self._our_ids, self._cfg.team_id, self._consts)
        except Exception as e:  # a game failure must not kill a subprocess env manager: report it as abnormal
            logging.warning('GoBigger step failed (game seed %s); abnormal timestep', self._game_seed, exc_info=True)
            self._drop_game()  # the next reset() builds a fresh game
            info = {'abnormal': True, 'error': repr(e)}
            return BaseEnvTimestep(empty_features(self._player_num), np.zeros(self._player_num, np.float32), False, info)

        reward = self._reward.step(global_state['leaderboard'], self._player_scores(player_states))  # (A,)
        self._episode_return += float(reward.mean())
        info = {}
        if done:
            info = self._episode_end_info(global_state['leaderboard'])
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
        return _env_cfg_copies(cfg, cfg['collector_env_num'], is_evaluator=False)

    @staticmethod
    def create_evaluator_env_cfg(cfg: Mapping) -> List[Mapping]:
        return _env_cfg_copies(cfg, cfg['evaluator_env_num'], is_evaluator=True)

    def __repr__(self) -> str:
        c = self._cfg
        return (
            f'GoBiggerPPOEnv(preset={c.preset}, team_id={c.team_id}, players={self._player_num}, '
            f'opponents={self._opponents}, evaluator={c.is_evaluator}'
            + (f', stand_in={self._stand_in})' if self._stand_in is not None else ')')
        )

    # ---- helpers ----
    @contextlib.contextmanager
    def _own_global_random(self):
        """Run with this env's own state of the global `random` module, then put the caller's state back.

        BotAgent and GoBigger itself (CloneBall.update_direction) draw from the global `random`. Swapping its state
        (~10 us a step) keeps each game reproducible from its seed even when several envs share a process
        (BaseEnvManager, an in-process evaluator), and leaves the caller's random stream alone.
        """
        outside = random.getstate()
        if self._global_random_state is not None:  # None before the first reset: a scratch copy of the caller's
            random.setstate(self._global_random_state)
        try:
            yield
        finally:
            self._global_random_state = random.getstate()
            random.setstate(outside)

    def _player_scores(self, player_states: Mapping) -> List[float]:
        return [float(player_states[pid]['score']) for pid in self._our_ids]

    def _episode_end_info(self, leaderboard: Mapping[int, float]) -> Dict[str, Any]:
        """eval_episode_return plus the final standings (also under 'episode_info', which DI-engine's evaluator
        averages into <key>_mean). With a single team there is no opponent: opponent_score and score_ratio are nan."""
        final = float(leaderboard[self._cfg.team_id])
        others = other_scores(leaderboard, self._cfg.team_id)
        opponent = max(others) if others else math.nan
        rank = 1 + sum(score > final for score in others)  # 1 = first; ties share the better rank
        episode_info = dict(
            final_score=final,
            opponent_score=opponent,
            win=rank == 1,
            rank=rank,
            score_ratio=final / opponent if others else math.nan,
        )
        return dict(eval_episode_return=self._episode_return, **episode_info, episode_info=episode_info)

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


def _check_known_keys(custom: Mapping, reference: Mapping, path: str) -> None:
    """GoBigger silently accepts unknown config keys; raise ValueError for one instead (a typo would be ignored)."""
    for key, value in custom.items():
        if key not in reference:
            raise ValueError(f'unknown GoBigger config key {path}.{key}; known keys there: {sorted(reference)}')
        if isinstance(value, Mapping) and isinstance(reference[key], Mapping) and reference[key]:
            _check_known_keys(value, reference[key], f'{path}.{key}')


def _env_cfg_copies(cfg: Mapping, num: int, is_evaluator: bool) -> List[Mapping]:
    env_cfg = EasyDict(copy.deepcopy(dict(cfg)))  # cfg itself is left untouched (BaseEnv's version pops from it)
    env_cfg.is_evaluator = is_evaluator
    return [copy.deepcopy(env_cfg) for _ in range(num)]
