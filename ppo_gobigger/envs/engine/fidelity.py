"""Play one game on two engines in lockstep from the same seed and find the first observation that differs.

Used by tests/test_engine.py (short games) and benchmarks/engine.py (whole games). Each game keeps its own copy of
the global `random` (GoBigger's CloneBall and the bots draw from it), swapped in around each of its steps, so two
games in one process draw exactly what each would draw alone.
"""
import random
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

import numpy as np

from . import create_bot, create_game

Controller = Union[int, str]  # a bot level 1-3, or 'random' (uniform moves, ejects, splits)


def first_difference(a: Any, b: Any, path: str = '') -> Optional[Tuple[str, Any, Any]]:
    """(path, a's value, b's value) of the first place where two nested structures differ (type or value), or None."""
    if type(a) is not type(b):
        return path, a, b
    if isinstance(a, dict):
        if list(a.keys()) != list(b.keys()):
            return path + '.keys()', list(a.keys()), list(b.keys())
        for k in a:
            found = first_difference(a[k], b[k], f'{path}[{k!r}]')
            if found:
                return found
        return None
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return path + '.len', len(a), len(b)
        for i, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, f'{path}[{i}]')
            if found:
                return found
        return None
    if a != b:
        return path, a, b
    return None


class SeededGame:
    """One game of ``preset`` on ``engine`` whose players are all driven by ``controller``, seeded like our env."""

    def __init__(self, preset: str, seed: int, controller: Controller, engine: str,
                 custom_cfg: Optional[dict] = None, step_mul: int = 2) -> None:
        saved = random.getstate()
        random.seed(seed)
        self.game = create_game(preset, custom_cfg or {}, step_mul=step_mul, engine=engine)
        self.game.server._random.seed(seed)  # the managers' shared Random, re-seeded in place (see notes)
        self.obs = self.game.reset()
        self._random_state = random.getstate()
        random.setstate(saved)
        self.player_ids = [pid for _, ids in self.game.get_team_infos() for pid in ids]
        self.controller = controller
        self.bots = ({pid: create_bot(pid, level=controller, engine=engine) for pid in self.player_ids}
                     if controller != 'random' else None)
        self.actions = np.random.default_rng(seed)  # random controller's own stream, the same for both engines
        self.done = False

    def _actions(self) -> Dict[int, list]:
        if self.bots is not None:
            return {pid: self.bots[pid].step(self.obs[1][pid]) for pid in self.player_ids}
        xy = self.actions.uniform(-1.0, 1.0, size=(len(self.player_ids), 2))
        kind = self.actions.choice(3, size=len(self.player_ids), p=(0.8, 0.1, 0.1))
        return {pid: [float(x), float(y), int(k)] for pid, (x, y), k in zip(self.player_ids, xy, kind)}

    def step(self) -> tuple:
        """One env step: (obs, reward, done, info)."""
        saved = random.getstate()
        random.setstate(self._random_state)
        try:
            actions = self._actions()
            result = self.game.step(actions)
        finally:
            self._random_state = random.getstate()
            random.setstate(saved)
        self.obs, self.done = result[0], result[2]
        return (actions,) + tuple(result)


def compare_games(preset: str, seed: int, controller: Controller, steps: Optional[int] = None,
                  custom_cfg: Optional[dict] = None, engines: Tuple[str, str] = ('stock', 'fast')) -> Dict[str, Any]:
    """Play both engines in lockstep for ``steps`` env steps (None: to the end). Returns steps played, the final
    leaderboards, and ``difference``: None, or (step, path, value on engines[0], value on engines[1])."""
    a, b = (SeededGame(preset, seed, controller, e, custom_cfg) for e in engines)
    found = first_difference(a.obs, b.obs, 'reset')
    played = 0
    while found is None and not a.done and (steps is None or played < steps):
        found = first_difference(a.step(), b.step(), f'step{played}')
        played += 1
    if found is None and a.done != b.done:
        found = ('done', a.done, b.done)
    return dict(steps=played, leaderboard=[a.obs[0]['leaderboard'], b.obs[0]['leaderboard']],
                difference=None if found is None else (played,) + tuple(found))
