"""How the scripted players (ppo_gobigger/envs/scripted.py) do against GoBigger's bots: our team played by a
scripted stand-in (env.stand_in='scripted'), the other teams by level-k bots, over a fixed block of game seeds.

    python benchmarks/scripted.py --variant hunter --bot-level 2                      # st_t2p2, seeds 0-19
    python benchmarks/scripted.py --variant holdout --bot-level 2 --preset st_t3p2
    python benchmarks/scripted.py --stand-in bot --bot-level 2                        # the bots' own mirror match

Prints one line per game and a summary: games, wins (first place), mean rank, median score ratio (ours / the best
other team's). Game seed s is the evaluator game of env seed s (dynamic_seed off), so a seed block repeats exactly.
"""
import argparse
import statistics
import time
from typing import Dict, List

import numpy as np

from ppo_gobigger.envs import GoBiggerEnv
from ppo_gobigger.envs.scripted import SCRIPTED_VARIANTS
from ppo_gobigger.quiet import silence_third_party_noise


def play(preset: str, seed: int, bot_level: int, stand_in: str, variant: str, frame_limit: int) -> Dict:
    """One game with our team played by the stand-in; its episode-end info (win, rank, score_ratio, ...)."""
    env = GoBiggerEnv(dict(preset=preset, opponent='bot', bot_level=bot_level, stand_in=stand_in,
                           stand_in_bot_level=bot_level, scripted_variant=variant, is_evaluator=True,
                           custom_cfg={'frame_limit': frame_limit}))
    env.seed(seed, dynamic_seed=False)
    env.reset()
    ignored = np.zeros(env.action_space.shape, np.int64)  # the stand-in plays; the given actions are ignored
    try:
        while True:
            timestep = env.step(ignored)
            if timestep.done:
                return timestep.info
    finally:
        env.close()


def summary(infos: List[Dict]) -> str:
    n = len(infos)
    wins = sum(bool(i['win']) for i in infos)
    return (f'games={n} wins={wins} ({wins / n:.2f}) mean_rank={np.mean([i["rank"] for i in infos]):.2f} '
            f'median_score_ratio={statistics.median(i["score_ratio"] for i in infos):.2f}')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--variant', default='hunter', choices=sorted(SCRIPTED_VARIANTS))
    parser.add_argument('--stand-in', default='scripted', choices=('scripted', 'bot', 'random'))
    parser.add_argument('--bot-level', type=int, default=2, choices=(1, 2, 3))
    parser.add_argument('--preset', default='st_t2p2')
    parser.add_argument('--seeds', type=int, nargs=2, default=(0, 20), metavar=('FIRST', 'END'))
    parser.add_argument('--frame-limit', type=int, default=3600, help='frames per game (3600: a whole st_t2p2 game)')
    args = parser.parse_args()
    silence_third_party_noise()
    start, infos = time.time(), []
    for seed in range(*args.seeds):
        info = play(args.preset, seed, args.bot_level, args.stand_in, args.variant, args.frame_limit)
        infos.append(info)
        print(f'seed {seed}: win={info["win"]} rank={info["rank"]} ours={info["final_score"]:.0f} '
              f'best_other={info["opponent_score"]:.0f} ratio={info["score_ratio"]:.2f} '
              f'ate_other_teams={info["ate_other_teams"]} eaten={info["eaten"]} thorns={info["ate_thorns"]}',
              flush=True)
    who = f'{args.stand_in}/{args.variant}' if args.stand_in == 'scripted' else f'{args.stand_in}'
    print(f'{who} vs level-{args.bot_level} bots, {args.preset}, {args.frame_limit} frames: {summary(infos)} '
          f'({time.time() - start:.0f} s)')


if __name__ == '__main__':
    main()
