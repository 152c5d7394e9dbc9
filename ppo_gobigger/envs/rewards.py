"""Training rewards: what an env step pays our team, read off the game's leaderboard (team id -> team score).

Every kind is the change of a potential of the leaderboard over the step, so a game's return is the potential at its
end minus the potential at its start, whatever happened in between:

| kind          | potential                                              | a game's return                              |
| ------------- | ------------------------------------------------------ | -------------------------------------------- |
| 'log_score'   | ln(our team's score)                                   | ln(final / start score)                      |
| 'log_ratio'   | ln(ours / the best other team's score)                 | ln(final score ratio): > 0 if won            |

Both are scale-free: doubling the team's mass pays the same early and late in a game, so the large swings of a late
game do not drown the early lessons. 'log_ratio' also pays for what the other teams lose; with a single team, "the
best other team" is absent and it reduces to 'log_score'. Evaluation always reports the true outcome.

Each player gets its own reward (A,): ``team_spirit * (the team's reward) + (1 - team_spirit) * ln(the player's own
score)``. With team_spirit 1 every player gets the team's reward; below 1 a player's advantage is less the noise of
what its teammates did (GoBigger's own baselines mix the two the same way). A game's return is the mean of the
players' returns.
"""
import math
from typing import List, Mapping, Sequence

import numpy as np

from .features import SCORE_FLOOR  # the log kinds floor scores as the features do

REWARD_KINDS = ('log_score', 'log_ratio')


def other_scores(leaderboard: Mapping[int, float], team_id: int) -> List[float]:
    """The scores of the teams other than ``team_id`` (empty with a single team)."""
    return [float(score) for team, score in leaderboard.items() if team != team_id]


def check_reward(kind: str, team_spirit: float = 1.0) -> None:
    """Raise ValueError for an unknown kind or a team_spirit outside [0, 1]."""
    if kind not in REWARD_KINDS:
        raise ValueError(f'unknown reward {kind!r}; allowed: {REWARD_KINDS}')
    if not 0.0 <= team_spirit <= 1.0:
        raise ValueError(f'team_spirit must be in [0, 1]; got {team_spirit!r}')


class TeamReward:
    """The rewards of one team's players, step by step: ``reset`` at the start of a game, then ``step`` after each
    env step, each given the leaderboard and the team's player scores (in team order)."""

    def __init__(self, kind: str, team_id: int, team_spirit: float = 1.0) -> None:
        check_reward(kind, team_spirit)
        self.kind = kind
        self.team_id = team_id
        self.team_spirit = float(team_spirit)
        self._last = np.zeros(0)

    def team_potential(self, leaderboard: Mapping[int, float]) -> float:
        ours = float(leaderboard[self.team_id])
        others = other_scores(leaderboard, self.team_id)
        best_other = max(max(others), SCORE_FLOOR) if others else None  # log_ratio's denominator
        log_ours = math.log(max(ours, SCORE_FLOOR))
        if self.kind == 'log_score' or best_other is None:
            return log_ours
        return log_ours - math.log(best_other)  # 'log_ratio'

    def potential(self, leaderboard: Mapping[int, float], player_scores: Sequence[float]) -> np.ndarray:
        """(A,) each player's potential."""
        team = self.team_potential(leaderboard)
        if self.team_spirit == 1.0:
            return np.full(len(player_scores), team)
        scores = np.asarray(player_scores, np.float64)  # (A,)
        own = np.log(np.maximum(scores, SCORE_FLOOR))
        return self.team_spirit * team + (1.0 - self.team_spirit) * own

    def reset(self, leaderboard: Mapping[int, float], player_scores: Sequence[float]) -> None:
        self._last = self.potential(leaderboard, player_scores)

    def step(self, leaderboard: Mapping[int, float], player_scores: Sequence[float]) -> np.ndarray:
        """(A,) float32: each player's reward for the step that ended with this leaderboard and these scores."""
        now = self.potential(leaderboard, player_scores)
        reward, self._last = now - self._last, now
        return reward.astype(np.float32)
