"""Training rewards: what an env step pays our team, read off the game's leaderboard (team id -> team score).

Every kind is the change of a potential of the leaderboard over the step, so a game's return is the potential at its
end minus the potential at its start, whatever happened in between:

| kind          | potential                                              | a game's return                              |
| ------------- | ------------------------------------------------------ | -------------------------------------------- |
| 'score'       | our team's score / reward_scale                        | (final - start score) / reward_scale         |
| 'margin'      | (ours - the best other team's score) / reward_scale    | the final margin / reward_scale: > 0 if won  |
| 'log_score'   | ln(our team's score)                                   | ln(final / start score)                      |
| 'log_ratio'   | ln(ours / the best other team's score)                 | ln(final score ratio): > 0 if won            |

The log kinds are scale-free (reward_scale is not used): doubling the team's mass pays the same early and late in a
game, so the large swings of a late game do not drown the early lessons. With a single team, "the best other team"
is absent and the margin and ratio kinds reduce to our own score. Evaluation always reports the true outcome.
"""
import math
from typing import List, Mapping

REWARD_KINDS = ('score', 'margin', 'log_score', 'log_ratio')
SCORE_FLOOR = 1.0  # scores are floored before a log (a team's score never drops near it in play)


def other_scores(leaderboard: Mapping[int, float], team_id: int) -> List[float]:
    """The scores of the teams other than ``team_id`` (empty with a single team)."""
    return [float(score) for team, score in leaderboard.items() if team != team_id]


def check_reward(kind: str, reward_scale: float) -> None:
    """Raise ValueError for an unknown kind or a reward_scale that is not > 0."""
    if kind not in REWARD_KINDS:
        raise ValueError(f'unknown reward {kind!r}; allowed: {REWARD_KINDS}')
    if not reward_scale > 0:
        raise ValueError(f'reward_scale must be > 0; got {reward_scale!r}')


class TeamReward:
    """The reward of one team, step by step: ``reset`` at the start of a game, then ``step`` after each env step."""

    def __init__(self, kind: str, team_id: int, reward_scale: float) -> None:
        check_reward(kind, reward_scale)
        self.kind = kind
        self.team_id = team_id
        self.reward_scale = float(reward_scale)
        self._last = 0.0

    def potential(self, leaderboard: Mapping[int, float]) -> float:
        ours = float(leaderboard[self.team_id])
        others = other_scores(leaderboard, self.team_id)
        if self.kind == 'score':
            return ours / self.reward_scale
        if self.kind == 'margin':
            return (ours - (max(others) if others else 0.0)) / self.reward_scale
        log_ours = math.log(max(ours, SCORE_FLOOR))
        if self.kind == 'log_score' or not others:
            return log_ours
        return log_ours - math.log(max(max(others), SCORE_FLOOR))  # 'log_ratio'

    def reset(self, leaderboard: Mapping[int, float]) -> None:
        self._last = self.potential(leaderboard)

    def step(self, leaderboard: Mapping[int, float]) -> float:
        """The reward of the step that ended with this leaderboard."""
        now = self.potential(leaderboard)
        reward, self._last = now - self._last, now
        return reward
