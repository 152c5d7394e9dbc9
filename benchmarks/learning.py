"""What training produces, measured: `python benchmarks/learning.py [--config PATH] [--set KEY=VALUE ...] --seeds N`.

1. Trains the config once per run seed (seed, seed + 1, ..., one run after another; `--run K` only run K, e.g. a
   lever piloted on one seed, and `--run K --resume` processes of one tag may run side by side: each writes only its
   own runs to the results file) for --env-steps env steps, evaluating (greedy, held-out games) every --eval-every
   steps.
2. Evaluates each run's last checkpoint over --final-games games on a seed block that no run used: training games
   have even game seeds, evaluation games odd ones, and the final games take env seed ``seed + FINAL_SEED_OFFSET``
   (the config's seed, the same block for every run), which the in-training evaluations never saw.
3. Reference rows on the same final games: our team's side played by a uniformly random team and by GoBigger's
   level-1, level-2 and level-3 bots (env.stand_in, at the opponents' decision rate), against the same opponents.
   A kickstarted run (pretrain.env_steps > 0) also plays its kickstart alone (the weights before any PPO update) on
   the same games, and `--vs-level N` plays each run's last checkpoint on them against level-N bots as well.

Long runs: each run's experiment folder is benchmarks/runs/<run tag>/ (not committed). While it trains, its latest
checkpoint and logs are copied every minute to benchmarks/results/runs/<run tag>/ (latest.pth.tar, learner.jsonl,
evaluator.jsonl, a kickstarted run's kickstart.pth.tar and a league run's league/ snapshots and pool: commit them),
and `--resume` continues every unfinished run from there, on any machine. A finished run resumed with a larger
--env-steps trains on and plays its final rows again, all but its kickstart's (the same weights, the same games).

Writes benchmarks/results/learning_<tag>.json (per run: the curve, the final rows with each game's outcome by game
seed, a kickstarted run's last checkpoint against its kickstart game by game on the same games, the wall time; the
references; the mean and min over the runs), learning_<tag>.png (win rate and score ratio against env steps and
against training wall time) and each run's final weights and config as
benchmarks/results/checkpoints/<run tag>.pth.tar (replay it: `gobigger-eval --ckpt PATH --seed N`; its kickstart as
<run tag>_kickstart.pth.tar), and prints the final figures last. Run tags are <tag>_s<k> with --seeds > 1. Training
wall time is collection + learning, summed from learner.jsonl (evaluations excluded).

`--from-runs TAG` trains a second phase: each run starts from the published weights of the run of learning_TAG.json
with the same run seed (policy.load_path; a run is published when it is trained, so an --only-train phase can be
gone on from before its final games are played) and keeps that run's kickstart, so that its final games are
compared game by game with the kickstart that the whole lineage began from (that run's kickstart row is reused when
it kept each game's outcome). With `--distil-kickstart` (and policy.learn.kickstart_kl > 0) each run distils that
kickstart (policy.learn.kickstart_teacher), not the weights it starts from.

`--average-runs TAG_A TAG_B ...` trains nothing: each run is the weight average (ppo_gobigger/pipeline/learn/
averaging.py; equal weights, or `--average-weights`) of the published weights of the runs of learning_TAG_*.json with
its run seed, which must have gone on from the same run (--from-runs). It has the first source's config (its final
games are that source's, give that source's --config), keeps the lineage's kickstart, and plays its final rows as a
trained run does. `--average-select W ...` (two TAGs) chooses each run's weight of TAG_A among the candidates W on
--validation-games games of another held-out block (env seed ``seed + VALIDATION_SEED_OFFSET``, which neither the
runs nor the final games use): each candidate average plays them against the config's opponents and each --vs-level,
the lineage's kickstart against the config's opponents, and the run keeps the candidate whose worst margin to the
bars is largest (selection_margin); the final games play only the one kept.

`--select-checkpoint` is early stopping on those validation games for a trained run: while it trains, its run state
keeps the weights of each checkpoint written at an evaluation after its first PPO update (RUN_STATE/<run tag>/
candidates/iteration_N.pth.tar, committed with it); once trained, each plays the validation games as an
--average-select candidate does, and the one with the largest selection_margin is the run's published weights, the
ones its final games and a next phase (--from-runs) play (with policy.load_learn_state, which goes on from the last
iteration's full state, only where the last one was kept).
"""
import argparse
import datetime
import fcntl
import glob
import json
import logging
import os
import platform
import re
import shutil
import signal
import threading
import time
from typing import Callable, Dict, List, Optional, Tuple

from ppo_gobigger.quiet import silence_third_party_noise

silence_third_party_noise()  # first: the imports below would print other packages' import-time notices

import numpy as np
import torch
from matplotlib.figure import Figure
from tabulate import tabulate

from ppo_gobigger.cli import DEFAULT_CONFIG
from ppo_gobigger.config import apply_overrides, compile_config, load_config_file
from ppo_gobigger.pipeline.learn.averaging import average_checkpoints, mixing_weights
from ppo_gobigger.pipeline.learn.checkpoint import export_weights, load_checkpoint
from ppo_gobigger.pipeline.evaluate import evaluate
from ppo_gobigger.pipeline.interrupt import TrainingInterrupted
from ppo_gobigger.pipeline.monitor.learning_curve import (GRID_COLOURS, GRID_COLUMNS, GRID_ROWS, curve_grid,
                                                          finish_curve_grid, save_figure_atomically)
from ppo_gobigger.envs.teams import EAT_COUNTS
from ppo_gobigger.envs.opponents import BOT_LEVELS
from ppo_gobigger.files import replaced_atomically, write_json
from ppo_gobigger.pipeline.serial import KICKSTART_CHECKPOINT, train

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, 'results')
RUN_STATE = os.path.join(RESULTS, 'runs')  # committed: each run's latest checkpoint and logs, for --resume
PUBLISHED = os.path.join(RESULTS, 'checkpoints')  # committed: each run's final weights and config
RUNS = os.path.join(HERE, 'runs')  # experiment folders (every checkpoint, TensorBoard); not committed
FINAL_SEED_OFFSET = 1000  # final games: env seed = the config's seed + this, see the module docstring
VALIDATION_SEED_OFFSET = 2000  # --average-select's and --select-checkpoint's games: env seed = the config's seed + this
CANDIDATES = 'candidates'  # a --select-checkpoint run's folder in RUN_STATE/<run tag>/: each evaluation's weights
SYNC_EVERY_S = 60.0  # how often a training run's latest checkpoint and logs are copied to RUN_STATE
LOGS = ('learner.jsonl', 'evaluator.jsonl')
LEAGUE = 'league'  # a league run's pool folder (snapshots and pool.json): resuming needs its snapshots
CURVE_FIELDS = ('win_rate', 'score_ratio_mean', 'rank_mean', 'reward_mean', 'reward_std', 'final_score_mean',
                'opponent_score_mean')
SUMMARY_FIELDS = ('win_rate', 'score_ratio_mean', 'rank_mean')
BOOTSTRAP_SAMPLES = 10_000  # resamples of the paired final games behind paired_comparison's interval
REFERENCES = {  # name -> env overrides: who plays our team's side instead of the policy
    'random team': ['env.stand_in=random'],
    'level-1 bots': ['env.stand_in=bot', 'env.stand_in_bot_level=1'],
    'level-2 bots': ['env.stand_in=bot', 'env.stand_in_bot_level=2'],
    'level-3 bots': ['env.stand_in=bot', 'env.stand_in_bot_level=3'],
}


