"""Head to head on held-out games: each agent's team against each earlier agent's team.

    python benchmarks/head_to_head.py --ckpt recipe_s0=PATH [--ckpt ...] --vs scratch_s0=zoo/st_t2p2_scratch_s0.pth.tar
        [--vs ...] --games 50 [--seed 0] [--set KEY=VALUE ...] [--tag NAME]

Every (--ckpt, --vs) pair plays `gobigger-eval --ckpt A --vs B`'s games (pipeline/league/head_to_head.py: greedy,
A's seat rotating, on a multi-team preset B plays every other team) on the final games of benchmarks/learning.py:
env seed = --seed (learning.py's config seed, 0 by default) + learning_rows.FINAL_SEED_OFFSET, the block its final
rows play for every run seed, which no training run or in-training evaluation played. Each pair is written to
benchmarks/results/head_to_head_<tag>.json as soon as it finishes, with every game's record; a pair already there
on the same games is not played again (rerun the command to go on after a stop).
"""
import argparse
import json
import logging
import os
from typing import Dict, List, Sequence, Tuple

from ppo_gobigger.quiet import passive_openmp_waits, silence_third_party_noise

silence_third_party_noise()  # first: the imports below would print other packages' import-time notices
passive_openmp_waits()  # before torch is imported: see quiet.py

from tabulate import tabulate

import learning_runs as runs
from learning import named_paths, now
from learning_rows import FINAL_SEED_OFFSET
from ppo_gobigger.files import write_json
from ppo_gobigger.pipeline.learn.checkpoint import load_checkpoint
from ppo_gobigger.pipeline.league.head_to_head import head_to_head

TABLE_FIELDS = ('win_rate', 'score_ratio_mean', 'score_ratio_median', 'rank_mean')


def stored_config(path: str) -> Dict:
    return load_checkpoint(path)['config']


def final_seed(seed: int = 0) -> int:
    """The env seed of learning.py's final games for runs of config seed ``seed`` (every run seed plays them: a run's
    checkpoint stores its run seed, seed + K, so the block cannot be read from it)."""
    return seed + FINAL_SEED_OFFSET


def pair_key(a: str, b: str) -> str:
    return f'{a} vs {b}'


def play_pairs(agents: Dict[str, str], earlier: Dict[str, str], games: int, env_num: int, path: str,
               overrides: Sequence[str] = (), seed: int = 0) -> Dict:
    """Play every (agent, earlier) pair not yet in the results file ``path`` on ``games`` final games (``overrides``:
    --set KEY=VALUE of the games); return the results, written after each pair."""
    result = dict(date=now(), games=games, pairs={})
    if os.path.isfile(path):
        with open(path) as f:
            result['pairs'] = json.load(f)['pairs']
    env_seed = final_seed(seed)
    for a_name, a_path in agents.items():
        for b_name, b_path in earlier.items():
            key = pair_key(a_name, b_name)
            done = result['pairs'].get(key)
            if done and (done['games'], done['seed'], done['ckpt'], done['overrides']) == (
                    games, env_seed, [a_path, b_path], list(overrides)):
                continue
            logging.info(f'{key}: {games} games, env seed {env_seed}')
            report = head_to_head(a_path, b_path, episodes=games, seed=env_seed, env_num=env_num, overrides=overrides)
            result['pairs'][key] = dict(games=games, seed=env_seed, ckpt=[a_path, b_path], overrides=list(overrides),
                                        A={k: report['A'][k] for k in TABLE_FIELDS},
                                        B={k: report['B'][k] for k in TABLE_FIELDS}, game_records=report['games'])
            result['date'] = now()
            write_json(path, result)
    return result


def table(result: Dict) -> str:
    """One row per pair: the agent's (A's) figures and the earlier agent's (B's) win rate on the same games."""
    rows: List[Tuple] = []
    for key, pair in result['pairs'].items():
        a, b = pair['A'], pair['B']
        rows.append((key, pair['games'], f'{a["win_rate"]:.2f}', f'{a["score_ratio_mean"]:.2f}',
                     f'{a["score_ratio_median"]:.2f}', f'{a["rank_mean"]:.2f}', f'{b["win_rate"]:.2f}'))
    return tabulate(rows, headers=('A vs B', 'games', 'A win', 'A score ratio mean', 'median', 'A rank', 'B win'),
                    tablefmt='github')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--ckpt', action='append', default=[], metavar='NAME=PATH', required=True,
                        help='an agent whose team plays side A (repeat for several)')
    parser.add_argument('--vs', action='append', default=[], metavar='NAME=PATH', required=True,
                        help='an earlier agent whose team plays side B (repeat for several)')
    parser.add_argument('--games', type=int, default=50, help='games of each pair (default 50)')
    parser.add_argument('--seed', type=int, default=0,
                        help="learning.py's config seed: its final games, env seed SEED + 1000, are played (default 0)")
    parser.add_argument('--env-num', type=int, default=2, help='envs playing the games at once (default 2)')
    parser.add_argument('--set', action='append', default=[], metavar='KEY=VALUE',
                        help="override a key of the games' config (e.g. env.custom_cfg.frame_limit=200)")
    parser.add_argument('--tag', default=None, help='results name (default: the first agent\'s preset)')
    args = parser.parse_args()
    if args.games < 1 or args.env_num < 1:
        parser.error(f'--games and --env-num must be >= 1, got {args.games} and {args.env_num}')
    agents, earlier = named_paths(args.ckpt, '--ckpt', parser), named_paths(args.vs, '--vs', parser)
    logging.basicConfig(level=logging.INFO, format='%(asctime)s %(levelname)s %(message)s', datefmt='%H:%M:%S',
                        force=True)  # DI-engine set up the root logger at import
    tag = args.tag or stored_config(next(iter(agents.values())))['env']['preset']
    path = os.path.join(runs.RESULTS, f'head_to_head_{tag}.json')
    result = play_pairs(agents, earlier, args.games, args.env_num, path, args.set, args.seed)
    logging.info(f'wrote {path}')
    print(table(result))


if __name__ == '__main__':
    main()
