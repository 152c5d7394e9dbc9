"""Opponents: who plays the teams we do not control.

| kind       | behaviour                                                                                   |
| ---------- | ------------------------------------------------------------------------------------------- |
| 'bot'      | gobigger.agents.BotAgent(level=bot_level); level 3 flees bigger balls, chases edible thorns, |
|            | then food. It draws from the global `random` module: the env gives each game its own seeded |
|            | state of it (game.GlobalRandom).                                                            |
| 'random'   | a uniformly random action index per player and step, from a numpy Generator seeded per      |
|            | episode, played through the action table.                                                   |
| 'scripted' | scripted.ScriptedAgent with the Tactics of the env's scripted_variant (scripted.py's        |
|            | SCRIPTED_VARIANTS): flees, split-attacks, hunts, merges, eats thorns, then food; it also sees |
|            | its teammates' views.                                                                       |
| 'self'     | POLICY_OPPONENTS: the pipeline plays the other teams with policies. The env then takes every |
| 'league'   | team's actions and reports every team's view and reward (GoBiggerEnv's docstring); a team   |
|            | may be handed to the env's bots of a level step by step (a league's bot members).           |
"""

from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
from gobigger.agents import BotAgent

from .engine import DEFAULT_ENGINE, create_bot

from .actions import ACTION_NUM, to_game_action
from .scripted import ScriptedAgent, check_variant

OPPONENT_KINDS = ('bot', 'random', 'scripted', 'self', 'league')
POLICY_OPPONENTS = ('self', 'league')  # kinds played by the pipeline's policies, not by the env
ENV_OPPONENTS = ('bot', 'random', 'scripted')  # kinds the env plays itself (Opponents below); also the stand-in kinds
BOT_LEVELS = (1, 2, 3)


def check_opponent(kind: str, bot_level: int) -> None:
    """Raise ValueError for an unknown opponent kind or bot level."""
    if kind not in OPPONENT_KINDS:
        raise ValueError(f'unknown opponent {kind!r}; allowed: {OPPONENT_KINDS}')
    if bot_level not in BOT_LEVELS:
        raise ValueError(f'bot_level {bot_level!r} is not one of {BOT_LEVELS}')


class Opponents:
    """Acts for the given players (the teams we do not control, or a stand-in for ours) as bots, scripted players
    or at random. border: the map's (width, height), for the scripted players' wall term (None: no wall term)."""

    def __init__(self, kind: str, player_ids: Sequence[int], bot_level: int = 3, engine: str = DEFAULT_ENGINE,
                 scripted_variant: str = 'hunter', border: Optional[Tuple[float, float]] = None) -> None:
        check_opponent(kind, bot_level)
        tactics = check_variant(scripted_variant)
        if kind not in ENV_OPPONENTS:
            raise ValueError(f'the env plays only {ENV_OPPONENTS}; {kind!r} opponents are played by the pipeline')
        self.kind = kind
        self.bot_level = bot_level
        self.engine = engine  # envs.engine: the bots' implementation ('fast' or 'stock'), the same decisions
        self.player_ids = list(player_ids)
        self.scripted_variant = scripted_variant
        self._bots: Dict[int, BotAgent] = {}
        self._scripted = {pid: ScriptedAgent(pid, tactics, border)
                          for pid in (self.player_ids if kind == 'scripted' else [])}
        self._rng = np.random.default_rng(0)

    def reset(self, seed: int) -> None:
        """Start an episode: fresh bots (a BotAgent keeps a queue of planned actions) and a Generator from seed."""
        self._rng = np.random.default_rng(seed)
        if self.kind == 'bot':
            self._bots = {pid: create_bot(pid, self.bot_level, self.engine) for pid in self.player_ids}
        for agent in self._scripted.values():
            agent.reset(seed)

    @property
    def watched_ids(self) -> List[int]:
        """The players whose views act() reads: a bot's or a scripted player's own; random play reads none."""
        return self.player_ids if self.kind in ('bot', 'scripted') else []

    def act(self, player_states: Mapping) -> Dict[int, List]:
        """GoBigger actions {player_id: [x, y, action_type]} for the opponents, given the last player_states."""
        if self.kind == 'bot':
            return {pid: bot.step(player_states[pid]) for pid, bot in self._bots.items()}
        if self.kind == 'scripted':  # each sees its own view and those of its teammates among player_ids
            team = {pid: player_states[pid]['team_name'] for pid in self.player_ids}
            return {pid: agent.step(player_states[pid], [player_states[q] for q in self.player_ids
                                                         if q != pid and team[q] == team[pid]])
                    for pid, agent in self._scripted.items()}
        indices = self._rng.integers(ACTION_NUM, size=len(self.player_ids))
        return {pid: to_game_action(k) for pid, k in zip(self.player_ids, indices)}

    def __repr__(self) -> str:
        level = f', level={self.bot_level}' if self.kind == 'bot' else ''
        level += f', variant={self.scripted_variant!r}' if self.kind == 'scripted' else ''
        return f'Opponents({self.kind!r}{level}, players={self.player_ids})'
