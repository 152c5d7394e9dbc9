"""Which GoBigger runs a game: 'stock' (gobigger 0.2.1 as installed) or 'fast' (the same game, bit for bit, cheaper).

    create_game(preset, custom_cfg, step_mul, engine)  -> a GoBigger env (reset, step, get_team_infos, server)
    create_bot(player_id, level, engine)              -> a GoBigger BotAgent (step(player_state) -> action)
    step_game(game, actions, observe)                  -> game.step(actions), views of the observed players only

'fast' subclasses GoBigger's own server, players, balls and bots and overrides only their hot methods
(server.py, balls.py, collision.py, views.py, bot.py); tests/test_engine.py plays the same seeds on both and
compares every observation exactly. Its two hottest modules, balls.py and collision.py, are compiled by the install
(Cython's pure-Python mode, setup.py). It is verified on the versions in VERIFIED_VERSIONS only: on any other
installed GoBigger, or where those modules were not built, 'fast' falls back to 'stock' with one warning saying why.
"""
import functools
import importlib
import importlib.metadata
import logging
from typing import Optional, Sequence

from gobigger.agents import BotAgent
from gobigger.envs import GoBiggerEnv
from gobigger.utils import deep_merge_dicts

ENGINES = ('fast', 'stock')  # allowed values of env.engine
DEFAULT_ENGINE = 'fast'  # env.engine's default, and the engine of games made outside an env (gobigger-play)
VERIFIED_VERSIONS = ('0.2.1',)  # gobigger versions the fast engine was checked against, observation for observation

_logger = logging.getLogger(__name__)
_warned = False
_warned_uncompiled = False


@functools.lru_cache(maxsize=None)
def gobigger_version() -> str:
    """The installed gobigger's version (its distribution metadata, read once per process)."""
    return importlib.metadata.version('gobigger')


def compiled() -> bool:
    """Whether the fast engine's Cython modules (balls, collision; setup.py) are the built ones, not their source."""
    from . import balls, collision
    return balls.COMPILED and collision.COMPILED


def check_engine(engine: str) -> None:
    """ValueError naming ``engine`` unless it is one of ENGINES."""
    if engine not in ENGINES:
        raise ValueError(f'engine must be one of {ENGINES}; got {engine!r}')


def resolve_engine(engine: str, version: Optional[str] = None) -> str:
    """The engine that will run: ``engine``, or 'stock' (one warning per process) if 'fast' is not verified on
    ``version`` (default: the installed gobigger) or its modules were not compiled (compiled())."""
    global _warned, _warned_uncompiled
    check_engine(engine)
    if engine == 'fast':
        version = gobigger_version() if version is None else version
        if version not in VERIFIED_VERSIONS:
            if not _warned:
                _logger.warning('engine=fast is verified on gobigger %s only; gobigger %s is installed: using the '
                                'stock engine', ', '.join(VERIFIED_VERSIONS), version)
                _warned = True
            return 'stock'
        if not compiled():
            if not _warned_uncompiled:
                _logger.warning('engine=fast runs compiled modules that are not built here (pip install -e . builds '
                                'them): using the stock engine')
                _warned_uncompiled = True
            return 'stock'
    return engine


def create_game(preset: str, custom_cfg: Optional[dict] = None, step_mul: int = 2, engine: str = DEFAULT_ENGINE) -> GoBiggerEnv:
    """gobigger.envs.create_env(preset, custom_cfg, step_mul=step_mul) on the chosen engine (st_* presets)."""
    engine = resolve_engine(engine)
    if not isinstance(preset, str) or not preset.startswith('st_'):
        raise ValueError(f'preset must be a GoBigger st_* preset (e.g. st_t2p2); got {preset!r}')
    if engine == 'stock':
        from gobigger.envs import create_env
        return create_env(preset, custom_cfg or {}, step_mul=step_mul)
    from .server import FastGoBiggerEnv
    cfg = getattr(importlib.import_module(f'gobigger.configs.{preset}'), preset)
    return FastGoBiggerEnv(deep_merge_dicts(cfg, custom_cfg or {}), step_mul=step_mul)


def step_game(game: GoBiggerEnv, actions: dict, observe: Optional[Sequence[int]] = None):
    """game.step(actions). On the fast engine, player_states holds only the players in ``observe`` (ids; None: all;
    the last step of a game shows all): views nobody reads are not built. Stock builds them all."""
    from .server import FastGoBiggerEnv
    if observe is not None and isinstance(game, FastGoBiggerEnv):
        return game.step(actions, observe=observe)
    return game.step(actions)


def create_bot(player_id: int, level: int = 3, engine: str = DEFAULT_ENGINE) -> BotAgent:
    """gobigger.agents.BotAgent(name=player_id, level=level) on the chosen engine."""
    if engine == 'stock' or resolve_engine(engine) == 'stock':
        return BotAgent(name=player_id, level=level)
    from .bot import FastBotAgent
    return FastBotAgent(name=player_id, level=level)
