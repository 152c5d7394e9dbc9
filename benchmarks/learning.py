"""What training produces, measured: `python benchmarks/learning.py [--config PATH] [--set KEY=VALUE ...] --seeds N
--env-steps N --eval-every N`, or existing agents alone: `--checkpoint NAME=PATH ...` (e.g. zoo/*.pth.tar).

1. Train runs (learning_runs.py): the config once per run seed (seed, seed + 1, ...; `--run K` only run K, and
   `--run K --resume` processes of one tag may run side by side) for --env-steps env steps, evaluating (greedy,
   held-out games) every --eval-every steps. Each run's experiment folder is benchmarks/runs/<run tag>/; its latest
   checkpoint and logs are copied every minute to benchmarks/results/runs/<run tag>/, from where `--resume` goes on
   (a finished run resumed with a larger --env-steps trains on and plays its final rows again; one stopped in its
   final games plays the rest, on another clone from its run state).
2. Final rows (learning_rows.py): each run's last checkpoint, each --checkpoint agent and the reference rows (random
   team, level-1/2/3 bots on our side) on --final-games games of a seed block no run saw; --vs-level N plays the
   agents against level-N bots on them too. Each row keeps every game's outcome and the median score ratio.
3. Tables and curves (learning_report.py): printed last; `python benchmarks/learning_report.py <json> [--plot]`
   prints them again from the results file.

Writes benchmarks/results/learning_<tag>.json, learning_<tag>.png (the curves of the trained runs) and each run's
final weights and config as benchmarks/results/checkpoints/<run tag>.pth.tar (replay it: `gobigger-eval --ckpt
PATH`). Run tags are <tag>_s<k> with --seeds > 1.
"""
import argparse
import datetime
import fcntl
import json
import logging
import os
import platform
import signal
from typing import Dict, List, Optional

from ppo_gobigger.quiet import passive_openmp_waits, silence_third_party_noise

silence_third_party_noise()  # first: the imports below would print other packages' import-time notices
passive_openmp_waits()  # before torch is imported: see quiet.py

import torch

import learning_report as report
import learning_rows as rows
import learning_runs as runs
from ppo_gobigger.cli import DEFAULT_CONFIG
from ppo_gobigger.config import apply_overrides, compile_config, load_config_file
from ppo_gobigger.envs.opponents import BOT_LEVELS
from ppo_gobigger.files import write_json
from ppo_gobigger.pipeline.interrupt import TrainingInterrupted


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')


ROW_KEYS = ('references', 'checkpoints')  # the results file's rows besides the runs'


def as_json(data: Dict) -> Dict:
    """``data`` as the results file holds it (tuples as lists): a deep copy to compare rows with."""
    return json.loads(json.dumps(data))


class ResultsFile:
    """benchmarks/results/learning_<tag>.json holding ``result``: written by this process alone (``own_runs`` None:
    each save replaces it) or shared with other processes of the tag (`--run K`, `--resume`; a lock under RUNS keeps
    each read and write together). A shared save keeps what the others wrote: the runs not in ``own_runs``, and each
    reference or checkpoint row this process has not changed since it started or last saved (its copy may be stale:
    another process may have added to the row meanwhile), which ``result`` then takes over."""

    def __init__(self, path: str, own_runs: Optional[List[str]], result: Dict) -> None:
        self.path, self.own_runs, self.result = path, own_runs, result
        self.seen = as_json({key: result[key] for key in ROW_KEYS})  # the rows as at the start or the last save

    def save(self) -> None:
        result = self.result
        os.makedirs(runs.RUNS, exist_ok=True)
        with open(os.path.join(runs.RUNS, f'{os.path.basename(self.path)}.lock'), 'w') as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if self.own_runs is not None and os.path.isfile(self.path):
                with open(self.path) as f:
                    on_disk = json.load(f)
                merged = {t: result['runs'][t] if t in self.own_runs and t in result['runs'] else r
                          for t, r in on_disk.get('runs', {}).items()}  # the file's order, ours for our runs
                result['runs'] = {**merged, **{t: r for t, r in result['runs'].items() if t not in merged}}
                for key in ROW_KEYS:  # in place: the rows still being played add to these dicts
                    played = {name: row for name, row in result[key].items()
                              if as_json(row) != self.seen[key].get(name)}
                    result[key].update(on_disk.get(key, {}))
                    result[key].update(played)
            write_json(self.path, result)
            self.seen = as_json({key: result[key] for key in ROW_KEYS})


