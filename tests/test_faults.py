"""Faults injected into real training runs on small settings: an env process killed, an env that hangs past its
step timeout, an exception inside the game's step, a NaN reward. Training goes on; the env is restarted."""
import json
import logging

import pytest

from test_training import small_config

FAULTY = {'env': {'type': 'gobigger_faulty', 'import_names': ['faulty_env']}}
SHORT = [  # on test_training's small settings: 2 rollouts of 128 env steps, an evaluation before and after them
    'env.custom_cfg.frame_limit=60',  # 30 env steps a game: each env reaches faulty_env.FAULT_STEP (15) in its first
    'policy.collect.n_sample=128',  # one minibatch of 128, 2 epochs: 2 updates a rollout
    'policy.eval.evaluator.eval_freq=256',
    'max_env_step=256',
    'env.manager.step_timeout=5',
]


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


@pytest.mark.parametrize('fault, in_evaluator', [
    ('kill', False),
    ('hang', False),
    ('raise', False),
    ('kill', True),
    ('nan', False),
])
def test_training_survives_the_fault(fault, in_evaluator, tmp_path, monkeypatch, caplog):
    from ppo_gobigger import train
    monkeypatch.setenv('PPO_GOBIGGER_FAULT', fault)
    monkeypatch.setenv('PPO_GOBIGGER_FAULT_DIR', str(tmp_path))
    monkeypatch.setenv('PPO_GOBIGGER_FAULT_EVAL', '1' if in_evaluator else '0')
    exp_dir = tmp_path / 'exp'
    main_config, _ = small_config(exp_dir, *SHORT)
    with caplog.at_level(logging.INFO):
        _, report = train(main_config, FAULTY, seed=0)
    assert (tmp_path / 'claimed').exists()  # the fault did happen
    log = read_jsonl(exp_dir / 'learner.jsonl')
    assert [r['envstep'] for r in log] == [128, 256]  # training went on to the end
    reports = read_jsonl(exp_dir / 'evaluator.jsonl')
    assert [r['episode_count'] for r in reports] == [2, 2]  # evaluations are complete despite the fault
    messages = caplog.text
    if fault in ('kill', 'hang'):
        assert 'starting its process again' in messages
    if fault == 'nan':
        assert 'non-finite' in messages
    elif fault != 'kill' or not in_evaluator:
        assert 'abnormal step' in messages
    # the NaN is in the first rollout (at env step FAULT_STEP of a collector env): that rollout is dropped, counted
    # as one skipped update, and the second rollout's 2 updates are made; no other fault skips an update
    assert [(r['train_iter'], r['skipped_updates']) for r in log] == \
        ([(0, 1), (2, 1)] if fault == 'nan' else [(2, 0), (4, 0)])
    assert (exp_dir / 'ckpt' / f'iteration_{log[-1]["train_iter"]}.pth.tar').exists()
