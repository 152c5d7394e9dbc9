"""SIGINT (Ctrl+C, to the whole process group) and SIGTERM during a real training run: a checkpoint within
10 s, every env process gone, a non-zero exit and a message saying where the checkpoint is. A signal repeated
while the run stops (``timeout make train`` sends SIGTERM twice: timeout to the group, make to its child) changes
nothing."""
import collections
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from ppo_gobigger.config import ConfigError
from ppo_gobigger.pipeline.learn.checkpoint import load_checkpoint
from test_training import ROOT, SMALL, small_config


def _processes_mentioning(text):
    found = []
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                if text.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


@pytest.mark.parametrize('signum, whole_group, repeats', [
    (signal.SIGINT, True, 1), (signal.SIGTERM, False, 1), (signal.SIGTERM, True, 3)])
def test_signal_checkpoints_and_stops_everything(tmp_path, signum, whole_group, repeats):
    exp_dir = tmp_path / 'run'
    args = [sys.executable, 'entry/train_gobigger.py', '--exp-name', str(exp_dir), '--no-progress']
    for item in SMALL + ['max_env_step=10000000', 'policy.eval.evaluator.eval_freq=10000000']:
        args += ['--set', item]
    shm_before = set(os.listdir('/dev/shm'))
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    log = exp_dir / 'learner.jsonl'
    deadline = time.time() + 180
    while not (log.exists() and log.read_text().count('\n') >= 2):
        assert proc.poll() is None and time.time() < deadline, 'training did not get going'
        time.sleep(0.2)
    assert len(_processes_mentioning(str(exp_dir))) >= 1 + 2 + 2  # trainer, 2 collector and 2 evaluator envs
    sent = time.time()
    for _ in range(repeats):
        if whole_group:
            os.killpg(proc.pid, signum)  # what Ctrl+C in a terminal does
        else:
            proc.send_signal(signum)
        time.sleep(0.05)
    _, stderr = proc.communicate(timeout=30)
    took = time.time() - sent
    assert took < 10, f'took {took:.1f}s to stop'
    assert proc.returncode == 128 + signum, stderr[-3000:]
    match = re.search(r'Checkpoint: (\S+)', stderr)
    assert match, stderr[-2000:]
    ckpt = load_checkpoint(match.group(1))
    assert ckpt['train_iter'] >= 2 * 4 and ckpt['envstep'] >= 512  # at least the two iterations logged
    assert f'--resume {match.group(1)}' in stderr
    time.sleep(0.5)
    assert _processes_mentioning(str(exp_dir)) == []  # no orphans
    assert set(os.listdir('/dev/shm')) <= shm_before  # no leaked shared memory
    assert not [f for f in os.listdir(exp_dir / 'ckpt') if f.startswith('.tmp')]


def test_unwritable_folder_and_full_disk_are_refused_before_anything_runs(tmp_path, monkeypatch):
    from ppo_gobigger import train
    blocker = tmp_path / 'a_file'
    blocker.write_text('')
    main_config, create_config = small_config(blocker / 'exp')
    with pytest.raises(ConfigError, match='not writable'):
        train(main_config, create_config)

    import shutil
    usage = collections.namedtuple('usage', 'total used free')
    monkeypatch.setattr(shutil, 'disk_usage', lambda path: usage(10 * 2**30, 10 * 2**30 - 2**20, 2**20))
    main_config, create_config = small_config(tmp_path / 'exp')
    with pytest.raises(ConfigError, match='only 1 MB free'):
        train(main_config, create_config)
    assert not (tmp_path / 'exp' / 'total_config.json').exists()


def test_the_guard_takes_one_stop_and_ignores_its_repeats():
    """In-process: the first signal raises (or waits for the critical block); repeats while the run stops are
    ignored instead of falling through to the default action, which would kill it before its checkpoint."""
    from ppo_gobigger.pipeline.interrupt import InterruptGuard, TrainingInterrupted
    before = signal.getsignal(signal.SIGTERM)
    with InterruptGuard() as guard:
        with pytest.raises(TrainingInterrupted) as stop:
            with guard.critical():
                os.kill(os.getpid(), signal.SIGTERM)
                os.kill(os.getpid(), signal.SIGINT)  # held too: the block ends before the stop is raised
                finished = True
        assert finished and stop.value.signum == signal.SIGTERM and stop.value.exit_code == 143
        os.kill(os.getpid(), signal.SIGTERM)  # while saving: ignored, and we are still alive to assert it
        os.kill(os.getpid(), signal.SIGINT)
    assert signal.getsignal(signal.SIGTERM) is before  # the guard put the previous handlers back