def summarise(result: Dict) -> None:
    """Add to ``result`` the summary over its runs of each kind of final row (rows.run_rows' summary keys)."""
    by_kind: Dict[str, List[Dict]] = {}  # summary key -> the runs' rows of that kind
    for run_tag, run in result['runs'].items():
        for _, key, row in (rows.run_rows(run_tag, run) if 'final' in run else []):
            by_kind.setdefault(key, []).append(row)
    result.update({key: rows.summary(kind) for key, kind in by_kind.items()})


def named_paths(items: List[str], flag: str, parser: argparse.ArgumentParser) -> Dict[str, str]:
    """{NAME: PATH} of the NAME=PATH items of ``flag``; a parser error for a malformed item, a missing file or a
    name given twice."""
    named: Dict[str, str] = {}
    for item in items:
        name, sep, path = item.partition('=')
        if not sep or not name or not path:
            parser.error(f'{flag} takes NAME=PATH, got {item!r}')
        if not os.path.isfile(path):
            parser.error(f'{flag} {name}: no file {path}')
        if name in named:
            parser.error(f'{flag}: the name {name!r} is given twice')
        named[name] = path
    return named


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--config', default=DEFAULT_CONFIG, help='Python file defining main_config')
    parser.add_argument('--set', action='append', default=[], metavar='KEY=VALUE',
                        help='override a config key (of the runs, and of each --checkpoint agent\'s games)')
    parser.add_argument('--env-steps', type=int, help='training env steps per run (none: no training)')
    parser.add_argument('--eval-every', type=int, help='env steps between evaluations (required to train)')
    parser.add_argument('--eval-games', type=int, default=8, help='games per evaluation during training')
    parser.add_argument('--final-games', type=int, default=100, help='games of each final row')
    parser.add_argument('--seeds', type=int, default=1, help='runs, with run seeds seed, seed + 1, ...')
    parser.add_argument('--run', type=int, default=None, metavar='K',
                        help='train and play only run K of the --seeds runs (0-based; run seed seed + K)')
    parser.add_argument('--resume', action='store_true',
                        help='go on with the unfinished runs and rows of this tag (runs from benchmarks/results/runs/)')
    parser.add_argument('--no-references', action='store_true', help='skip the reference rows')
    parser.add_argument('--vs-level', type=int, action='append', default=[], metavar='N',
                        help='also play each agent on the final games against level-N bots')
    parser.add_argument('--checkpoint', action='append', default=[], metavar='NAME=PATH',
                        help='an existing agent (its weights and config) on the final games beside the reference '
                             'rows; each one after the first is compared with the first game by game')
    parser.add_argument('--tag', default=None, help='results name (default: the preset)')
    args = parser.parse_args()
    for level in args.vs_level:
        if level not in BOT_LEVELS:
            parser.error(f'--vs-level must be one of {list(BOT_LEVELS)}, got {level}')
    if args.seeds < 1:
        parser.error(f'--seeds must be >= 1, got {args.seeds}')
    if args.run is not None and not 0 <= args.run < args.seeds:
        parser.error(f'--run must be one of the --seeds runs, 0 to {args.seeds - 1}; got {args.run}')
    if args.final_games < 1:
        parser.error(f'--final-games must be >= 1, got {args.final_games}')
    if args.env_steps is None and not args.checkpoint:
        parser.error('nothing to measure: give --env-steps and --eval-every to train, or --checkpoint NAME=PATH')
    if args.env_steps is not None and args.eval_every is None:
        parser.error('--env-steps trains: give --eval-every too')
    args.agents = named_paths(args.checkpoint, '--checkpoint', parser)
    return args


