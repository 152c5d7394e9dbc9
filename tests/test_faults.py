"""Faults injected into real training runs on small settings: an env process killed, an env that hangs past its
step timeout, an exception inside the game's step, a NaN reward. Training goes on; the env is restarted."""
import json
import logging

import pytest

from test_training import small_config

FAULTY = {'env': {'type': 'gobigger_ppo_faulty', 'import_names': ['faulty_env']}}


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
    main_config, _ = small_config(exp_dir, 'max_env_step=512', 'env.manager.step_timeout=5')
    with caplog.at_level(logging.INFO):
        _, report = train(main_config, FAULTY, seed=0)
    assert (tmp_path / 'claimed').exists()  # the fault did happen
    log = read_jsonl(exp_dir / 'learner.jsonl')
    assert [r['envstep'] for r in log] == [256, 512]  # training went on to the end
    reports = read_jsonl(exp_dir / 'evaluator.jsonl')
    assert [r['episode_count'] for r in reports] == [2, 2]  # evaluations are complete despite the fault
    messages = caplog.text
    if fault in ('kill', 'hang'):
        assert 'starting its process again' in messages
    if fault == 'nan':
        assert log[-1]['skipped_updates'] >= 1 and 'non-finite' in messages
    elif fault != 'kill' or not in_evaluator:
        assert 'abnormal step' in messages
    assert log[-1]['train_iter'] == (4 if fault == 'nan' else 8)  # the NaN rollout's updates were skipped
    assert (exp_dir / 'ckpt' / f'iteration_{log[-1]["train_iter"]}.pth.tar').exists()
