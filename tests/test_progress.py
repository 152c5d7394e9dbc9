"""Every long phase shows how far it is: a bar on a terminal, log lines at least every LOG_EVERY_S seconds
otherwise (pipeline/progress.py), here an evaluation's."""
import io
import logging
import sys

import pytest

from ppo_gobigger.config import compile_config
from ppo_gobigger.pipeline import progress
from ppo_gobigger.pipeline.build import build_policy
from ppo_gobigger.pipeline.play.env_manager import build_env_managers, close_env_manager
from ppo_gobigger.pipeline.play.evaluator import Evaluator
from test_training import small_config

# test_training's settings on shorter games: 2 envs x one whole 20-step game each, in the process
SHORT = ['env.custom_cfg.frame_limit=40', 'env.manager.type=base']


def evaluate_once(exp_dir, show):
    cfg, create = compile_config(*small_config(exp_dir, *SHORT))
    policy, _ = build_policy(cfg, create)
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
    evaluate_once(tmp_path, show=False)
    lines = caplog.messages
    assert any(line.startswith('evaluation: 2/2 games, 40 env steps (') for line in lines)


def test_bars_on_a_terminal(tmp_path, caplog, monkeypatch, log_every_update):
    caplog.set_level(logging.INFO)
    # every update redraws: a phase shorter than tqdm's 0.1 s would otherwise end (and its bar vanish) undrawn
    monkeypatch.setattr(progress, 'REDRAW_EVERY_S', 0.0)
    err = io.StringIO()  # where tqdm draws; the bar is asked for explicitly, as --progress on a terminal would
    monkeypatch.setattr(sys, 'stderr', err)
    evaluate_once(tmp_path, show=True)
    bars = err.getvalue()
    assert 'evaluation: ' in bars and ' env steps]' in bars
    assert [r.getMessage() for r in caplog.records if r.module == 'progress'] == []  # a bar, no progress lines
