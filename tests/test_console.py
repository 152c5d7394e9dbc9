"""A quiet, talkative console: other packages' import-time notices never reach it, and our own log line is the
first thing on it (ppo_gobigger/quiet.py)."""
import os
import subprocess
import sys

from test_training import ROOT

from ppo_gobigger.quiet import passive_openmp_waits

# what gym, treevalue, DI-engine, numexpr and pygame print when they are imported, unless silenced
NOTICES = ('Gym has been unmaintained', '_register_pytree_node', 'FutureWarning', 'install numba',
           'install pyecharts', 'pip install transformers', 'NumExpr defaulting', 'Hello from the pygame community')
# the shortest run of the entry: one evaluation game of 4 env steps, in the training process, then stop
TINY = ['--max-env-step', '0', '--set', 'env.custom_cfg.frame_limit=8', '--set', 'env.action_repeat=1',
        '--set', 'env.manager.type=base',
        '--set', 'env.collector_env_num=1', '--set', 'env.evaluator_env_num=1', '--set', 'env.n_evaluator_episode=1',
        '--set', 'policy.collect.n_sample=64', '--set', 'policy.learn.batch_size=64',
        '--set', 'policy.model.hidden_size=16']


def test_the_first_line_a_user_reads_is_ours(tmp_path):
    out = subprocess.run([sys.executable, 'entry/train_gobigger.py', '--exp-name', str(tmp_path / 'run'), *TINY],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert [notice for notice in NOTICES if notice in out.stdout + out.stderr] == []
    first = out.stderr.splitlines()[0]
    assert ('INFO training st_t2p2 against a league (bot levels [2, 3] and snapshots every 10 iterations, PFSP '
            'draws, self-play 0.5, learning from every team of its self-play games), evaluated against level-3 bots, '
            '0 env steps;') in first and str(tmp_path / 'run') in first  # the default config's league


def test_torch_threads_wait_passively_unless_the_user_chose(monkeypatch):
    monkeypatch.delenv('OMP_WAIT_POLICY', raising=False)
    passive_openmp_waits()
    assert os.environ['OMP_WAIT_POLICY'] == 'PASSIVE'
    monkeypatch.setenv('OMP_WAIT_POLICY', 'ACTIVE')
    passive_openmp_waits()
    assert os.environ['OMP_WAIT_POLICY'] == 'ACTIVE'
