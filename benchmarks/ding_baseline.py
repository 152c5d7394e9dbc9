"""DI-engine's stock PPO on our env, on learning.py's final games: `python benchmarks/ding_baseline.py --config
config/ding_mappo_config.py [--seeds N] [--run K] [--env-steps N] [--final-games N] [--tag TAG] [--resume]
[--set KEY=VALUE ...]`.

1. Train runs: the config once per run seed (seed, seed + 1, ...; `--run K` only run K, and `--run K --resume`
   processes of one tag may run side by side) with DI-engine's serial_pipeline_onpolicy
   (ppo_gobigger/pipeline/ding_baseline.py), up to --env-steps (default: the config's max_env_step). Each run's
   experiment folder is benchmarks/runs/<run tag>/ (DI-engine's ckpt/, log/, total_config.py); `--resume` goes on
   from its latest checkpoint there.
2. Final rows: each run's latest checkpoint, greedy, on --final-games games of env seed config seed +
   learning_rows.FINAL_SEED_OFFSET, played by our evaluator: the games of benchmarks/learning.py's final rows (with
   the same evaluator_env_num, 2 in the configs here), so that learning_rows.paired_comparison can pair them game by
   game with our PPO's rows that kept each game's outcome (learning_st_t2p2_scratch_ppo.json predates that: its
   summary compares, not its games).
3. Tables: learning_report's, printed last; `python benchmarks/learning_report.py <json>` prints them again, and
   beside our PPO's file (e.g. benchmarks/results/learning_st_t2p2_scratch_ppo.json) for the comparison.

Writes benchmarks/results/learning_<tag>.json in learning.py's format (runs, each with seed, env_steps, checkpoint
and its final row; the summary over the runs). Run tags are <tag>_s<k> with --seeds > 1; the tag defaults to
<preset>_<config name> (e.g. st_t2p2_ding_mappo).
"""
import argparse
import contextlib
import json
import logging
import os
import platform
import shutil
import signal
import time
from typing import Dict, Iterator

from ppo_gobigger.quiet import passive_openmp_waits, silence_third_party_noise

silence_third_party_noise()  # first: the imports below would print other packages' import-time notices
passive_openmp_waits()  # before torch is imported: see quiet.py

import torch

import learning
import learning_report as report
import learning_rows as rows
import learning_runs as runs
from ppo_gobigger.config import ConfigError, load_config_file
from ppo_gobigger.pipeline.ding_baseline import (apply_stock_overrides, is_stock, play_stock, stock_configs,
                                                 train_stock)


@contextlib.contextmanager
def working_directory(path: str) -> Iterator[None]:
    """DI-engine writes its experiment folder ('./<exp_name>') in the working directory: run it in ``path``."""
    os.makedirs(path, exist_ok=True)
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def algorithm(cfg: Dict) -> str:
    """What a stock config trains, in words."""
    model = 'MAVAC' if cfg['policy'].get('multi_agent') else 'VAC shared by the players'
    return f"DI-engine ppo (multi_agent={bool(cfg['policy'].get('multi_agent'))}, {model})"


