"""What a player's teammates see that it does not: `python benchmarks/team_view.py --ckpt CKPT [--level L] [--games N]`.

Each GoBigger player sees its own view box only. This plays N greedy games of a checkpoint against level-L bots (the
checkpoint's own config and features, game seeds of env seed --seed, in this process) and counts, at every decision
of each of our players, how often each kind of item is in its own view, and how often none is in its own view while a
teammate has one in view (what env.team_vision adds to its features):
- a thorn;
- an enemy ball;
- prey: an enemy ball that the player's largest ball can eat;
- a threat: an enemy ball that can eat the player's smallest ball.
Prints a table and writes benchmarks/results/team_view_<name>_level<L>.json. Nothing is asserted.
"""
import argparse
from typing import Dict, List, Mapping, Sequence

from ppo_gobigger.quiet import silence_third_party_noise

silence_third_party_noise()  # first: the imports below would print other packages' import-time notices

import numpy as np
from ding.utils import ENV_REGISTRY

from ppo_gobigger.envs import GoBiggerPPOEnv
from ppo_gobigger.envs.features import CLONE_PLAYER, CLONE_TEAM, ROW_WIDTH, SCORE

from view_games import add_game_args, play_in_process, report_games

COUNTING_ENV = 'gobigger_ppo_team_view'
KINDS = ('thorn', 'enemy', 'prey', 'threat')


def items_in_view(player_state: Mapping, team_id: int, largest: float, smallest: float,
                  eat_ratio: float) -> Dict[str, bool]:
    """Which KINDS one view holds, judged for a player whose own balls' scores run from smallest to largest."""
    clones = np.array(player_state['overlap']['clone'], np.float64).reshape(-1, ROW_WIDTH['clone'])  # (N, 10)
    enemy_score = clones[clones[:, CLONE_TEAM] != team_id, SCORE]  # (E,)
    return dict(
        thorn=len(player_state['overlap']['thorns']) > 0,
        enemy=len(enemy_score) > 0,
        prey=bool((largest > eat_ratio * enemy_score).any()),
        threat=bool((enemy_score > eat_ratio * smallest).any()),
    )


class Counts:
    """Decisions seen, and per kind the decisions with it in the player's own view / only in a teammate's."""

    def __init__(self) -> None:
        self.decisions = 0
        self.own = dict.fromkeys(KINDS, 0)
        self.teammate_only = dict.fromkeys(KINDS, 0)

    def add_team(self, player_states: Mapping, player_ids: Sequence[int], team_id: int, eat_ratio: float) -> None:
        for player_id in player_ids:
            clones = np.array(player_states[player_id]['overlap']['clone'], np.float64).reshape(-1, ROW_WIDTH['clone'])
            own_score = clones[clones[:, CLONE_PLAYER] == player_id, SCORE]  # (n,) the player's own balls
            if not len(own_score):
                continue
            largest, smallest = own_score.max(), own_score.min()
            views = {i: items_in_view(player_states[i], team_id, largest, smallest, eat_ratio) for i in player_ids}
            self.decisions += 1
            for kind in KINDS:
                self.own[kind] += views[player_id][kind]
                others = any(views[i][kind] for i in player_ids if i != player_id)
                self.teammate_only[kind] += (not views[player_id][kind]) and others

    def report(self) -> Dict:
        n = max(self.decisions, 1)
        return dict(decisions=self.decisions, own={k: v / n for k, v in self.own.items()},
                    teammate_only={k: v / n for k, v in self.teammate_only.items()})


COUNTS: List[Counts] = []  # the one Counts of this run (the env is built by the manager, in this process)


@ENV_REGISTRY.register(COUNTING_ENV)
class CountingEnv(GoBiggerPPOEnv):
    """GoBiggerPPOEnv that counts, at every observation, what our players' teammates see that they do not."""

    def _observation(self, global_state, player_states):
        COUNTS[0].add_team(player_states, self._our_ids, self._cfg.team_id, self._consts.eat_ratio)
        return super()._observation(global_state, player_states)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_game_args(parser)
    args = parser.parse_args()

    COUNTS.append(Counts())
    report, env_cfg = play_in_process(args, COUNTING_ENV)
    counts = COUNTS[0].report()
    played = dict(played_with_team_vision=env_cfg.get('team_vision', False))
    out = report_games('team_view', args, report, dict(played, **counts))
    print(f"  {counts['decisions']} decisions of our players (share of them)")
    print('  in view   | in its own view | only in a teammate\'s view')
    for kind in KINDS:
        print(f"  {kind:9s} | {counts['own'][kind]:15.1%} | {counts['teammate_only'][kind]:.1%}")
    print(f'wrote {out}')


if __name__ == '__main__':
    main()
