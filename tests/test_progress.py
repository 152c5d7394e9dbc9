"""Every long phase shows how far it is: a bar on a terminal, log lines at least every LOG_EVERY_S seconds
otherwise (pipeline/progress.py): the kickstart's demonstration games and imitation epochs, each evaluation."""
import io
import logging
import sys

import pytest

from ppo_gobigger.config import compile_config
from ppo_gobigger.pipeline import progress
from ppo_gobigger.pipeline.build import build_policy
from ppo_gobigger.pipeline.learn.pretrain import pretrain
from ppo_gobigger.pipeline.play.env_manager import build_env_managers, close_env_manager
from ppo_gobigger.pipeline.play.evaluator import Evaluator
from test_training import small_config

# the kickstart of test_training on shorter games: 2 envs x one whole 20-step game, in the training process
KICKSTART = ['env.custom_cfg.frame_limit=40', 'env.manager.type=base', 'pretrain.env_steps=20', 'pretrain.epochs=2']


def kickstart_then_evaluate(exp_dir, show):
    cfg, create = compile_config(*small_config(exp_dir, *KICKSTART))
    policy, _ = build_policy(cfg, create)
    pretrain(policy, cfg, create, progress=show)
    _, env = build_env_managers(cfg, create, collect=False)
    try:
        env.launch()
        Evaluator(env, policy.eval_mode, cfg.env.n_evaluator_episode, cfg.seed, progress=show).eval()
    finally:
        close_env_manager(env)


@pytest.fixture
def log_every_update(monkeypatch):
    monkeypatch.setattr(progress, 'LOG_EVERY_S', 0.0)  # 30 s in a real run


def test_log_lines_without_a_terminal(tmp_path, caplog, log_every_update):
    caplog.set_level(logging.INFO)
    kickstart_then_evaluate(tmp_path, show=False)
    lines = caplog.messages
    assert any(line.startswith('demonstrations: 40/20 steps, 2 games (') for line in lines)
    assert any(line.startswith('imitation: 2/2 updates, epoch 2/2 loss ') for line in lines)
    assert [line.split(':')[0] for line in lines if line.startswith('imitation epoch')] == \
        ['imitation epoch 1/2', 'imitation epoch 2/2']
    assert any(line.startswith('evaluation: 2/2 games, 40 env steps (') for line in lines)


def test_bars_on_a_terminal(tmp_path, caplog, monkeypatch, log_every_update):
    caplog.set_level(logging.INFO)
    # every update redraws: a phase shorter than tqdm's 0.1 s would otherwise end (and its bar vanish) undrawn
    monkeypatch.setattr(progress, 'REDRAW_EVERY_S', 0.0)
    err = io.StringIO()  # where tqdm draws; the bar is asked for explicitly, as --progress on a terminal would
    monkeypatch.setattr(sys, 'stderr', err)
    kickstart_then_evaluate(tmp_path, show=True)
    bars = err.getvalue()
    assert 'demonstrations: ' in bars and ', 2 games]' in bars  # 40 of 20 steps: past its total, tqdm shows the count alone
    assert 'imitation: 100%' in bars and '2/2 [' in bars and 'epoch 2/2 loss' in bars
    assert 'evaluation: ' in bars and ' env steps]' in bars
    assert [r.getMessage() for r in caplog.records if r.module == 'progress'] == []  # a bar, no progress lines
