"""The train runs of benchmarks/learning.py: one run per run seed, its curve read back from its logs, and its state
copied every minute to RESULTS/runs/<run tag>/ so that `--resume` goes on from there on any machine.

Paths are module attributes read at call time (``runs.RESULTS``), so that a test can point them elsewhere once.
"""
import glob
import json
import logging
import os
import re
import shutil
import threading
import time
from typing import Dict, List, Optional, Tuple

from ppo_gobigger.config import apply_overrides
from ppo_gobigger.files import replaced_atomically
from ppo_gobigger.pipeline.serial import train

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, 'results')  # learning_<tag>.json and .png
RUN_STATE = os.path.join(RESULTS, 'runs')  # each unfinished run's latest checkpoint and logs, for --resume
PUBLISHED = os.path.join(RESULTS, 'checkpoints')  # each run's final weights and config (not committed)
RUNS = os.path.join(HERE, 'runs')  # experiment folders (every checkpoint, TensorBoard); not committed
LATEST = 'latest.pth.tar'  # a run state's latest checkpoint
SYNC_EVERY_S = 60.0  # how often a training run's latest checkpoint and logs are copied to RUN_STATE
LOGS = ('learner.jsonl', 'evaluator.jsonl')
LEAGUE = 'league'  # a league run's pool folder (snapshots and pool.json): resuming needs its snapshots
CURVE_FIELDS = ('win_rate', 'score_ratio_mean', 'rank_mean', 'reward_mean', 'reward_std', 'final_score_mean',
                'opponent_score_mean')


def read_jsonl(path: str) -> List[Dict]:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def learning_curve(exp_dir: str) -> List[Dict]:
    """One point per evaluation: env steps, training wall time up to it (collection + learning from learner.jsonl,
    evaluations excluded), and the evaluator's figures. A resumed run evaluates again where it resumed: only the
    first report at each env step counts."""
    iterations = read_jsonl(os.path.join(exp_dir, 'learner.jsonl')) \
        if os.path.isfile(os.path.join(exp_dir, 'learner.jsonl')) else []
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
    """A run's resumable state in RUN_STATE/<run tag>/: the latest checkpoint (latest.pth.tar), the logs and a league
    run's snapshots. While the run trains, a thread copies them every SYNC_EVERY_S seconds, and once more at the
    end."""

    def __init__(self, run_tag: str, exp_dir: str) -> None:
        self.folder = os.path.join(RUN_STATE, run_tag)
        self.checkpoint = os.path.join(self.folder, LATEST)
        self.exp_dir = exp_dir
        self._copied: Optional[str] = None
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def restore(self) -> Optional[str]:
        """Put the kept logs back into the experiment folder; returns the checkpoint to resume from or None."""
        if not os.path.isfile(self.checkpoint):
            return None
        # checkpoints this machine wrote after the kept one would pass for the resumed run's latest
        shutil.rmtree(os.path.join(self.exp_dir, 'ckpt'), ignore_errors=True)
        os.makedirs(self.exp_dir, exist_ok=True)
        for name in LOGS:
            if os.path.exists(os.path.join(self.folder, name)):
                copy_atomically(os.path.join(self.folder, name), os.path.join(self.exp_dir, name))
        copy_new_files(os.path.join(self.folder, LEAGUE), os.path.join(self.exp_dir, LEAGUE))
        return self.checkpoint

    def sync(self) -> None:
        """Copy the experiment folder's latest checkpoint and logs here, if there is a newer checkpoint."""
        latest = latest_checkpoint(self.exp_dir)
        if latest is None or latest == self._copied:
            return
        os.makedirs(self.folder, exist_ok=True)
        for name in LOGS:  # a log not written yet (no PPO iteration before the first checkpoint) is not copied
            if os.path.exists(os.path.join(self.exp_dir, name)):
                copy_atomically(os.path.join(self.exp_dir, name), os.path.join(self.folder, name))
        copy_new_files(os.path.join(self.exp_dir, LEAGUE), os.path.join(self.folder, LEAGUE))
        copy_atomically(latest, self.checkpoint)  # last: a checkpoint never runs ahead of its logs
        self._copied = latest

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


def train_run(main_config: Dict, create_config: Dict, run_tag: str, seed: int, env_steps: int, eval_every: int,
              eval_games: int, resume: bool) -> Tuple[Dict, bool]:
    """Train (``resume``: go on training from RUN_STATE) one run up to ``env_steps``, evaluating every
    ``eval_every`` env steps over ``eval_games`` games. Returns (its curve, last checkpoint and wall time;
    whether it was resumed)."""
    exp_dir = os.path.join(RUNS, run_tag)
    state = RunState(run_tag, exp_dir)
    resume_from = state.restore() if resume else None
    if resume_from is None:
        shutil.rmtree(exp_dir, ignore_errors=True)  # a fresh run: its logs are the curve
        shutil.rmtree(state.folder, ignore_errors=True)
    logging.info(f'run {run_tag} (seed {seed}): ' + (f'resuming from {resume_from}' if resume_from else 'a new run'))
    overrides = [f'exp_name={exp_dir!r}', f'policy.eval.evaluator.eval_freq={eval_every}',
                 f'env.n_evaluator_episode={eval_games}']
    start = time.time()
    with state:
        train(apply_overrides(main_config, overrides), create_config, seed=seed, max_env_step=env_steps,
              resume=resume_from, progress=False)
    # a run resumed at its last env step writes no checkpoint: its latest is the one it resumed from
    run = dict(curve=learning_curve(exp_dir), checkpoint=latest_checkpoint(exp_dir) or resume_from,
               session_wall_time_s=time.time() - start)
    return run, resume_from is not None


def run_name(tag: str, k: int, several: bool) -> str:
    """The name of run K of ``tag``: <tag>_s<K> where the config runs with several run seeds, else <tag>."""
    return f'{tag}_s{k}' if several else tag


def results_path(tag: str) -> str:
    """Where the results of ``tag`` are written: RESULTS/learning_<tag>.json."""
    return os.path.join(RESULTS, f'learning_{tag}.json')
