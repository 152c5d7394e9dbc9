"""Our env and policy under DI-engine's own entry (serial_pipeline_onpolicy) and its workers' formats; short games."""
import glob
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from ppo_gobigger.config import apply_overrides, compile_config, load_config_file
from ppo_gobigger.envs.gobigger_env import GoBiggerEnv
from ppo_gobigger.pipeline.build import build_model
from ppo_gobigger.policy.ding_modes import SAMPLE_KEYS, GoBiggerPPOCommandModePolicy
from test_training import BOTS_CONFIG

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# 25 env steps a game (100 GoBigger steps, the default's 4 per decision), one process
SHORT = ['env.custom_cfg.frame_limit=200', 'env.manager.type=base', 'policy.model.hidden_size=32']
# one game per collector env and iteration, two iterations' passes of two minibatches, one evaluation game
TINY_RUN = ['env.collector_env_num=2', 'env.evaluator_env_num=1', 'env.n_evaluator_episode=1',
            'policy.collect.n_sample=50', 'policy.learn.batch_size=25', 'policy.learn.epoch_per_collect=2',
            'policy.eval.evaluator.eval_freq=1000']


def default_config(*extra):
    main_config, create_config = load_config_file(BOTS_CONFIG)
    return apply_overrides(main_config, SHORT + list(extra)), create_config


def test_samples_keep_their_trajectorys_bootstrap_and_cut():
    """Two trajectories of one game as DI-engine's collector cuts them: the first one's last next_value is the
    critic's value of the state the second starts from, and learn takes the samples as DI-engine hands them over."""
    from ding.worker.collector.base_serial_collector import to_tensor_transitions

    cfg, _ = compile_config(
        default_config('env.collector_env_num=1', 'policy.collect.n_sample=6', 'policy.learn.batch_size=3')[0])
    torch.manual_seed(0)
    policy = GoBiggerPPOCommandModePolicy(cfg.policy, model=build_model(cfg), enable_field=['learn', 'collect'])
    env = GoBiggerEnv(cfg.env)
    env.seed(0)
    obs, transitions = env.reset(), []
    for _ in range(6):
        out = policy.collect_mode.forward({0: obs})[0]
        timestep = env.step(out['action'])
        transitions.append(policy.collect_mode.process_transition(obs, out, timestep))
        obs = timestep.obs
    env.close()
    samples = [s for part in (transitions[:3], transitions[3:])
               for s in policy.collect_mode.get_train_sample(to_tensor_transitions(part))]
    assert len(samples) == 6 and set(samples[0]) == {'obs', *SAMPLE_KEYS}
    assert [s['cut'] for s in samples] == [False, False, True, False, False, True]
    assert not any(s['done'] for s in samples)
    for t in range(5):  # within and across the cut: V(s_{t+1}) as the critic gave it when s_{t+1} was played
        np.testing.assert_allclose(samples[t]['next_value'], samples[t + 1]['value'], rtol=1e-5, atol=1e-6)
    assert samples[0]['obs']['clone_mask'].dtype == np.bool_  # the env's dtypes, whatever the worker made of them
    before = [p.detach().clone() for p in policy._model.parameters()]
    stats = policy.learn_mode.forward(samples)
    assert stats['update_count'] == 2 * cfg.policy.learn.epoch_per_collect and np.isfinite(stats['total_loss'])
    assert any(not torch.equal(a, b) for a, b in zip(before, policy._model.parameters()))