def main() -> None:
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format='%(asctime)s %(levelname)s %(message)s', datefmt='%H:%M:%S',
                        force=True)  # DI-engine set up the root logger at import
    main_config, create_config = load_config_file(args.config)
    main_config = apply_overrides(main_config, args.set)
    cfg, _ = compile_config(main_config, create_config)
    final_seed = cfg.seed + rows.FINAL_SEED_OFFSET
    # the games every row plays: the config's, or without training the first agent's (with --set)
    games_of = cfg if args.env_steps is not None else \
        rows.checkpoint_config(next(iter(args.agents.values())), args.set)
    for name, path in args.agents.items():  # every row on the same games: one preset
        preset = rows.checkpoint_config(path, args.set)['env']['preset']
        if preset != games_of['env']['preset']:
            raise SystemExit(f'--checkpoint {name}: {path} plays {preset}, the other rows {games_of["env"]["preset"]}; '
                             f'measure agents of another preset in a command of their own')
    tag = args.tag or games_of['env']['preset']
    json_path = runs.results_path(tag)
    settings = dict(tag=tag, config=os.path.relpath(args.config), overrides=args.set, preset=games_of['env']['preset'],
                    training_opponents=cfg.env.opponent, opponents=rows.opponents_of(games_of),
                    env_steps=args.env_steps, eval_every=args.eval_every, eval_games=args.eval_games,
                    final_games=args.final_games, final_seed=final_seed, greedy=not cfg.policy.eval.sample,
                    seed=cfg.seed, seeds=args.seeds)
    result = dict(date=now(), settings=settings, runs={}, checkpoints={}, references={},
                  machine=dict(python=platform.python_version(), torch=torch.__version__, cpus=os.cpu_count()))
    shared = args.resume or args.run is not None  # the file keeps the rows of this tag's other runs and processes
    if shared and os.path.isfile(json_path):
        with open(json_path) as f:
            previous = json.load(f)
        if previous['settings']['final_seed'] != final_seed or previous['settings']['final_games'] != \
                args.final_games:
            raise SystemExit(f'{tag}: its rows were played on {previous["settings"]["final_games"]} games of env seed '
                             f'{previous["settings"]["final_seed"]}, this command plays {args.final_games} of env '
                             f'seed {final_seed}: give the same seed and --final-games, or another --tag')
        if args.resume:  # finished runs and rows stay as they were
            for key in ('runs', 'checkpoints', 'references'):
                result[key] = previous.get(key, {})
    ks = range(args.seeds) if args.run is None else [args.run]
    own_runs = [runs.run_name(tag, k, args.seeds > 1) for k in ks] if args.env_steps is not None else []

    save = ResultsFile(json_path, own_runs if shared else None, result).save

    for k, run_tag in zip(ks, own_runs):  # 1. train runs, each with its final rows
        seed = cfg.seed + k
        run = result['runs'].get(run_tag, {})
        if run.get('env_steps') != args.env_steps or 'published' not in run:  # not yet trained this far
            trained, _ = runs.train_run(main_config, create_config, run_tag, seed, args.env_steps,
                                              args.eval_every, args.eval_games, args.resume)
            run = result['runs'][run_tag] = dict(seed=seed, env_steps=args.env_steps, **trained)
        rows.publish(run_tag, run)
        save()
        rows.play_final_games(run_tag, run, args.final_games, final_seed, args.vs_level, save)
    if args.agents:  # 2. existing agents
        rows.play_checkpoints(result['checkpoints'], args.agents, args.set, args.final_games, final_seed,
                              args.vs_level, save)
    published = [path for path in (os.path.join(runs.HERE, r['published']) for r in result['runs'].values()
                                   if 'published' in r) if os.path.isfile(path)]  # not another clone's runs
    if not args.no_references and (published or args.agents):  # 3. reference rows, on the same games
        agent = published[0] if published else next(iter(args.agents.values()))
        config = None if published else rows.checkpoint_config(agent, args.set)
        rows.play_references(result['references'], agent, config, args.final_games, final_seed, save)
    save()  # with the runs that processes side by side finished meanwhile, for the summary
    summarise(result)
    result['date'] = now()
    save()
    logging.info(f'wrote {json_path}')
    if any(run.get('curve') for run in result['runs'].values()):
        report.plot(result, os.path.splitext(json_path)[0] + '.png')
    report.print_tables(result)


if __name__ == '__main__':
    # Ctrl-C, or kill -INT of a run started in the background (where the shell had set SIGINT to be ignored), stops
    # the final games too, not only the training (which has its own handler)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        main()
    except TrainingInterrupted as e:  # the run's state is in RUN_STATE (synced on the way out): say how to go on
        logging.info(f'{e.signal_name}: stopped; the run state is in {os.path.relpath(runs.RUN_STATE)}/: the same '
                     'command with --resume goes on from it')
        raise SystemExit(e.exit_code)
    except KeyboardInterrupt:  # Ctrl-C in the final games: every row finished is in the results file already
        logging.info(f'SIGINT: stopped; the final rows played so far are in {os.path.relpath(runs.RESULTS)}/: the '
                     f'same command with --resume plays the rest')
        raise SystemExit(130)
