"""What the features cost next to the game: `python benchmarks/feature_cost.py [--frames N] [--seed S]`.

Plays one st_t2p2 game with level-3 bots driving all four players (so the views look like real play), and times
per step: the raw GoBigger step, the bots, and the features of our team's two players (team_features). Then times
the full GoBiggerEnv step (features + bots + game + bookkeeping) with random actions for our team.
Prints a table and writes benchmarks/results/feature_cost.json. Nothing is asserted: the numbers are for reading.
"""
import argparse
import os
import platform
import random
import time

from ppo_gobigger.quiet import silence_third_party_noise

silence_third_party_noise()  # first: the imports below would print other packages' import-time notices

import numpy as np
from gobigger.agents import BotAgent
from gobigger.envs import create_env
from gobigger.utils import deep_merge_dicts

import gobigger.configs
from ppo_gobigger.envs import ACTION_NUM, GameConsts, GoBiggerEnv, team_features
from ppo_gobigger.files import write_json

PRESET = 'st_t2p2'
OUR_TEAM = 0


def time_raw_game(frames: int, seed: int) -> dict:
    custom = {'frame_limit': frames}
    consts = GameConsts.from_game_cfg(deep_merge_dicts(getattr(gobigger.configs, PRESET), custom))
    game = create_env(PRESET, custom, step_mul=2)
    game.server._random.seed(seed)
    random.seed(seed)
    global_state, states = game.reset()
    teams = dict(game.get_team_infos())
    bots = {pid: BotAgent(name=pid, level=3) for pid in states}
    bot_s, step_s, feature_s, in_view = [], [], [], []
    done = False
    while not done:
        t0 = time.perf_counter()
        actions = {pid: bot.step(states[pid]) for pid, bot in bots.items()}
        t1 = time.perf_counter()
        (global_state, states), _, done, _ = game.step(actions)
        t2 = time.perf_counter()
        team_features(global_state, states, teams[OUR_TEAM], OUR_TEAM, consts)
        t3 = time.perf_counter()
        bot_s.append(t1 - t0)
        step_s.append(t2 - t1)
        feature_s.append(t3 - t2)
        in_view.append([len(states[teams[OUR_TEAM][0]]['overlap'][k]) for k in ('food', 'spore', 'clone', 'thorns')])
    players = len(teams[OUR_TEAM])
    return dict(
        steps=len(step_s),
        players_featurised_per_step=players,
        game_step_ms=1e3 * float(np.mean(step_s)),
        bots_all_players_ms=1e3 * float(np.mean(bot_s)),
        features_per_player_us=1e6 * float(np.mean(feature_s)) / players,
        features_per_player_p95_us=1e6 * float(np.percentile(feature_s, 95)) / players,
        features_vs_game_step=float(np.sum(feature_s) / np.sum(step_s)),
        mean_in_view_food_spore_clone_thorns=[round(float(x), 1) for x in np.mean(in_view, 0)],
    )


def time_env(frames: int, seed: int) -> dict:
    env = GoBiggerEnv(dict(preset=PRESET, custom_cfg={'frame_limit': frames}, opponent='bot', bot_level=3))
    env.seed(seed)
    env.reset()
    rng = np.random.default_rng(seed)
    steps, start = 0, time.perf_counter()
    while not env.step(rng.integers(ACTION_NUM, size=2)).done:
        steps += 1
    elapsed = time.perf_counter() - start
    return dict(steps=steps + 1, env_step_ms=1e3 * elapsed / (steps + 1), env_steps_per_s=(steps + 1) / elapsed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--frames', type=int, default=3600, help='frame_limit of the timed games (3600 = full st_t2p2)')
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args()

    raw = time_raw_game(args.frames, args.seed)
    env = time_env(args.frames, args.seed)
    result = dict(
        preset=PRESET,
        frames=args.frames,
        seed=args.seed,
        raw_game=raw,
        env=env,
        machine=dict(python=platform.python_version(), numpy=np.__version__, cpus=os.cpu_count()),
    )
    print(f"{PRESET}, {raw['steps']} steps, level-3 bots on all players")
    print(f"  game step (2 frames)        {raw['game_step_ms']:7.3f} ms")
    print(f"  bots, all 4 players         {raw['bots_all_players_ms']:7.3f} ms")
    print(f"  features, per player        {raw['features_per_player_us']:7.1f} us "
          f"(p95 {raw['features_per_player_p95_us']:.1f} us)")
    print(f"  features of our 2 players / game step: {raw['features_vs_game_step']:.1%}")
    print(f"  mean in view (food, spore, clone, thorns): {raw['mean_in_view_food_spore_clone_thorns']}")
    print(f"GoBiggerEnv.step (features + bots + game): {env['env_step_ms']:.3f} ms, {env['env_steps_per_s']:.0f}/s")
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'results', 'feature_cost.json')
    write_json(out, result)
    print(f'wrote {out}')


if __name__ == '__main__':
    main()