def train_run(main_config: Dict, create_config: Dict, run_tag: str, seed: int, env_steps: int, resume: bool) -> Dict:
    """Train (``resume``: go on from its latest checkpoint) run ``run_tag`` in RUNS/<run tag>; returns its entry."""
    exp_dir = os.path.join(runs.RUNS, run_tag)
    if not resume:
        shutil.rmtree(exp_dir, ignore_errors=True)  # a fresh run (else DI-engine renames the old folder aside)
    logging.info(f'run {run_tag} (seed {seed}): ' + ('resuming' if resume else 'a new run') + f' in {exp_dir}')
    start = time.time()
    with working_directory(runs.RUNS):
        checkpoint = train_stock(dict(main_config, exp_name=run_tag), create_config, seed=seed,
                                 max_env_step=env_steps, resume=resume)
    payload = torch.load(os.path.join(runs.RUNS, checkpoint), map_location='cpu', weights_only=False)
    return dict(seed=seed, env_steps=env_steps, checkpoint=os.path.relpath(os.path.join(runs.RUNS, checkpoint),
                                                                           runs.HERE),
                trained_env_steps=int(payload['last_step']), train_iter=int(payload['last_iter']),
                session_wall_time_s=time.time() - start)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--config', required=True,
                        help="a config of DI-engine's stock PPO, e.g. config/ding_mappo_config.py")
    parser.add_argument('--set', action='append', default=[], metavar='KEY=VALUE', help='override a config key')
    parser.add_argument('--env-steps', type=int, default=None,
                        help="training env steps per run (default: the config's max_env_step)")
    parser.add_argument('--final-games', type=int, default=100, help='games of each final row')
    parser.add_argument('--seeds', type=int, default=1, help='runs, with run seeds seed, seed + 1, ...')
    parser.add_argument('--run', type=int, default=None, metavar='K',
                        help='train and play only run K of the --seeds runs (0-based; run seed seed + K)')
    parser.add_argument('--resume', action='store_true',
                        help='go on with the unfinished runs and rows of this tag (runs from benchmarks/runs/)')
    parser.add_argument('--tag', default=None, help='results name (default: <preset>_<config name>)')
    args = parser.parse_args()
    if args.seeds < 1:
        parser.error(f'--seeds must be >= 1, got {args.seeds}')
    if args.run is not None and not 0 <= args.run < args.seeds:
        parser.error(f'--run must be one of the --seeds runs, 0 to {args.seeds - 1}; got {args.run}')
    if args.final_games < 1:
        parser.error(f'--final-games must be >= 1, got {args.final_games}')
    if args.env_steps is not None and args.env_steps < 1:
        parser.error(f'--env-steps must be >= 1, got {args.env_steps}')
    try:
        main_config, args.create_config = load_config_file(args.config)
        if not is_stock(args.create_config):
            parser.error(f"{args.config} is not a config of DI-engine's stock PPO (create_config policy type "
                         f"'ppo'); measure our PPO with benchmarks/learning.py")
        args.main_config = apply_stock_overrides(main_config, args.set)
        args.cfg, _ = stock_configs(args.main_config, args.create_config)
    except ConfigError as e:
        parser.error(str(e))
    args.env_steps = args.env_steps or args.cfg.get('max_env_step')
    if not args.env_steps:
        parser.error(f'{args.config} sets no max_env_step: give --env-steps')
    return args


def main() -> None:
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format='%(asctime)s %(levelname)s %(message)s', datefmt='%H:%M:%S',
                        force=True)  # DI-engine set up the root logger at import
    cfg = args.cfg
    final_seed = cfg.seed + rows.FINAL_SEED_OFFSET
    name = os.path.splitext(os.path.basename(args.config))[0].removesuffix('_config')
    tag = args.tag or f'{cfg.env.preset}_{name}'
    json_path = runs.results_path(tag)
    settings = dict(tag=tag, config=os.path.relpath(args.config), overrides=args.set, preset=cfg.env.preset,
                    algorithm=algorithm(cfg), training_opponents=cfg.env.opponent, opponents=rows.opponents_of(cfg),
                    env_steps=args.env_steps, final_games=args.final_games, final_seed=final_seed, greedy=True,
                    seed=cfg.seed, seeds=args.seeds)
    result = dict(date=learning.now(), settings=settings, runs={}, checkpoints={}, references={},
                  machine=dict(python=platform.python_version(), torch=torch.__version__, cpus=os.cpu_count()))
    if args.resume and os.path.isfile(json_path):  # finished runs and rows stay as they were
        with open(json_path) as f:
            previous = json.load(f)
        result['runs'] = previous.get('runs', {})
        played_on = (previous['settings']['final_seed'], previous['settings']['final_games'])
        if played_on != (final_seed, args.final_games):
            raise SystemExit(f'--resume {tag}: its rows were played on {played_on[1]} games of env seed '
                             f'{played_on[0]}, this command plays {args.final_games} of env seed {final_seed}: give '
                             f'the same seed and --final-games')
    ks = range(args.seeds) if args.run is None else [args.run]
    own_runs = [runs.run_name(tag, k, args.seeds > 1) for k in ks]

    save = learning.ResultsFile(json_path, own_runs if args.resume else None, result).save

    for k, run_tag in zip(ks, own_runs):
        run = result['runs'].get(run_tag, {})
        if run.get('env_steps') != args.env_steps or 'checkpoint' not in run:  # not yet trained this far
            run = result['runs'][run_tag] = train_run(args.main_config, args.create_config, run_tag, cfg.seed + k,
                                                      args.env_steps, args.resume)
            save()
        if 'final' not in run:
            played = play_stock(os.path.join(runs.HERE, run['checkpoint']), args.main_config, args.create_config,
                                args.final_games, final_seed)
            run['final'] = rows.final_row(played)
            rows.log_row(f'run {run_tag}', run['final'])
            save()
    save()  # with the runs that processes side by side finished meanwhile, for the summary
    learning.summarise(result)
    result['date'] = learning.now()
    save()
    logging.info(f'wrote {json_path}')
    report.print_tables(result)


if __name__ == '__main__':
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        main()
    except KeyboardInterrupt:
        logging.info('SIGINT: stopped; the same command with --resume goes on from the latest checkpoint of each '
                     'unfinished run (benchmarks/runs/<run tag>/ckpt) and plays the rows not yet played')
        raise SystemExit(130)
