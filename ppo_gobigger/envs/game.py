"""The GoBigger game an env config asks for: its st_* preset, the custom_cfg merged into it (unknown keys refused),
the length of one whole game in env steps, the env configs of collector and evaluator envs, and a game's own state
of the global `random`. The game itself is created by the env (gobigger_env.py)."""

import contextlib
import copy
import math
import random
from typing import Iterator, List, Mapping

import gobigger.configs
from ding.utils import deep_merge_dicts
from easydict import EasyDict

from .opponents import POLICY_OPPONENTS

PRESETS = tuple(sorted(name for name in vars(gobigger.configs) if name.startswith('st_')))  # st_tXpY: X teams of Y

STEP_MUL = 2  # game frames per GoBigger step, where the bots decide (20 frames = 1 s of game time)


def game_config(preset: str, custom_cfg: Mapping) -> EasyDict:
    """The config the game will run: ``preset`` (one of PRESETS) with ``custom_cfg`` deep-merged into it.
    ValueError for an unknown preset or a custom_cfg key the preset does not have (GoBigger would ignore it)."""
    if preset not in PRESETS:
        raise ValueError(f'unknown GoBigger preset {preset!r}; valid presets: {PRESETS}')
    preset_cfg = getattr(gobigger.configs, preset)
    _check_known_keys(custom_cfg, preset_cfg, 'custom_cfg')
    return EasyDict(deep_merge_dicts(preset_cfg, custom_cfg))


def team_num(env_cfg: Mapping) -> int:
    """The teams of a game of an env config: its preset's team_num unless custom_cfg sets another."""
    return int(env_cfg.get('custom_cfg', {}).get('team_num', getattr(gobigger.configs, env_cfg['preset'])['team_num']))


def game_env_steps(env_cfg: Mapping) -> int:
    """The env steps of one whole game of a (compiled) env config: frame_limit frames (its preset's unless
    custom_cfg sets another), STEP_MUL frames per GoBigger step, action_repeat GoBigger steps per env step; the
    GoBigger step and the env step that reach frame_limit end the game."""
    frame_limit = env_cfg.get('custom_cfg', {}).get('frame_limit',
                                                   getattr(gobigger.configs, env_cfg['preset'])['frame_limit'])
    game_steps = math.ceil(frame_limit / STEP_MUL)
    return math.ceil(game_steps / env_cfg['action_repeat'])


def _check_known_keys(custom: Mapping, reference: Mapping, path: str) -> None:
    """GoBigger silently accepts unknown config keys; raise ValueError for one instead (a typo would be ignored)."""
    for key, value in custom.items():
        if key not in reference:
            raise ValueError(f'unknown GoBigger config key {path}.{key}; known keys there: {sorted(reference)}')
        if isinstance(value, Mapping) and isinstance(reference[key], Mapping) and reference[key]:
            _check_known_keys(value, reference[key], f'{path}.{key}')


def env_configs(cfg: Mapping, num: int, is_evaluator: bool) -> List[Mapping]:
    """``num`` copies of the env config ``cfg``, for collector envs or (``is_evaluator``) evaluator envs."""
    env_cfg = EasyDict(copy.deepcopy(dict(cfg)))  # cfg itself is left untouched (BaseEnv's version pops from it)
    env_cfg.is_evaluator = is_evaluator
    if is_evaluator and env_cfg.get('opponent') in POLICY_OPPONENTS:
        env_cfg.opponent = 'bot'  # evaluations play fixed opponents, so that curves stay comparable
    return [copy.deepcopy(env_cfg) for _ in range(num)]


class GlobalRandom:
    """A game's own state of the global `random` module, swapped in around the code that draws from it.

    BotAgent and GoBigger itself (CloneBall.update_direction) draw from the global `random`. Swapping its state
    (~10 us a step) keeps each game reproducible from its seed even when several envs share a process
    (BaseEnvManager, an in-process evaluator), and leaves the caller's random stream alone.
    """

    def __init__(self) -> None:
        self._state = None  # None before the first seed: a scratch copy of the caller's

    def seed(self, seed: int) -> None:
        self._state = random.Random(seed).getstate()

    @contextlib.contextmanager
    def owned(self) -> Iterator[None]:
        """Run with this game's state of the global `random`, then put the caller's state back."""
        outside = random.getstate()
        if self._state is not None:
            random.setstate(self._state)
        try:
            yield
        finally:
            self._state = random.getstate()
            random.setstate(outside)
