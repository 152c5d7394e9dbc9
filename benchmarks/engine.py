"""The fast engine against stock GoBigger, side by side in one run: `python benchmarks/engine.py [options]`.

    raw         whole games of each --presets with level-3 bots on every side, the engines alternating game by
                game: env steps per CPU second (this process's time.process_time) and per wall second
    training    (unless --no-train) --rounds times per engine in ABBA order: `gobigger-train --config CONFIG`'s own
                run (the default config, league and all, from scratch) for --iterations PPO iterations, its env
                steps/s over collection plus learning; and `gobigger-eval --ckpt EVAL_CKPT` over --eval-episodes
                games (a trained team: the zoo's agent of the default config), the evaluator's env steps/s
    fidelity    with --fidelity N: N whole games (presets and controllers in turn, bots 1-3 and random) played by
                both engines in lockstep, every step's observation compared exactly (envs/engine/fidelity.py)

Writes benchmarks/results/engine.json (ratios fast / stock first: the machine is shared, absolute rates drift).
"""
import argparse
import copy
import datetime
import os
import platform
import random
import tempfile
import time
from typing import Dict, List

from ppo_gobigger.quiet import passive_openmp_waits, silence_third_party_noise

silence_third_party_noise()  # first: the imports below would print other packages' import-time notices
passive_openmp_waits()  # before torch is imported: see quiet.py

from ppo_gobigger.cli import DEFAULT_CONFIG  # noqa: E402
from ppo_gobigger.config import apply_overrides, compile_config, load_config_file  # noqa: E402
from ppo_gobigger.envs.engine import ENGINES, create_bot, create_game, gobigger_version  # noqa: E402
from ppo_gobigger.envs.engine.fidelity import compare_games  # noqa: E402
from ppo_gobigger.files import write_json  # noqa: E402
from ppo_gobigger.pipeline.distributed.torchrun import Rank  # noqa: E402
from ppo_gobigger.pipeline.evaluate import evaluate  # noqa: E402
from ppo_gobigger.pipeline.serial import TrainingRun  # noqa: E402
from ppo_gobigger.pipeline.threads import torch_threads  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, 'results', 'engine.json')
ZOO_AGENT = os.path.join(HERE, '..', 'zoo', 'st_t2p2_league_s0.pth.tar')  # the default config's published agent
FIDELITY_CASES = (('st_t2p2', 3), ('st_t2p2', 'random'), ('st_t3p2', 2), ('st_t2p2', 1), ('st_t4p3', 3))


def play_whole_game(preset: str, engine: str, seed: int, level: int = 3) -> Dict:
    """One whole game, bots of ``level`` on every side: {steps, cpu_s, wall_s, leaderboard}."""
    random.seed(seed)  # the bots (and CloneBall) draw from the global `random`
    game = create_game(preset, {}, 2, engine)
    game.server._random.seed(seed)
    obs = game.reset()
    bots = {pid: create_bot(pid, level, engine) for _, ids in game.get_team_infos() for pid in ids}
    steps, done = 0, False
    cpu, wall = time.process_time(), time.perf_counter()
    while not done:
        obs, _, done, _ = game.step({pid: bot.step(obs[1][pid]) for pid, bot in bots.items()})
        steps += 1
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    game.close()
    return dict(steps=steps, cpu_s=cpu, wall_s=wall, leaderboard=obs[0]['leaderboard'])