def read_jsonl(path: str) -> List[Dict]:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def learning_curve(exp_dir: str) -> List[Dict]:
    """One point per evaluation: env steps, training wall time up to it, and the report's figures. A run resumed
    from a checkpoint without the env step of its last evaluation (written before commit ab270a4) evaluates again
    where it resumed: only the first report at each env step counts."""
    iterations = read_jsonl(os.path.join(exp_dir, 'learner.jsonl'))
    points, seen = [], set()
    for report in read_jsonl(os.path.join(exp_dir, 'evaluator.jsonl')):
        envstep = report['collector_envstep']
        if envstep in seen:
            continue
        seen.add(envstep)
        wall = sum(it['collect_time'] + it['learn_time'] for it in iterations if it['envstep'] <= envstep)
        points.append(dict(env_steps=envstep, train_iter=report['train_iter'], wall_time_s=wall,
                           games=report['episode_count'], **{k: report[k] for k in CURVE_FIELDS}))
    return points


def final_row(report: Dict) -> Dict:
    """A final row: the figures, and each game's outcome by game seed (for paired_comparison)."""
    return dict(games=report['episode_count'], **{k: report[k] for k in CURVE_FIELDS}, game_outcomes=report['games'])


def paired_comparison(row: Dict, baseline: Dict) -> Optional[Dict]:
    """``row`` against ``baseline`` game by game on the same games (matched by game seed): in how many its score
    ratio is higher, the games it won that the baseline lost and the other way round, and the mean of the score
    ratio differences with a 90% bootstrap interval (the games resampled with replacement, pairs kept together).
    None when a row has no per-game outcomes (played before final rows kept them)."""
    if 'game_outcomes' not in row or 'game_outcomes' not in baseline:
        return None
    ours = {game['game_seed']: game for game in row['game_outcomes']}
    theirs = {game['game_seed']: game for game in baseline['game_outcomes']}
    if ours.keys() != theirs.keys():
        raise ValueError(f'the rows played different games: {len(ours.keys() - theirs.keys())} of {len(ours)} game '
                         f'seeds are not in the baseline\'s {len(theirs)}')
    seeds = sorted(ours)
    diff = np.array([ours[seed]['score_ratio'] - theirs[seed]['score_ratio'] for seed in seeds])  # (games,)
    picks = np.random.default_rng(0).integers(0, len(diff), size=(BOOTSTRAP_SAMPLES, len(diff)))
    resampled_means = diff[picks].mean(axis=1)  # (BOOTSTRAP_SAMPLES,)
    low, high = np.quantile(resampled_means, [0.05, 0.95])
    return dict(games=len(seeds), higher_score_ratio=int((diff > 0).sum()),
                won_where_baseline_lost=sum(ours[seed]['win'] and not theirs[seed]['win'] for seed in seeds),
                lost_where_baseline_won=sum(theirs[seed]['win'] and not ours[seed]['win'] for seed in seeds),
                score_ratio_difference_mean=float(diff.mean()), score_ratio_difference_90=[float(low), float(high)])


def iteration_checkpoints(folder: str) -> List[Tuple[int, str]]:
    """(N, path) of each iteration_N.pth.tar in ``folder``, fewest gradient updates first."""
    return sorted((int(m.group(1)), p) for p in glob.glob(os.path.join(folder, 'iteration_*.pth.tar'))
                  if (m := re.search(r'iteration_(\d+)\.pth\.tar$', p)))


def latest_checkpoint(exp_dir: str) -> Optional[str]:
    """The checkpoint with the most gradient updates in exp_dir/ckpt (iteration_N.pth.tar), or None."""
    found = iteration_checkpoints(os.path.join(exp_dir, 'ckpt'))
    return found[-1][1] if found else None


def copy_atomically(src: str, dst: str) -> None:
    with replaced_atomically(dst) as tmp:
        shutil.copyfile(src, tmp)


def copy_new_files(src: str, dst: str) -> None:
    """Copy the files of folder ``src`` that ``dst`` lacks (snapshots never change once written) and pool.json."""
    if not os.path.isdir(src):
        return
    os.makedirs(dst, exist_ok=True)
    for name in os.listdir(src):
        if not name.startswith('.') and (name == 'pool.json' or not os.path.exists(os.path.join(dst, name))):
            copy_atomically(os.path.join(src, name), os.path.join(dst, name))


