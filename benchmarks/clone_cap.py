"""What the clone cap hides from a trained team: `python benchmarks/clone_cap.py --ckpt CKPT [--level L] [--games N]`.

The features keep MAX_CLONE clone balls of a player's view (features.py). This plays N greedy games of a checkpoint
against level-L bots (the checkpoint's own config and features, game seeds of env seed --seed, in this process) and
counts, at every decision of each of our players, the enemy balls in view that matter:
- a threat: an enemy ball that can eat the player's smallest ball (score > eat_ratio x its score);
- prey: an enemy ball that the player's largest ball can eat.
For each value of env.enemy_clone_slots in --slots it says how often such a ball is in view but not among the kept
MAX_CLONE, over all decisions. The games themselves are played with the checkpoint's features, so every row reads the
same views. Prints a table and writes benchmarks/results/clone_cap_<name>.json. Nothing is asserted.
"""
import argparse
from typing import Dict, List, Mapping

from ppo_gobigger.quiet import silence_third_party_noise

silence_third_party_noise()  # first: the imports below would print other packages' import-time notices

import numpy as np
from ding.utils import ENV_REGISTRY

from ppo_gobigger.envs import MAX_CLONE, GoBiggerPPOEnv
from ppo_gobigger.envs.features import CLONE_PLAYER, CLONE_TEAM, ROW_WIDTH, SCORE, check_enemy_slots, keep_clones

from view_games import add_game_args, play_in_process, report_games

COUNTING_ENV = 'gobigger_ppo_clone_cap'
ROW = ROW_WIDTH['clone']  # GoBigger 0.2 clone row: x, y, r, score, vx, vy, dir_x, dir_y, player_id, team_id


class Counts:
    """Decisions seen, and per enemy_slots value the decisions with a threat / prey in view but not kept."""

    def __init__(self, slots: List[int]) -> None:
        self.slots = slots
        self.decisions = 0
        self.over_cap = 0  # more clone balls in view than MAX_CLONE
        self.threat_in_view = 0
        self.prey_in_view = 0
        self.threat_hidden = {k: 0 for k in slots}
        self.prey_hidden = {k: 0 for k in slots}

    def add_view(self, player_state: Mapping, player_id: int, team_id: int, eat_ratio: float) -> None:
        clones = np.array(player_state['overlap']['clone'], np.float64).reshape(-1, ROW)  # (N, 10)
        self.decisions += 1
        own = clones[:, CLONE_PLAYER] == player_id  # (N,)
        if not own.any():
            return
        enemy = clones[:, CLONE_TEAM] != team_id
        score = clones[:, SCORE]
        threat = enemy & (score > eat_ratio * score[own].min())
        prey = enemy & (score[own].max() > eat_ratio * score)
        self.threat_in_view += bool(threat.any())
        self.prey_in_view += bool(prey.any())
        if len(clones) <= MAX_CLONE:
            return  # every ball kept, whatever the slots
        self.over_cap += 1
        x0, y0, x1, y1 = player_state['rectangle']
        centre = np.array(((x0 + x1) / 2, (y0 + y1) / 2))
        for k in self.slots:
            kept = np.zeros(len(clones), bool)
            kept[keep_clones(clones, centre, team_id, k)] = True
            self.threat_hidden[k] += bool((threat & ~kept).any())
            self.prey_hidden[k] += bool((prey & ~kept).any())

    def report(self) -> Dict:
        n = max(self.decisions, 1)
        return dict(
            decisions=self.decisions,
            over_cap=self.over_cap / n,
            threat_in_view=self.threat_in_view / n,
            prey_in_view=self.prey_in_view / n,
            hidden={k: dict(threat=self.threat_hidden[k] / n, prey=self.prey_hidden[k] / n) for k in self.slots},
        )


COUNTS: List[Counts] = []  # the one Counts of this run (the env is built by the manager, in this process)


@ENV_REGISTRY.register(COUNTING_ENV)
class CountingEnv(GoBiggerPPOEnv):
    """GoBiggerPPOEnv that counts, at every observation, what the clone cap hides from our players."""

    def _observation(self, global_state, player_states):
        for player_id in self._our_ids:
            COUNTS[0].add_view(player_states[player_id], player_id, self._cfg.team_id, self._consts.eat_ratio)
        return super()._observation(global_state, player_states)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_game_args(parser)
    parser.add_argument('--slots', type=int, nargs='+', default=[0, 4, 8], help='env.enemy_clone_slots values')
    args = parser.parse_args()
    for k in args.slots:
        check_enemy_slots(k)

    COUNTS.append(Counts(args.slots))
    report, env_cfg = play_in_process(args, COUNTING_ENV)
    counts = COUNTS[0].report()
    played = dict(played_with_enemy_clone_slots=env_cfg.get('enemy_clone_slots', 0))
    out = report_games('clone_cap', args, report, dict(played, **counts))
    print(f"  {counts['decisions']} decisions of our players; more than {MAX_CLONE} clone balls in view at "
          f"{counts['over_cap']:.1%}, a threat in view at {counts['threat_in_view']:.1%}, prey at "
          f"{counts['prey_in_view']:.1%}")
    print('  env.enemy_clone_slots | a threat in view, not kept | prey in view, not kept  (share of decisions)')
    for k in args.slots:
        hidden = counts['hidden'][k]
        print(f"  {k:21d} | {hidden['threat']:26.1%} | {hidden['prey']:.1%}")
    print(f'wrote {out}')


if __name__ == '__main__':
    main()