def measure_raw(presets: List[str], games: int, seed: int) -> Dict:
    """Per preset: each engine's env steps per CPU s and per wall s over ``games`` whole games, and fast / stock."""
    out = {}
    for preset in presets:
        runs = {engine: [] for engine in ENGINES}
        for g in range(games):
            for engine in (('stock', 'fast') if g % 2 == 0 else ('fast', 'stock')):
                runs[engine].append(play_whole_game(preset, engine, seed + g))
                r = runs[engine][-1]
                print(f'  raw {preset} game {g} {engine:5s}: {r["steps"]} steps, {r["steps"] / r["cpu_s"]:7.1f} '
                      f'steps/cpu-s, {r["steps"] / r["wall_s"]:7.1f} steps/s', flush=True)
        rates = {}
        for engine, rs in runs.items():
            steps = sum(r['steps'] for r in rs)
            rates[engine] = dict(games=len(rs), env_steps=steps, steps_per_cpu_s=steps / sum(r['cpu_s'] for r in rs),
                                 steps_per_wall_s=steps / sum(r['wall_s'] for r in rs))
        same = all(a['leaderboard'] == b['leaderboard'] for a, b in zip(runs['stock'], runs['fast']))
        out[preset] = dict(rates, ratio_cpu=rates['fast']['steps_per_cpu_s'] / rates['stock']['steps_per_cpu_s'],
                           ratio_wall=rates['fast']['steps_per_wall_s'] / rates['stock']['steps_per_wall_s'],
                           same_final_leaderboards=same)
    return out


def measure_training_run(main_config: Dict, create_config: Dict, iterations: int) -> Dict:
    """``iterations`` PPO iterations of `gobigger-train`'s own run (serial.TrainingRun: its collector, league and
    learner, from scratch) without its evaluations: {env_steps_per_s (collection + learning), collect_s, learn_s}."""
    with tempfile.TemporaryDirectory() as tmp:
        main_config = copy.deepcopy(main_config)
        main_config['exp_name'] = os.path.join(tmp, 'exp')
        cfg, create_cfg = compile_config(main_config, create_config)
        collect_s, learn_s = [], []
        with torch_threads(cfg.policy.torch_threads):  # as train() holds it
            run = TrainingRun(cfg, cfg, create_cfg, Rank(), None, progress=False)
            try:
                run.start()
                for _ in range(iterations):
                    rollout = run.collect()
                    start = time.perf_counter()
                    run.learn(rollout)
                    learn_s.append(time.perf_counter() - start)
                    collect_s.append(run.collector.last_collect_time)
                env_steps = run.collector.envstep
            finally:
                run.close()
    return dict(env_steps=env_steps, env_steps_per_s=env_steps / (sum(collect_s) + sum(learn_s)),
                collect_s=collect_s, learn_s=learn_s)


def measure_pipeline(config: str, overrides: List[str], iterations: int, eval_ckpt: str, eval_episodes: int,
                     rounds: int) -> Dict:
    """Per engine, ``rounds`` times in ABBA order (stock, fast, fast, stock, ...: a steady drift of the machine's
    load cancels out): the training rate of `gobigger-train --config config` (measure_training_run) and the
    evaluation rate of `gobigger-eval --ckpt eval_ckpt --episodes eval_episodes` (pipeline/evaluate.py, the
    evaluator's own env steps per second), each with env.engine set. Rates: per-run means."""
    main_config, create_config = load_config_file(config)
    order = [('stock', 'fast'), ('fast', 'stock')]
    runs = {'stock': [], 'fast': []}
    for r in range(rounds):
        for engine in order[r % 2]:
            engine_set = [f'env.engine={engine}']
            train = measure_training_run(apply_overrides(main_config, overrides + engine_set), create_config,
                                         iterations)
            row = dict(training_env_steps_per_s=train['env_steps_per_s'], collect_s=train['collect_s'],
                       learn_s=train['learn_s'])
            if eval_episodes:
                report = evaluate(eval_ckpt, episodes=eval_episodes, overrides=engine_set, progress=False)
                row['evaluation'] = dict(env_steps=report['envstep_count'], seconds=report['evaluate_time'],
                                         env_steps_per_s=report['avg_envstep_per_sec'])
            runs[engine].append(row)
            print(f'  pipeline round {r} {engine:5s}: training {row["training_env_steps_per_s"]:.1f} env steps/s'
                  + (f', evaluation {row["evaluation"]["env_steps_per_s"]:.1f} env steps/s' if eval_episodes else ''),
                  flush=True)
    out = dict(runs=runs)
    for engine, rs in runs.items():
        out[engine] = dict(training_env_steps_per_s=sum(r['training_env_steps_per_s'] for r in rs) / len(rs))
        if eval_episodes:
            out[engine]['evaluation_env_steps_per_s'] = sum(r['evaluation']['env_steps_per_s'] for r in rs) / len(rs)
    out['training_ratio'] = out['fast']['training_env_steps_per_s'] / out['stock']['training_env_steps_per_s']
    if eval_episodes:
        out['evaluation_ratio'] = out['fast']['evaluation_env_steps_per_s'] / out['stock']['evaluation_env_steps_per_s']
    return out