class RunState:
    """A run's resumable state in RUN_STATE/<run tag>/: the latest checkpoint (latest.pth.tar), the logs, a
    kickstarted run's kickstart (kickstart.pth.tar: the weights before PPO, played as a row of their own) and, with
    ``keep_candidates`` (--select-checkpoint), the weights of every checkpoint written at an evaluation after the
    first PPO update (candidates/iteration_N.pth.tar: what the selection chooses from, kept across resumes)."""

    def __init__(self, run_tag: str, exp_dir: str, keep_candidates: bool = False) -> None:
        self.folder = os.path.join(RUN_STATE, run_tag)
        self.checkpoint = os.path.join(self.folder, 'latest.pth.tar')
        self.kickstart = os.path.join(self.folder, KICKSTART_CHECKPOINT)
        self.candidates = os.path.join(self.folder, CANDIDATES) if keep_candidates else None
        self.exp_dir = exp_dir
        self._copied: Optional[str] = None
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def restore(self) -> Optional[str]:
        """Put the committed logs back into the experiment folder; returns the checkpoint to resume from or None."""
        if not os.path.isfile(self.checkpoint):
            return None
        # checkpoints this machine wrote after the committed one would pass for the resumed run's latest
        shutil.rmtree(os.path.join(self.exp_dir, 'ckpt'), ignore_errors=True)
        os.makedirs(self.exp_dir, exist_ok=True)
        for name in LOGS:
            if os.path.exists(os.path.join(self.folder, name)):
                copy_atomically(os.path.join(self.folder, name), os.path.join(self.exp_dir, name))
        copy_new_files(os.path.join(self.folder, LEAGUE), os.path.join(self.exp_dir, LEAGUE))
        return self.checkpoint

    def sync(self) -> None:
        """Copy the experiment folder's latest checkpoint and logs here, if there is a newer checkpoint."""
        kickstart = os.path.join(self.exp_dir, 'ckpt', KICKSTART_CHECKPOINT)
        if os.path.isfile(kickstart) and not os.path.isfile(self.kickstart):  # written once, before PPO
            os.makedirs(self.folder, exist_ok=True)
            copy_atomically(kickstart, self.kickstart)
        latest = latest_checkpoint(self.exp_dir)
        if latest is None or latest == self._copied:
            return
        if self.candidates is not None:
            self.keep_evaluated()
        os.makedirs(self.folder, exist_ok=True)
        for name in LOGS:  # a log not written yet (no PPO iteration before the first checkpoint) is not copied
            if os.path.exists(os.path.join(self.exp_dir, name)):
                copy_atomically(os.path.join(self.exp_dir, name), os.path.join(self.folder, name))
        copy_new_files(os.path.join(self.exp_dir, LEAGUE), os.path.join(self.folder, LEAGUE))
        copy_atomically(latest, self.checkpoint)  # last: a checkpoint never runs ahead of its logs
        self._copied = latest

    def keep_evaluated(self) -> None:
        """The weights of each checkpoint of the experiment folder written at an evaluation (its last_eval is its env
        step; not one written on a signal) after the first PPO update, into candidates/ once."""
        for n, path in iteration_checkpoints(os.path.join(self.exp_dir, 'ckpt')):
            kept = os.path.join(self.candidates, os.path.basename(path))
            if n == 0 or os.path.exists(kept):
                continue
            payload = load_checkpoint(path)
            if payload.get('last_eval') == payload['envstep']:
                os.makedirs(self.candidates, exist_ok=True)
                export_weights(path, kept)

    def __enter__(self) -> 'RunState':
        def loop() -> None:
            while not self._stop.wait(SYNC_EVERY_S):
                try:
                    self.sync()
                except OSError:  # e.g. a full disk: the run goes on, the next sync tries again
                    logging.warning('could not copy the run state to %s', self.folder, exc_info=True)

        self._thread = threading.Thread(target=loop, name='run-state-sync', daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.sync()


def train_run(main_config: Dict, create_config: Dict, run_tag: str, seed: int, args,
              kickstart: Optional[str] = None) -> Dict:
    """Train (or go on training) one run; returns its curve, its last checkpoint and its training wall time.
    ``kickstart``: the run's kickstart when it does not make one itself (a run that goes on from another's)."""
    exp_dir = os.path.join(RUNS, run_tag)
    state = RunState(run_tag, exp_dir, keep_candidates=args.select_checkpoint)
    resume = state.restore() if args.resume else None
    if resume is None:
        shutil.rmtree(exp_dir, ignore_errors=True)  # a fresh run: its logs are the curve
        shutil.rmtree(state.folder, ignore_errors=True)
    if kickstart is not None and not os.path.isfile(state.kickstart):
        os.makedirs(state.folder, exist_ok=True)
        copy_atomically(kickstart, state.kickstart)
    logging.info(f'run {run_tag} (seed {seed}): ' + (f'resuming from {resume}' if resume else 'a new run'))
    overrides = [f'exp_name={exp_dir!r}', f'policy.eval.evaluator.eval_freq={args.eval_every}',
                 f'env.n_evaluator_episode={args.eval_games}']
    start = time.time()
    with state:
        train(apply_overrides(main_config, overrides), create_config, seed=seed, max_env_step=args.env_steps,
              resume=resume, progress=False)
    # a run resumed at its last env step writes no checkpoint: its latest is the one it resumed from
    run = dict(curve=learning_curve(exp_dir), checkpoint=latest_checkpoint(exp_dir) or resume,
               session_wall_time_s=time.time() - start)
    if os.path.isfile(state.kickstart):
        run['kickstart_checkpoint'] = os.path.relpath(state.kickstart, HERE)
    return run, resume is not None


def run_name(tag: str, k: int, several: bool) -> str:
    """The name of run K of ``tag``: <tag>_s<K> where the config runs with several run seeds, else <tag>."""
    return f'{tag}_s{k}' if several else tag


def results_tags(name: str) -> List[str]:
    """The tags whose results file may hold the run ``name`` (the inverse of run_name): the name itself, and
    <tag> for a name <tag>_s<K>."""
    return list(dict.fromkeys([name, re.sub(r'_s\d+$', '', name)]))


def results_path(tag: str) -> str:
    """Where the results of ``tag`` are written: RESULTS/learning_<tag>.json."""
    return os.path.join(RESULTS, f'learning_{tag}.json')


def load_results(tag: str, option: str) -> Dict:
    """learning_<tag>.json, or a SystemExit naming ``option``, the missing file and the tags that have results."""
    path = results_path(tag)
    if not os.path.isfile(path):
        tags = sorted(os.path.basename(p)[len('learning_'):-len('.json')]
                      for p in glob.glob(os.path.join(RESULTS, 'learning_*.json')))
        raise SystemExit(f'{option} {tag}: no {os.path.relpath(path)}; the tags with results: {tags}')
    with open(path) as f:
        return json.load(f)


def source_runs(tag: str, seeds: List[int], final_seed: int, opponents: Optional[str],
                option: str = '--from-runs') -> Dict[int, tuple]:
    """Run seed -> (run tag, run) of the trained runs of learning_<tag>.json with those run seeds, for --from-runs (a
    run goes on from the source run of its own run seed); a SystemExit naming what is missing when that file lacks
    one, or played its final games on other games. Where the source's final games had other ``opponents`` (e.g. a
    phase against level-2 bots after runs evaluated against level-3 bots), its runs come without their kickstart
    rows: those are not this run's games, and its kickstart plays them again (``opponents`` None: not checked)."""
    previous, path = load_results(tag, option), results_path(tag)
    trained = {run['seed']: (run_tag, run) for run_tag, run in previous.get('runs', {}).items() if 'published' in run}
    missing = [seed for seed in seeds if seed not in trained]
    if missing:
        have = [f'{run_tag} (seed {seed})' for seed, (run_tag, _) in sorted(trained.items())]
        raise SystemExit(f'{option} {tag}: no trained run with run seed {missing} in {os.path.relpath(path)}; its '
                         f'trained runs: {have}')
    if previous['settings']['final_seed'] != final_seed:
        raise SystemExit(f'{option} {tag}: its final games took env seed {previous["settings"]["final_seed"]}, '
                         f'this config\'s take {final_seed}; set the same seed')
    if opponents is not None and previous['settings']['opponents'] != opponents:
        logging.info(f'{option} {tag}: its final games were against {previous["settings"]["opponents"]}, this '
                     f'config\'s are against {opponents}: each kickstart plays them again')
        return {seed: (trained[seed][0], {key: value for key, value in trained[seed][1].items()
                                          if key not in ('kickstart', 'kickstart_published')}) for seed in seeds}
    return {seed: trained[seed] for seed in seeds}


def going_on_from(main_config: Dict, source_tag: str, source: Dict, distil_kickstart: bool = False) -> tuple:
    """A --from-runs run of ``source``: its config (starting from the source's published weights, or, with
    policy.load_learn_state, from the full checkpoint of its committed run state, the same iteration; with
    ``distil_kickstart``, distilling the source's kickstart: policy.learn.kickstart_teacher), the source's kickstart
    checkpoint (or None) and what the run records of where it began."""
    weights = os.path.join(HERE, source['published'])
    if main_config['policy'].get('load_learn_state'):
        kept = source.get('selection', {}).get('chosen') if 'averaged' not in source else None
        if kept is not None and kept != source['env_steps']:
            raise SystemExit(f'--from-runs with policy.load_learn_state goes on from the last iteration\'s state; '
                             f'{source_tag} published its checkpoint at {kept:,} env steps (--select-checkpoint), '
                             f'not its last: go on from its published weights (no policy.load_learn_state)')
        weights = os.path.join(RUN_STATE, source_tag, 'latest.pth.tar')
        if not os.path.isfile(weights) or load_checkpoint(weights)['envstep'] != source['env_steps']:
            raise SystemExit(f'--from-runs with policy.load_learn_state: {os.path.relpath(weights)} is not the '
                             f"state of {source_tag}'s last iteration ({source['env_steps']:,} env steps)")
    kickstart = os.path.join(HERE, source['kickstart_checkpoint']) if 'kickstart_checkpoint' in source else None
    origin = dict(from_run=dict(tag=source_tag, published=source['published'], env_steps=source['env_steps']))
    overrides = [f'policy.load_path={weights!r}']
    if distil_kickstart:
        if kickstart is None:
            raise SystemExit(f'--distil-kickstart: {source_tag} has no kickstart to distil (it made none and went on '
                             f'from none)')
        overrides.append(f'policy.learn.kickstart_teacher={kickstart!r}')
        origin['kickstart_teacher'] = source['kickstart_checkpoint']
    return apply_overrides(main_config, overrides), kickstart, origin


def kept_kickstart_row(previous: Dict, args) -> Dict:
    """The kickstart's final row (and its published file) of ``previous``, the same run before it was resumed for
    more env steps (its kickstart is the one it had: RunState keeps it) or the run a --from-runs run goes on from
    (whose kickstart it keeps): the same weights on the same games, greedy, so that row stands."""
    if 'kickstart' not in previous or previous['kickstart']['games'] != args.final_games:
        return {}
    return {key: previous[key] for key in ('kickstart', 'kickstart_published')}


def recorded_run(run_tag: str) -> Optional[Dict]:
    """The record of the run ``run_tag`` in its results file (learning_<run tag>.json, or learning_<tag>.json for
    run K of several, named <tag>_sK), or None where no committed results file holds it."""
    for tag in results_tags(run_tag):
        if os.path.isfile(results_path(tag)):
            run = load_results(tag, '--average-runs').get('runs', {}).get(run_tag)
            if run is not None:
                return run
    return None


def ancestors(run: Dict) -> List[str]:
    """The published weights of the runs that ``run`` went on from (--from-runs), nearest first, followed through
    the results files as far as they are recorded."""
    chain = []
    while 'from_run' in run and run['from_run']['published'] not in chain:
        chain.append(run['from_run']['published'])
        run = recorded_run(run['from_run']['tag']) or {}
    return chain


def averaged_run(run_tag: str, seed: int, sources: List[tuple], weights: Optional[List[float]], args) -> Dict:
    """A run made by no training (--average-runs): the weight average of the published weights of ``sources``
    ((run tag, run), one per tag, of this run seed), published as PUBLISHED/<run tag>.pth.tar with the first source's
    config. The sources must have gone on from a common run (siblings of one run, or a run and a descendant of one of
    its siblings); the average keeps the first source's kickstart (and its kickstart row, the same weights on the same
    games, when it kept each game's outcome)."""
    common = set.intersection(*(set(ancestors(run)) for _, run in sources))
    if not common:
        found = {tag: run.get('from_run', {}).get('tag') for tag, run in sources}
        raise SystemExit(f'--average-runs: the runs of seed {seed} did not go on from the same run (their --from-runs '
                         f'sources: {found}); only runs with a common ancestor are averaged')
    published = os.path.join(PUBLISHED, f'{run_tag}.pth.tar')
    used = average_checkpoints([os.path.join(HERE, run['published']) for _, run in sources], published, weights)
    first = sources[0][1]
    run = dict(seed=seed, env_steps=sum(run['env_steps'] for _, run in sources), from_run=first['from_run'],
               averaged=dict(runs=[tag for tag, _ in sources], published=[run['published'] for _, run in sources],
                             weights=used), curve=[], published=os.path.relpath(published, HERE))
    if 'kickstart_checkpoint' in first:
        run['kickstart_checkpoint'] = first['kickstart_checkpoint']
    if 'game_outcomes' in first.get('kickstart', {}):
        run.update(kept_kickstart_row(first, args))
    logging.info(f'run {run_tag}: the average of {", ".join(tag for tag, _ in sources)} with weights {used}')
    return run


def selection_margin(rows: Dict[str, Dict], kickstart: Dict, win_bar: float, vs_win_bar: float) -> float:
    """How far a candidate clears --average-select's bars on the validation games, at its weakest: the least of its
    win rate over ``win_bar`` (row 'final', the config's opponents), its score ratio over the kickstart's on the same
    games (relative: 0.05 is 5% above it) and its win rate over ``vs_win_bar`` against each other level (the other
    rows). Negative: it misses a bar, by that much."""
    margins = [rows['final']['win_rate'] - win_bar,
               rows['final']['score_ratio_mean'] / kickstart['score_ratio_mean'] - 1.0]
    margins += [row['win_rate'] - vs_win_bar for name, row in rows.items() if name != 'final']
    return min(margins)


def select_on_validation(run_tag: str, selection: Dict, candidates: Dict[str, str], kickstart: str, env_of: str,
                         args, save: Callable[[], None]) -> str:
    """Play each of ``candidates`` (key -> weights) on the validation games (``selection``'s seed and count) against
    the config's opponents and each --vs-level, and ``kickstart`` (on the games of ``env_of``'s config) against the
    config's opponents; ``selection`` gets each row as it is played (``save`` after each: --resume plays only the
    rest) and the margins. Returns the key of the candidate with the largest selection_margin (ties: the higher
    score ratio, then the first)."""
    def play(path: str, **kwargs) -> Dict:  # a final row's figures, without each game's outcome
        row = final_row(evaluate(path, episodes=selection['games'], seed=selection['seed'], **kwargs))
        return {k: v for k, v in row.items() if k != 'game_outcomes'}

    if selection.get('kickstart') is None:
        logging.info(f'run {run_tag}: its kickstart on the {selection["games"]} validation games')
        selection['kickstart'] = play(kickstart, main_config=on_the_games_of(env_of, kickstart))
        save()
    names = ['final'] + [vs_level(level) for level in args.vs_level]
    for key, path in candidates.items():
        rows = selection['candidates'].setdefault(key, {})
        for name, level in zip(names, [None] + list(args.vs_level)):
            if name not in rows:
                logging.info(f'run {run_tag}: candidate {key} on the validation games'
                             + (f' against level-{level} bots' if level else ''))
                rows[name] = play(path, overrides=[f'env.bot_level={level}'] if level else None)
                save()
    played = {key: selection['candidates'][key] for key in candidates}
    margins = {key: selection_margin(rows, selection['kickstart'], args.select_win_rate, args.select_vs_win_rate)
               for key, rows in played.items()}
    chosen = max(margins, key=lambda key: (margins[key], played[key]['final']['score_ratio_mean']))
    selection['margins'] = margins
    logging.info(f'run {run_tag}: candidate {chosen} kept; margins ' +
                 ', '.join(f'{key}: {m:+.3f}' for key, m in margins.items()))
    return chosen


def selection_of(run_tag: str, run: Dict, validation_seed: int, args) -> Dict:
    """run['selection'] (the rows played so far, when resumed), checked to be on the same validation games."""
    selection = run.setdefault('selection', dict(seed=validation_seed, games=args.validation_games, kickstart=None,
                                                 candidates={}))
    if (selection['seed'], selection['games']) != (validation_seed, args.validation_games):
        raise SystemExit(f'{run_tag} was being selected on {selection["games"]} games of env seed '
                         f'{selection["seed"]}; give --validation-games {selection["games"]} to go on')
    return selection


def select_average_weights(run_tag: str, run: Dict, sources: List[tuple], args, validation_seed: int,
                           save: Callable[[], None]) -> List[float]:
    """--average-select: each candidate weight of the first of the two ``sources`` (the second gets the rest) is
    averaged into RUNS/<run tag>/ and played with select_on_validation, the lineage's kickstart too (run['selection']).
    Returns the weights of the candidate kept."""
    first = sources[0][1]
    if 'kickstart_checkpoint' not in first:
        raise SystemExit(f'--average-select compares each candidate\'s score ratio with the kickstart\'s: '
                         f'{sources[0][0]} has none')
    selection = selection_of(run_tag, run, validation_seed, args)
    folder = os.path.join(RUNS, run_tag)
    candidates = {}  # key in run['selection'] -> the average's file
    for weight in args.average_select:
        key = f'{weight:g}'
        candidates[key] = os.path.join(folder, f'candidate_{key}.pth.tar')
        average_checkpoints([os.path.join(HERE, source['published']) for _, source in sources], candidates[key],
                            [weight, 1.0 - weight])
    chosen = select_on_validation(run_tag, selection, candidates, os.path.join(HERE, first['kickstart_checkpoint']),
                                  os.path.join(HERE, first['published']), args, save)
    selection['chosen'] = float(chosen)
    return [float(chosen), 1.0 - float(chosen)]


def select_checkpoint(run_tag: str, run: Dict, args, validation_seed: int, save: Callable[[], None]) -> None:
    """--select-checkpoint: early stopping on validation games. The weights the trained run kept at each evaluation
    (RUN_STATE/<run tag>/candidates/) are played with select_on_validation, keyed by env step, with the run's
    kickstart; run['checkpoint'] becomes the one kept (what publish() publishes) and run['selection']['chosen'] its
    env step."""
    if 'kickstart_checkpoint' not in run:
        raise SystemExit(f'--select-checkpoint compares each candidate\'s score ratio with the kickstart\'s: '
                         f'{run_tag} made none and went on from none')
    kept = iteration_checkpoints(os.path.join(RUN_STATE, run_tag, CANDIDATES))
    if not kept:
        raise SystemExit(f'--select-checkpoint: {run_tag} kept no checkpoint at an evaluation after its first PPO '
                         f'update in {os.path.relpath(os.path.join(RUN_STATE, run_tag, CANDIDATES))}/')
    candidates = {str(load_checkpoint(path)['envstep']): path for _, path in kept}
    selection = selection_of(run_tag, run, validation_seed, args)
    chosen = select_on_validation(run_tag, selection, candidates, os.path.join(HERE, run['kickstart_checkpoint']),
                                  next(iter(candidates.values())), args, save)
    selection['chosen'] = int(chosen)
    run['checkpoint'] = candidates[chosen]


def opponents_of(cfg: Dict) -> str:
    """What the evaluations and the final games of a run with config ``cfg`` play: bots, also for self-play and
    league runs (their evaluator envs play 'bot', see GoBiggerEnv); 'random' runs are evaluated against random
    teams."""
    return 'random' if cfg['env']['opponent'] == 'random' else f'bot level {cfg["env"]["bot_level"]}'


def vs_level(level: int) -> str:
    """A run's key for its final games against level-``level`` bots (--vs-level)."""
    return f'vs level-{level} bots'


def log_row(name: str, row: Dict) -> None:
    logging.info(f'{name}: win rate {row["win_rate"]:.2f}, score ratio {row["score_ratio_mean"]:.3f}, rank '
                 f'{row["rank_mean"]:.2f} over {row["games"]} final games')


def publish(run_tag: str, run: Dict) -> None:
    """A trained run's last weights and config as PUBLISHED/<run tag>.pth.tar (run['published']), once: what its
    final games play, and what a next phase (--from-runs) goes on from, --only-train included."""
    if 'published' not in run:
        published = os.path.join(PUBLISHED, f'{run_tag}.pth.tar')
        export_weights(run['checkpoint'], published)
        run['published'] = os.path.relpath(published, HERE)
        run['checkpoint'] = os.path.relpath(run['checkpoint'], HERE)


def on_the_games_of(env_of: str, ckpt: str) -> Dict:
    """The config of ``ckpt`` (e.g. a kickstart made by the run a --from-runs phase goes on from) with the env of
    checkpoint ``env_of``'s config (a run's published weights): its weights play that run's games (preset, opponents,
    bot level), not its maker's."""
    config = load_checkpoint(ckpt)['config']
    config['env'] = load_checkpoint(env_of)['config']['env']
    return config


def play_final_games(run_tag: str, run: Dict, args, final_seed: int, save: Callable[[], None]) -> None:
    """The final rows of a trained run that it lacks: its last checkpoint on the final games ('final'), its
    kickstart alone on them ('kickstart', a kickstarted run), and the last checkpoint against each --vs-level.
    Its kickstart is published before it is played; ``run`` gets the rows and the published paths, and ``save`` is
    called after each row (a long evaluation stopped half way loses only its own row; --resume plays the rest)."""
    if 'final' not in run:
        run['final'] = final_row(evaluate(os.path.join(HERE, run['published']), episodes=args.final_games,
                                          seed=final_seed))
        log_row(f'run {run_tag}', run['final'])
        save()
    if 'kickstart_checkpoint' in run and 'kickstart' not in run:
        published = os.path.join(PUBLISHED, f'{run_tag}_kickstart.pth.tar')
        export_weights(os.path.join(HERE, run['kickstart_checkpoint']), published)
        run['kickstart_published'] = os.path.relpath(published, HERE)
        logging.info(f'run {run_tag}: its kickstart alone on the final games')
        games = on_the_games_of(os.path.join(HERE, run['published']), published)
        run['kickstart'] = final_row(evaluate(published, main_config=games, episodes=args.final_games,
                                              seed=final_seed))
        log_row(f'run {run_tag}: its kickstart alone', run['kickstart'])
        save()
    for level in args.vs_level:
        if vs_level(level) not in run.setdefault('final_vs', {}):
            logging.info(f'run {run_tag}: the final games against level-{level} bots')
            report = evaluate(os.path.join(HERE, run['published']), episodes=args.final_games, seed=final_seed,
                              overrides=[f'env.bot_level={level}'])
            run['final_vs'][vs_level(level)] = final_row(report)
            log_row(f'run {run_tag} against level-{level} bots', run['final_vs'][vs_level(level)])
            save()


def summary(rows: List[Dict]) -> Dict:
    return {f'{stat}_{field}': float(fn([r[field] for r in rows]))
            for field in SUMMARY_FIELDS for stat, fn in (('mean', np.mean), ('min', np.min), ('max', np.max))}


def run_rows(run_tag: str, run: Dict) -> List[tuple]:
    """(name, summary key, final row) of each final row a run has: its last checkpoint, its kickstart alone, and
    its last checkpoint against other bot levels."""
    after = f' after {run["from_run"]["tag"]}' if 'from_run' in run else ''
    made = f'the average of {" and ".join(run["averaged"]["runs"])}' if 'averaged' in run else \
        f'{run["env_steps"]} env steps{after}'
    rows = [(f'{run_tag} (seed {run["seed"]}, {made})', 'summary', run['final'])]
    if 'kickstart' in run:
        rows.append((f'{run_tag}: its kickstart alone', 'summary_kickstart', run['kickstart']))
    rows += [(f'{run_tag} {name}', f'summary_{name.replace(" ", "_").replace("-", "")}', row)
             for name, row in run.get('final_vs', {}).items()]
    return rows


def plot(runs: Dict[str, Dict], references: Dict[str, Dict], title: str, path: str) -> None:
    """2 x 2 panels: win rate and score ratio (rows) against env steps and training wall time (columns)."""
    fig = Figure(figsize=(11, 7), layout='constrained')
    axes = curve_grid(fig)
    styles = dict(zip(REFERENCES, (':', '-.', '--', (0, (5, 1, 1, 1, 1, 1)))))
    for col, (x_key, _) in enumerate(GRID_COLUMNS):
        for row, (field, _) in enumerate(GRID_ROWS):
            ax = axes[row, col]
            for k, (run_tag, run) in enumerate(runs.items()):
                points, colour = run['curve'], GRID_COLOURS[k % len(GRID_COLOURS)]
                if not points:  # an --average-runs run: trained by its sources, no curve of its own
                    continue
                x = [p[x_key] for p in points]
                ax.plot(x, [p[field] for p in points], marker='o', markersize=3, color=colour,
                        label=f'{run_tag} ({points[-1]["games"]} games each)')
                if 'final' in run:
                    ax.plot([x[-1]], [run['final'][field]], marker='*', markersize=12, color=colour,
                            linestyle='none', label=f'{run_tag} final, {run["final"]["games"]} new games')
            for name, ref in references.items():
                ax.axhline(ref[field], color='grey', linestyle=styles[name], linewidth=1, label=name)
    finish_curve_grid(axes)
    axes[0, 0].legend(fontsize=7, loc='upper left')
    fig.suptitle(title, fontsize=11)
    save_figure_atomically(fig, path)


def evaluate_checkpoints(args, final_seed: int, tag: str) -> None:
    """Each checkpoint (with the config it was trained with) over the final games, and against each --vs-level on
    the same games; writes learning_<tag>.json."""
    rows = {}
    for item in args.checkpoint:
        name, path = item.split('=', 1)
        rows[name] = dict(checkpoint=path, **final_row(evaluate(path, episodes=args.final_games, seed=final_seed)))
        for level in args.vs_level:
            report = evaluate(path, episodes=args.final_games, seed=final_seed, overrides=[f'env.bot_level={level}'])
            rows[name].setdefault('final_vs', {})[vs_level(level)] = final_row(report)
        log_row(name, rows[name])
    first, *others = rows
    for name in others:  # each later checkpoint against the first named, on the same games
        rows[name]['against_first'] = dict(checkpoint=first, **paired_comparison(rows[name], rows[first]))
    result = dict(date=now(), settings=dict(final_games=args.final_games, final_seed=final_seed), checkpoints=rows)
    write_results(results_path(tag), result)
    table = [(name, 'as trained', r) for name, r in rows.items()]
    table += [(name, opponents, row) for name, r in rows.items() for opponents, row in r.get('final_vs', {}).items()]
    print(tabulate([(name, opponents, f'{r["win_rate"]:.2f}', f'{r["score_ratio_mean"]:.3f}', f'{r["rank_mean"]:.2f}')
                    for name, opponents, r in table],
                   headers=('checkpoint', 'opponents', 'win rate', 'score ratio', 'rank')))
    print_eats([(f'{name}, {opponents}', r) for name, opponents, r in table])
    for name in others:
        print(format_paired(name, first, rows[name]['against_first']))


def print_eats(rows: List[Tuple[str, Dict]]) -> None:
    """What our side ate per game in each (name, final row), the mean over its games (rows played before the env
    counted them are left out)."""
    rows = [(name, r) for name, r in rows
            if r.get('game_outcomes') and EAT_COUNTS.keys() <= r['game_outcomes'][0].keys()]
    if rows:
        print('\nwhat our side ate per game (the mean over the final games; `eaten`: its balls eaten by anyone):')
        print(tabulate([(name, *(f'{np.mean([g[k] for g in r["game_outcomes"]]):.1f}' for k in EAT_COUNTS))
                        for name, r in rows], headers=('our side', *EAT_COUNTS)))


def format_paired(name: str, baseline: str, p: Dict) -> str:
    """One line of paired_comparison's figures."""
    low, high = p['score_ratio_difference_90']
    return (f'{name} against {baseline}, game by game on the same {p["games"]} games: higher score ratio in '
            f'{p["higher_score_ratio"]}, won {p["won_where_baseline_lost"]} that {baseline} lost and lost '
            f'{p["lost_where_baseline_won"]} that it won; score ratio difference mean '
            f'{p["score_ratio_difference_mean"]:+.3f} (90% bootstrap interval {low:+.3f} to {high:+.3f})')


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')


def write_results(path: str, data: Dict) -> None:
    write_json(path, data)
    print(f'wrote {path}', flush=True)


def save_results(path: str, result: Dict, own_runs: Optional[List[str]]) -> None:
    """write_results of ``result``; with ``own_runs`` (--resume), keeping what other processes wrote to ``path``
    meanwhile: the runs not in ``own_runs`` and the reference rows ``result`` lacks are taken from the file, so that
    `--run K --resume` processes of one tag can run side by side (each writes only its own runs; a lock under RUNS
    keeps the read and the write together). Without, ``result`` replaces the file (a results file started over)."""
    os.makedirs(RUNS, exist_ok=True)
    with open(os.path.join(RUNS, f'{os.path.basename(path)}.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if own_runs is not None and os.path.isfile(path):
            with open(path) as f:
                on_disk = json.load(f)
            runs = {t: result['runs'][t] if t in own_runs and t in result['runs'] else r
                    for t, r in on_disk.get('runs', {}).items()}  # the file's order, ours for our runs
            result['runs'] = {**runs, **{t: r for t, r in result['runs'].items() if t not in runs}}
            result['references'] = {**on_disk.get('references', {}), **result['references']}
        write_results(path, result)


def print_tables(result: Dict) -> None:
    for run_tag, run in ((t, r) for t, r in result['runs'].items() if r.get('curve')):
        print(f'\n{run_tag} (seed {run["seed"]}):')
        print(tabulate([(p['env_steps'], f'{p["wall_time_s"]:.0f}', p['games'], f'{p["win_rate"]:.2f}',
                         f'{p["score_ratio_mean"]:.3f}', f'{p["rank_mean"]:.2f}',
                         f'{p["reward_mean"]:.2f} ± {p["reward_std"]:.2f}') for p in run['curve']],
                       headers=('env steps', 'train s', 'games', 'win rate', 'score ratio', 'rank', 'reward')))
    s = result['settings']
    print(f'\nfinal: {s["final_games"]} games on held-out seeds (env seed {s["final_seed"]}), {s["preset"]} vs '
          f'{s["opponents"]} unless a row says otherwise, {"greedy" if s["greedy"] else "sampled"} actions')
    rows = [(name, r) for run_tag, run in result['runs'].items() if 'final' in run
            for name, _, r in run_rows(run_tag, run)]
    rows += [(f'{name} (reference)', r) for name, r in result['references'].items()]
    print(tabulate([(name, f'{r["win_rate"]:.2f}', f'{r["score_ratio_mean"]:.3f}', f'{r["rank_mean"]:.2f}',
                     f'{r["final_score_mean"]:.0f}', f'{r["opponent_score_mean"]:.0f}') for name, r in rows],
                   headers=('our side', 'win rate', 'score ratio', 'rank', 'our score', 'best other')))
    print_eats(rows)
    for run_tag, run in result['runs'].items():
        if run.get('final_against_kickstart') is not None:
            print(format_paired(run_tag, 'its kickstart', run['final_against_kickstart']))
    for run_tag, run in ((t, r) for t, r in result['runs'].items() if 'margins' in r.get('selection', {})):
        print_selection(run_tag, run['selection'], averaged='averaged' in run)
    finished = sum('final' in run for run in result['runs'].values())
    for key, m in ((k, v) for k, v in result.items() if k.startswith('summary')):
        print(f'{key} over {finished} runs: win rate mean {m["mean_win_rate"]:.2f} (min {m["min_win_rate"]:.2f}), '
              f'score ratio mean {m["mean_score_ratio_mean"]:.3f} (min {m["min_score_ratio_mean"]:.3f}), rank mean '
              f'{m["mean_rank_mean"]:.2f}')


def print_selection(run_tag: str, selection: Dict, averaged: bool) -> None:
    """The validation rows of one run's --average-select (``averaged``) or --select-checkpoint: each candidate's, its
    margin, the one kept."""
    option, candidate = ('--average-select', 'weight of the first') if averaged else ('--select-checkpoint',
                                                                                      'env steps')
    print(f'\n{run_tag}: {option} on {selection["games"]} validation games (env seed {selection["seed"]}); '
          f'its kickstart {selection["kickstart"]["win_rate"]:.2f} / {selection["kickstart"]["score_ratio_mean"]:.3f}')
    names = list(next(iter(selection['candidates'].values())))
    print(tabulate([(w, *(f'{rows[n]["win_rate"]:.2f} / {rows[n]["score_ratio_mean"]:.3f}' for n in names),
                     f'{selection["margins"][w]:+.3f}', 'kept' if float(w) == selection['chosen'] else '')
                    for w, rows in selection['candidates'].items() if w in selection['margins']],
                   headers=(candidate, *('as trained' if n == 'final' else n for n in names), 'margin',
                            ''), disable_numparse=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--config', default=DEFAULT_CONFIG, help='Python file defining main_config')
    parser.add_argument('--set', action='append', default=[], metavar='KEY=VALUE', help='override a config key')
    parser.add_argument('--env-steps', type=int, help='training env steps per run (required unless --checkpoint)')
    parser.add_argument('--eval-every', type=int, help='env steps between evaluations (required unless --checkpoint)')
    parser.add_argument('--eval-games', type=int, default=8, help='games per evaluation during training')
    parser.add_argument('--final-games', type=int, default=100, help='games of the final evaluation of each run')
    parser.add_argument('--seeds', type=int, default=1, help='runs, with run seeds seed, seed + 1, ...')
    parser.add_argument('--run', type=int, default=None, metavar='K',
                        help='train and play only run K of the --seeds runs (0-based; run seed seed + K), e.g. to '
                             'pilot a lever on one seed; the others can follow later with --resume')
    parser.add_argument('--resume', action='store_true',
                        help='go on with the unfinished runs of this tag from benchmarks/results/runs/')
    parser.add_argument('--only-train', action='store_true',
                        help='train (or resume) the runs up to --env-steps, then stop: no final games yet')
    parser.add_argument('--no-references', action='store_true', help='skip the reference rows')
    parser.add_argument('--vs-level', type=int, action='append', default=[], metavar='N',
                        help='also play each run\'s last checkpoint (or each --checkpoint) on the final games against '
                        'level-N bots')
    parser.add_argument('--tag', default=None, help='results name (default: the preset)')
    parser.add_argument('--from-runs', metavar='TAG', default=None,
                        help='a second phase: each run starts from the published weights of the run of '
                             'learning_TAG.json with its run seed (policy.load_path; with --set '
                             'policy.load_learn_state=True, from its committed run state, optimizer and value '
                             'normalisation included) and keeps that run\'s kickstart as its own (compared game by '
                             'game)')
    parser.add_argument('--distil-kickstart', action='store_true',
                        help='with --from-runs and policy.learn.kickstart_kl > 0: each run distils the kickstart its '
                             'lineage began from (policy.learn.kickstart_teacher = its source run\'s kickstart), not '
                             'the weights it starts from')
    parser.add_argument('--average-runs', nargs='+', metavar='TAG', default=None,
                        help='no training: each run is the weight average of the published runs of learning_TAG.json '
                             'with its run seed, for each TAG (2 or more, that went on from a common run), '
                             'with the first TAG\'s config and kickstart; then its final rows are played')
    parser.add_argument('--average-weights', nargs='+', type=float, metavar='W', default=None,
                        help='with --average-runs: the weight of each TAG (>= 0, summing to 1; default equal)')
    parser.add_argument('--average-select', nargs='+', type=float, metavar='W', default=None,
                        help='with --average-runs TAG_A TAG_B: candidate weights of TAG_A, each run keeping the one '
                             'that clears the bars best on the validation games (see the module docstring)')
    parser.add_argument('--select-checkpoint', action='store_true',
                        help='early stopping: each trained run keeps the weights of each evaluation and publishes '
                             'the one that clears the bars best on the validation games, like --average-select (see '
                             'the module docstring)')
    parser.add_argument('--validation-games', type=int, default=50,
                        help='games per --average-select or --select-checkpoint row')
    parser.add_argument('--select-win-rate', type=float, default=0.95,
                        help="--average-select's bar on the win rate against the config's opponents")
    parser.add_argument('--select-vs-win-rate', type=float, default=0.8,
                        help="--average-select's bar on the win rate against each --vs-level")
    parser.add_argument('--checkpoint', action='append', default=[], metavar='NAME=PATH',
                        help='no training: evaluate these checkpoints on the final games (for ablation rows); each one '
                             'after the first is also compared with the first game by game')
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format='%(asctime)s %(levelname)s %(message)s', datefmt='%H:%M:%S',
                        force=True)  # DI-engine set up the root logger at import
    os.environ.setdefault('PYGAME_HIDE_SUPPORT_PROMPT', '1')

    main_config, create_config = load_config_file(args.config)
    main_config = apply_overrides(main_config, args.set)
    # the settings every run shares (a --from-runs run's policy.load_path is its source's, set per run: checked here
    # as set, so that the keys that need one pass)
    if args.distil_kickstart and not args.from_runs:
        parser.error('--distil-kickstart distils the kickstart of the runs a --from-runs phase goes on from: give '
                     '--from-runs TAG too')
    placeholders = [f'policy.load_path={args.from_runs!r}'] + \
        ([f'policy.learn.kickstart_teacher={args.from_runs!r}'] if args.distil_kickstart else [])
    cfg, _ = compile_config(apply_overrides(main_config, placeholders) if args.from_runs else main_config,
                            create_config)
    tag = args.tag or cfg.env.preset
    final_seed = cfg.seed + FINAL_SEED_OFFSET
    for level in args.vs_level:
        if level not in BOT_LEVELS:
            parser.error(f'--vs-level must be one of {list(BOT_LEVELS)}, got {level}')
    if args.checkpoint and args.from_runs:
        parser.error('--from-runs trains; --checkpoint only evaluates: give one of them')
    if args.checkpoint:
        evaluate_checkpoints(args, final_seed, tag)
        return
    opponents = opponents_of(cfg)
    if args.average_runs is not None:
        clash = [name for name, on in (('--from-runs', args.from_runs), ('--checkpoint', args.checkpoint),
                                       ('--distil-kickstart', args.distil_kickstart),
                                       ('--only-train', args.only_train),
                                       ('--select-checkpoint', args.select_checkpoint)) if on]
        if clash:
            parser.error(f'--average-runs trains nothing: it cannot be given with {", ".join(clash)}')
        try:
            mixing_weights(len(args.average_runs), args.average_weights)
        except ValueError as e:  # fewer than 2 tags, or weights that do not fit them
            parser.error(f'--average-runs {" ".join(args.average_runs)}: {e}')
        first_opponents = load_results(args.average_runs[0], '--average-runs')['settings']['opponents']
        if first_opponents != opponents:
            parser.error(f'--average-runs: the average plays the final games of {args.average_runs[0]} (against '
                         f'{first_opponents}); this config\'s are against {opponents}: give that run\'s '
                         f'--config and --set')
        if args.average_select is not None:
            if args.average_weights is not None or len(args.average_runs) != 2:
                parser.error('--average-select chooses the weight of the first of two --average-runs TAGs: give two '
                             'TAGs and no --average-weights')
            if any(not 0.0 <= w <= 1.0 for w in args.average_select):
                parser.error(f'--average-select weights must be in [0, 1], got {args.average_select}')
    elif args.average_weights is not None or args.average_select is not None:
        parser.error('--average-weights and --average-select weigh the runs of --average-runs: give --average-runs '
                     'too')
    elif args.env_steps is None or args.eval_every is None:
        parser.error('--env-steps and --eval-every are required to train')
    selecting = args.average_select is not None or args.select_checkpoint
    if selecting and args.validation_games < 1:
        parser.error(f'--validation-games must be >= 1, got {args.validation_games}')
    if args.seeds < 1:
        parser.error(f'--seeds must be >= 1, got {args.seeds}')
    if args.run is not None and not 0 <= args.run < args.seeds:
        parser.error(f'--run must be one of the --seeds runs, 0 to {args.seeds - 1}; got {args.run}')

    json_path = results_path(tag)
    png_path = os.path.join(RESULTS, f'learning_{tag}.png')
    settings = dict(config=os.path.relpath(args.config), overrides=args.set, preset=cfg.env.preset,
                    training_opponents=cfg.env.opponent, opponents=opponents, env_steps=args.env_steps,
                    eval_every=args.eval_every, eval_games=args.eval_games, final_games=args.final_games,
                    final_seed=final_seed, greedy=not cfg.policy.eval.sample, seed=cfg.seed, seeds=args.seeds,
                    from_runs=args.from_runs, distil_kickstart=args.distil_kickstart, average_runs=args.average_runs,
                    average_weights=args.average_weights, average_select=args.average_select,
                    select_checkpoint=args.select_checkpoint,
                    validation_seed=cfg.seed + VALIDATION_SEED_OFFSET if selecting else None,
                    select_bars=[args.select_win_rate, args.select_vs_win_rate] if selecting else None)
    result = dict(date=now(), settings=settings, runs={}, references={},
                  machine=dict(python=platform.python_version(), torch=torch.__version__, cpus=os.cpu_count()))
    if args.resume and os.path.isfile(json_path):  # finished runs and references stay as they were
        with open(json_path) as f:
            previous = json.load(f)
        result['runs'], result['references'] = previous.get('runs', {}), previous.get('references', {})
        result.update({k: v for k, v in previous.items() if k.startswith('summary')})  # until worked out again

    ks = range(args.seeds) if args.run is None else [args.run]
    seeds = [cfg.seed + k for k in ks]
    sources = source_runs(args.from_runs, seeds, final_seed, opponents) if args.from_runs else None
    to_average = [source_runs(t, seeds, final_seed, opponents if i == 0 else None, option='--average-runs')
                  for i, t in enumerate(args.average_runs)] if args.average_runs else None
    own_runs = [run_name(tag, k, args.seeds > 1) for k in ks]

    def save() -> None:
        save_results(json_path, result, own_runs if args.resume else None)

    for k, run_tag in zip(ks, own_runs):
        seed = cfg.seed + k
        run = result['runs'].get(run_tag, {})
        if to_average is not None:
            if 'published' not in run:
                averaged = [s[seed] for s in to_average]  # (run tag, run) of each TAG, of this run seed
                weights = args.average_weights
                if args.average_select:
                    run = result['runs'][run_tag] = run or dict(seed=seed)  # the selection so far, if resumed
                    weights = select_average_weights(run_tag, run, averaged, args, cfg.seed + VALIDATION_SEED_OFFSET,
                                                     save=save)
                selection = {'selection': run['selection']} if 'selection' in run else {}
                run = result['runs'][run_tag] = {**averaged_run(run_tag, seed, averaged, weights, args), **selection}
        elif run.get('env_steps') != args.env_steps or 'published' not in run:  # not yet trained this far
            run_config, kickstart, origin = (main_config, None, {}) if sources is None else \
                going_on_from(main_config, *sources[seed], distil_kickstart=args.distil_kickstart)
            trained, resumed = train_run(run_config, create_config, run_tag, seed, args, kickstart)
            kept = kept_kickstart_row(run, args) if resumed else {}
            if sources is not None and not kept and 'game_outcomes' in sources[seed][1].get('kickstart', {}):
                kept = kept_kickstart_row(sources[seed][1], args)  # with each game's outcome, for the paired figures
            # a selection stopped half way keeps the rows it played (the candidates it played are kept files)
            selected = {'selection': run['selection']} if args.select_checkpoint and 'selection' in run else {}
            run = dict(seed=seed, env_steps=args.env_steps, **origin, **trained, **kept, **selected)
            result['runs'][run_tag] = run
            if args.select_checkpoint:
                select_checkpoint(run_tag, run, args, cfg.seed + VALIDATION_SEED_OFFSET, save=save)
        publish(run_tag, run)
        save()
        if args.only_train:
            continue
        play_final_games(run_tag, run, args, final_seed, save=save)

    last = next((r for r in result['runs'].values() if 'published' in r), None)
    if last is not None and not args.no_references:
        for name, overrides in REFERENCES.items():
            if name not in result['references']:  # the same games for every run: played once per results file
                report = evaluate(os.path.join(HERE, last['published']), episodes=args.final_games, seed=final_seed,
                                  overrides=overrides)
                result['references'][name] = final_row(report)
                save()
    save()  # with the runs that processes side by side finished meanwhile, for the summary
    by_kind: Dict[str, List[Dict]] = {}  # summary key -> the runs' rows of that kind
    for run_tag, run in result['runs'].items():
        if 'final' in run and 'kickstart' in run:
            run['final_against_kickstart'] = paired_comparison(run['final'], run['kickstart'])
        for _, key, row in (run_rows(run_tag, run) if 'final' in run else []):
            by_kind.setdefault(key, []).append(row)
    result.update({key: summary(rows) for key, rows in by_kind.items()})
    result['date'] = now()
    save()
    if any(run.get('curve') for run in result['runs'].values()):  # --average-runs runs have none of their own
        plot(result['runs'], result['references'], f'{cfg.env.preset} vs {opponents}: {tag}', png_path)
    print_tables(result)


if __name__ == '__main__':
    # Ctrl-C, or kill -INT of a run started in the background (where the shell had set SIGINT to be ignored), stops
    # the final games too, not only the training (which has its own handler)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        main()
    except TrainingInterrupted as e:  # the run's state is in RUN_STATE (synced on the way out): say how to go on
        if e.checkpoint is None:  # stopped in a kickstart: nothing of that run was saved
            logging.info(f'{e.signal_name}: stopped; the same command with --resume starts that run again')
        else:
            logging.info(f'{e.signal_name}: stopped; the run state is in {os.path.relpath(RUN_STATE)}/: the same '
                         f'command with --resume goes on from it')
        raise SystemExit(e.exit_code)
    except KeyboardInterrupt:  # Ctrl-C in the final games: every row finished is in the results file already
        logging.info(f'SIGINT: stopped; the final rows played so far are in {os.path.relpath(RESULTS)}/: the same '
                     f'command with --resume plays the rest')
        raise SystemExit(130)
