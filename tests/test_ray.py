"""The Ray backend on a local cluster of 2 CPUs: 2 rollout worker actors and an evaluator actor train a few
iterations; a worker killed mid-run is replaced; Ctrl+C checkpoints and ends every actor; bad settings fail early."""
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest
import ray

from ppo_gobigger.config import ConfigError, compile_config
from ppo_gobigger.pipeline.learn.checkpoint import load_checkpoint
from test_training import BOTS_CONFIG, ROOT, small_config

# 2 workers of 1 collector env each; 128 env steps per iteration (64 per worker), 2 epochs of 2 minibatches
RAY_SMALL = [
    'distributed.backend=ray',
    'distributed.num_workers=2',
    'distributed.num_cpus=2',
    'env.collector_env_num=2',
    'env.evaluator_env_num=1',
    'env.n_evaluator_episode=1',
    'policy.collect.n_sample=128',
    'policy.learn.batch_size=64',
    'policy.eval.evaluator.eval_freq=100000',
]
ACTOR_TITLES = ('ray::RolloutWorker', 'ray::EvaluatorActor', 'ray::rollout_worker', 'ray::evaluator')


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def _lines(path):
    return path.read_text().count('\n') if path.exists() else 0


def _actor_processes():
    found = []
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                if f.read().decode(errors='replace').startswith(ACTOR_TITLES):
                    found.append(int(pid))
        except OSError:
            pass
    return found


def test_ctrl_c_checkpoints_and_ends_every_actor(tmp_path):
    """The entry with --backend ray starts its own local cluster; SIGINT to its process group, as a terminal does."""
    exp_dir = tmp_path / 'run'
    args = [sys.executable, 'entry/train_gobigger.py', '--config', BOTS_CONFIG, '--backend', 'ray', '--num-workers',
            '2', '--exp-name', str(exp_dir), '--no-progress']
    for item in RAY_SMALL[3:] + ['env.custom_cfg.frame_limit=120', 'distributed.num_cpus=2',
                                 'max_env_step=10000000', 'policy.eval.evaluator.eval_freq=10000000']:
        args += ['--set', item]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    deadline = time.time() + 120
    while _lines(exp_dir / 'learner.jsonl') < 2:
        assert proc.poll() is None and time.time() < deadline, 'training did not get going'
        time.sleep(0.2)
    assert len(_actor_processes()) >= 3  # 2 rollout workers and the evaluator
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr[-3000:]
    match = re.search(r'Checkpoint: (\S+)', stderr)
    assert match, stderr[-3000:]
    ckpt = load_checkpoint(match.group(1))
    assert ckpt['envstep'] >= 2 * 128 and len(ckpt['collector_episodes']) == 2
    time.sleep(1)
    assert _actor_processes() == []


@pytest.fixture(scope='module')
def cluster():
    ray.init(num_cpus=2, include_dashboard=False)  # train() joins it, and leaves it running
    yield
    ray.shutdown()


def test_a_killed_worker_is_replaced_and_training_finishes(cluster, tmp_path):
    from ppo_gobigger import evaluate, train
    exp_dir = tmp_path / 'exp'
    main_config, create_config = small_config(exp_dir, *RAY_SMALL, 'max_env_step=768')
    log = exp_dir / 'learner.jsonl'
    killed = []

    def kill_worker_1():
        deadline = time.time() + 120
        while _lines(log) < 2 and time.time() < deadline:
            time.sleep(0.05)
        name = next(n['name'] for n in ray.util.list_named_actors(all_namespaces=True)
                    if n['name'].startswith('rollout_worker_1.0-'))
        ray.kill(ray.get_actor(name))
        killed.append(name)

    killer = threading.Thread(target=kill_worker_1, daemon=True)
    killer.start()
    _, report = train(main_config, create_config, seed=0, progress=False)
    killer.join(timeout=10)
    assert killed, 'the worker was not killed'

    rows = read_jsonl(log)
    steps = [b['envstep'] - a['envstep'] for a, b in zip([{'envstep': 0}] + rows, rows)]
    # one iteration lost the killed worker's rollout (64 env steps); the others have both, the new worker's too
    assert sorted(steps)[0] == 64 and set(steps[steps.index(64) + 1:]) == {128}, steps
    assert rows[-1]['envstep'] >= 768 and rows[-1]['worker_restarts'] == 1 and rows[-1]['dropped_rollouts'] == 1
    assert rows[-1]['episode_count'] > 0 and rows[-1]['worker_sps'] > 0
    assert [r['collector_envstep'] for r in read_jsonl(exp_dir / 'evaluator.jsonl')] == [0, rows[-1]['envstep']]
    ckpt_path = exp_dir / 'ckpt' / f'iteration_{rows[-1]["train_iter"]}.pth.tar'
    ckpt = load_checkpoint(str(ckpt_path))
    assert ckpt['envstep'] == rows[-1]['envstep'] and len(ckpt['collector_episodes']) == 2
    # what the driver sends the workers at each iteration: the model's parameters and buffers
    assert rows[-1]['weights_bytes'] == sum(v.numel() * v.element_size() for v in ckpt['model'].values())
    again = evaluate(str(ckpt_path), episodes=1)  # the checkpoint plays in a local evaluation: the same game
    assert again['reward_mean'] == pytest.approx(report['reward_mean'])
    assert not [n for n in ray.util.list_named_actors(all_namespaces=True)], 'actors left behind'


@pytest.mark.parametrize('override, message', [
    ('distributed.backend="spark"', "unknown distributed.backend 'spark': choose one of local, ray"),
    ('distributed.num_workers=3', r'distributed.num_workers \(3\) must be between 1 and env.collector_env_num \(2\)'),
    ('distributed.num_workers=0', r'distributed.num_workers \(0\) must be between 1'),
    ('distributed.worker_cpus=-1.0', r'distributed.worker_cpus must be >= 0, got -1.0'),
])
def test_bad_settings_name_the_value(override, message):
    main_config, create_config = small_config('unused', *RAY_SMALL, override)
    with pytest.raises(ConfigError, match=message):
        compile_config(main_config, create_config)


def test_without_ray_installed_the_error_names_the_fix(monkeypatch):
    import importlib.util
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, 'find_spec', lambda name, *a: None if name == 'ray' else find_spec(name, *a))
    main_config, create_config = small_config('unused', *RAY_SMALL)
    with pytest.raises(ConfigError, match=r"needs Ray.*pip install -e '\.\[ray\]'"):
        compile_config(main_config, create_config)


def test_the_flags_reach_the_config(tmp_path):
    def train_with_ray(*args):
        return subprocess.run([sys.executable, 'entry/train_gobigger.py', '--exp-name', str(tmp_path / 'x'),
                               '--backend', 'ray', '--ray-address', 'auto', *args],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)

    out = train_with_ray('--config', BOTS_CONFIG, '--num-workers', '9')
    assert out.returncode == 2
    assert 'distributed.num_workers (9) must be between 1 and env.collector_env_num (8)' in out.stderr
    out = train_with_ray()  # the default config's league plays the other teams in the trainer process
    assert out.returncode == 2 and "env.opponent 'league' runs with distributed.backend 'local'" in out.stderr
    assert not (tmp_path / 'x').exists()