def measure_fidelity(games: int, seed: int) -> Dict:
    """``games`` whole games, both engines in lockstep; every step compared exactly."""
    rows = []
    for g in range(games):
        preset, controller = FIDELITY_CASES[g % len(FIDELITY_CASES)]
        result = compare_games(preset, seed + g, controller)
        rows.append(dict(preset=preset, controller=controller, seed=seed + g, steps=result['steps'],
                         difference=None if result['difference'] is None else repr(result['difference']),
                         same_leaderboard=result['leaderboard'][0] == result['leaderboard'][1]))
        print(f'  fidelity {preset} {controller} seed {seed + g}: {result["steps"]} steps, '
              f'{"identical" if result["difference"] is None else result["difference"]}', flush=True)
    return dict(games=games, identical_games=sum(r['difference'] is None for r in rows), games_detail=rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--presets', nargs='+', default=['st_t2p2', 'st_t4p3'], help='presets of the raw rate')
    parser.add_argument('--games', type=int, default=2, help='whole games per engine and preset (raw rate)')
    parser.add_argument('--no-train', action='store_true', help='skip the training and evaluation rates')
    parser.add_argument('--config', default=DEFAULT_CONFIG, help='config file of the training rate (default: the '
                        'default config)')
    parser.add_argument('--set', action='append', default=[], metavar='KEY=VALUE',
                        help='override a key of the training run\'s config (the evaluation plays --eval-ckpt\'s own)')
    parser.add_argument('--iterations', type=int, default=2, help='PPO iterations of each training run')
    parser.add_argument('--eval-ckpt', default=ZOO_AGENT, help='checkpoint of the evaluation rate (default: '
                        'zoo/st_t2p2_league_s0.pth.tar)')
    parser.add_argument('--eval-episodes', type=int, default=8, help='games of each timed evaluation (0: none)')
    parser.add_argument('--rounds', type=int, default=2, help='training runs per engine, in ABBA order')
    parser.add_argument('--fidelity', type=int, default=0, metavar='N', help='also compare N whole games')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--output', default=RESULTS, help='where the JSON goes')
    args = parser.parse_args()
    result = dict(date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
                  gobigger=gobigger_version(), settings=vars(args))
    result['raw'] = measure_raw(args.presets, args.games, args.seed)
    if not args.no_train:
        result['pipeline'] = measure_pipeline(args.config, list(args.set), args.iterations, args.eval_ckpt,
                                              args.eval_episodes, args.rounds)
    if args.fidelity:
        result['fidelity'] = measure_fidelity(args.fidelity, 1000 + args.seed)
    result['ratios'] = {f'raw_{p}_cpu': r['ratio_cpu'] for p, r in result['raw'].items()}
    result['ratios'].update({f'raw_{p}_wall': r['ratio_wall'] for p, r in result['raw'].items()})
    if 'pipeline' in result:
        result['ratios'].update({k: v for k, v in result['pipeline'].items() if k.endswith('_ratio')})
    result['machine'] = dict(python=platform.python_version(), cpus=os.cpu_count(), loadavg_at_end=os.getloadavg())
    write_json(args.output, result)
    print(f'wrote {args.output}')
    for key, value in result['ratios'].items():
        print(f'  fast / stock {key}: {value:.2f}')


if __name__ == '__main__':
    main()
