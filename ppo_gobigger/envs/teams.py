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


def episode_end_info(leaderboard: Mapping[int, float], eats: Mapping[int, Mapping[str, int]], teams: Sequence[int],
                     team_players: Sequence[Sequence[int]], returns: Sequence[float], game_seed: int,
                     every_team: bool) -> Dict[str, Any]:
    """The env's info at a game's end: eval_episode_return plus the first team's (ours) final standing and what it
    ate (EAT_COUNTS; both also under 'episode_info', which DI-engine's evaluator averages into <key>_mean) and the
    game's seed; with ``every_team`` (opponents played by policies), every team's under 'teams' as well.

    teams: GoBigger team ids in the caller's order, ours first; team_players: their player ids; returns: each team's
    return so far (the mean of its players')."""
    episode_info = dict(outcome(leaderboard, teams[0]), **team_eats(eats, team_players[0]))
    info = dict(eval_episode_return=float(returns[0]), **episode_info, episode_info=episode_info, game_seed=game_seed)
    if every_team:
        info['teams'] = [dict(team_id=team, eval_episode_return=float(ret), **outcome(leaderboard, team),
                              **team_eats(eats, ids)) for team, ret, ids in zip(teams, returns, team_players)]
    return info