def test_serial_pipeline_onpolicy_runs_our_vs_bots_config_file_as_it_is(tmp_path, monkeypatch):
    """DI-engine's usual entry, ding.entry.serial_pipeline_onpolicy, on config/gobigger_ppo_vs_bots_config.py's pair as
    the file gives it (only shortened games and rollouts, as every test here): it trains, the loss moves, it writes
    checkpoints."""
    from ding.entry import serial_pipeline_onpolicy
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    monkeypatch.chdir(tmp_path)  # DI-engine writes its experiment folder (and runs git) in the working directory
    main_config, create_config = default_config(*TINY_RUN, "exp_name='ding_run'")
    main_config['policy']['learn']['learner'] = dict(hook=dict(log_show_after_iter=1))  # DI-engine's learner key
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # DI-engine's entry leaves torch's threads as they are: many fight the envs
    try:
        serial_pipeline_onpolicy((main_config, create_config), seed=0, max_env_step=150)
    finally:
        torch.set_num_threads(threads)
    ckpts = sorted(os.path.basename(p) for p in glob.glob('ding_run/ckpt/*.pth.tar'))
    assert 'ckpt_best.pth.tar' in ckpts and len(ckpts) >= 3, ckpts
    events = EventAccumulator(glob.glob('ding_run/log/serial/events.out.tfevents.*')[0])
    events.Reload()
    loss = [e.value for e in events.Scalars('learner_iter/total_loss_avg')]
    assert len(loss) >= 3 and all(np.isfinite(loss)) and len(set(loss)) > 1, loss
    first, last = (torch.load(f'ding_run/ckpt/{name}', map_location='cpu', weights_only=False)['model']
                   for name in ('iteration_0.pth.tar', ckpts[-1] if ckpts[-1] != 'iteration_0.pth.tar' else ckpts[-2]))
    assert any(not torch.equal(first[k], last[k]) for k in first)


def test_dingengines_middleware_pipeline_trains_our_policy(tmp_path):
    """gobigger-ding --pipeline middleware: DI-engine 0.5's task with its collector, trainer, evaluator and checkpoint
    middleware (our train_samples in place of its gae_estimator). In a process of its own: importing
    ding.framework.middleware needs protobuf's Python implementation (wandb), chosen before protobuf is imported."""
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS='1')
    argv = ['--pipeline', 'middleware', '--max-env-step', '150', '--set', f'exp_name={str(tmp_path / "mw_run")!r}']
    for item in SHORT + TINY_RUN:
        argv += ['--set', item]
    run = subprocess.run([sys.executable, os.path.join(ROOT, 'entry', 'ding_gobigger.py'), *argv], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    (line, ) = [line for line in run.stdout.splitlines() if line.startswith('total_loss by iteration: ')]
    loss = [float(x) for x in line.split(': ')[1].split()]
    assert len(loss) >= 3 and all(np.isfinite(loss)) and len(set(loss)) > 1, loss  # 50 env steps an iteration
    assert f'checkpoints: {tmp_path / "mw_run" / "ckpt"}' in run.stdout
    ckpts = sorted(os.listdir(tmp_path / 'mw_run' / 'ckpt'))
    assert {'iteration_1.pth.tar', 'iteration_3.pth.tar'} <= set(ckpts), ckpts
    first, last = (torch.load(tmp_path / 'mw_run' / 'ckpt' / name, map_location='cpu', weights_only=False)['model']
                   for name in ('iteration_1.pth.tar', 'iteration_3.pth.tar'))
    assert any(not torch.equal(first[k], last[k]) for k in first)


def test_dingengines_pipelines_refuse_opponents_played_by_policies(tmp_path, monkeypatch, capsys):
    """The default config's league (and self-play) needs our team-play collector: DI-engine's own entry refuses it
    before any env starts, saying why, and so does gobigger-ding."""
    from ding.entry import serial_pipeline_onpolicy

    from ppo_gobigger.cli import DEFAULT_CONFIG, ding_main

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"env.opponent 'league'.*DI-engine's collectors play one policy action"):
        serial_pipeline_onpolicy(load_config_file(DEFAULT_CONFIG), seed=0, max_env_step=100)

    for opponent in ('league', 'self'):
        assert ding_main(['--config', DEFAULT_CONFIG, '--set', f'env.opponent={opponent!r}']) == 2
        assert f"env.opponent '{opponent}'" in capsys.readouterr().err
