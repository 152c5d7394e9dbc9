"""What a game says about one team: its final standing (``outcome``) and what its players ate (``team_eats``).

Plain functions of GoBigger's leaderboard ({team_id: score}) and eat counters ({player_id: {counter: n}}): they
import no GoBigger code.
"""

import math
from typing import Any, Dict, List, Mapping, Sequence

from .rewards import other_scores

# what a team's players did in a game, summed over them: our name -> GoBigger's per-player counter (server.eats)
EAT_COUNTS = {
    'ate_food': 'food',
    'ate_thorns': 'thorns',  # each thorn ball eaten bursts the eater into pieces
    'ate_spores': 'spore',
    'ate_other_teams': 'clone_other',  # clone balls of other teams' players
    'ate_teammates': 'clone_team',  # clone balls of the team's other players
    'eaten': 'eaten',  # the team's clone balls eaten, by anyone
}


def outcome(leaderboard: Mapping[int, float], team_id: int) -> Dict[str, Any]:
    """A team's final standing from the leaderboard. With a single team there is no opponent: opponent_score and
    score_ratio are nan."""
    final = float(leaderboard[team_id])
    others = other_scores(leaderboard, team_id)
    opponent = max(others) if others else math.nan
    rank = 1 + sum(score > final for score in others)  # 1 = first; ties share the better rank
    return dict(
        final_score=final,
        opponent_score=opponent,
        win=rank == 1,
        rank=rank,
        score_ratio=final / opponent if others else math.nan,
    )


def team_eats(eats: Mapping[int, Mapping[str, int]], player_ids: Sequence[int]) -> Dict[str, int]:
    """A team's EAT_COUNTS over a game so far, from GoBigger's ``server.eats`` (player id -> counters)."""
    return {name: sum(int(eats[pid][key]) for pid in player_ids) for name, key in EAT_COUNTS.items()}


def player_scores(player_states: Mapping, player_ids: Sequence[int]) -> List[float]:
    """The scores of the given players (in the given order) from GoBigger's player_states."""
    return [float(player_states[pid]['score']) for pid in player_ids]
