"""DI-engine's stock PPO on our env (envs/ding_adapter.py, pipeline/ding_baseline.py, benchmarks/ding_baseline.py)
on short games: the adapter's formats, the config checks, a MAPPO run trained and played on the final games by the
benchmark, an independent-PPO run trained and resumed by gobigger-ding."""
import glob
import json
import logging
import os
import sys

import numpy as np
import pytest
import torch

from ppo_gobigger.config import ConfigError, load_config_file
from ppo_gobigger.envs.actions import ACTION_NUM
from ppo_gobigger.envs.ding_adapter import AGENT_STATE_DIM, GoBiggerDingEnv, flat_features, model_shapes
from ppo_gobigger.envs.features import OBS_SHAPES
from ppo_gobigger.pipeline.ding_baseline import apply_stock_overrides, stock_configs
from test_training import ROOT

sys.path.insert(0, os.path.join(ROOT, 'benchmarks'))  # the benchmark scripts import each other as siblings
import ding_baseline  # noqa: E402
import learning_report  # noqa: E402
import learning_rows  # noqa: E402
from test_learning_benchmark import point_at  # noqa: E402

MAPPO = os.path.join(ROOT, 'config', 'ding_mappo_config.py')
IPPO = os.path.join(ROOT, 'config', 'ding_ppo_config.py')
# 25 env steps a game, one process, one game per collector env and collect, 2 epochs of 2 minibatches (4 iterations
# a collect), an evaluation and a checkpoint every collect
TINY = ['env.custom_cfg.frame_limit=200', 'env.manager.type=base', 'env.collector_env_num=2',
        'env.evaluator_env_num=1', 'env.n_evaluator_episode=1', 'policy.collect.n_sample=50',
        'policy.learn.batch_size=25', 'policy.learn.epoch_per_collect=2', 'policy.eval.evaluator.eval_freq=4',
        'policy.learn.learner.hook.save_ckpt_after_iter=4', 'policy.learn.learner.hook.log_show_after_iter=1']


def stock(path, *overrides):
    main_config, create_config = load_config_file(path)
    return apply_stock_overrides(main_config, list(overrides)), create_config


@pytest.mark.parametrize('obs_format', ['mavac', 'vac'])
def test_the_adapter_feeds_our_features_flattened_and_one_team_reward(obs_format):
    env = GoBiggerDingEnv(dict(obs_format=obs_format, custom_cfg={'frame_limit': 40}, action_repeat=4,
                               reward='log_score', team_spirit=0.5))
    inner = GoBiggerDingEnv.__mro__[1](dict(opponent='bot', custom_cfg={'frame_limit': 40}, action_repeat=4,
                                            reward='log_score', team_spirit=0.5))  # GoBiggerEnv on the same game
    for e in (env, inner):
        e.seed(3)
    obs, ours = env.reset(), inner.reset()
    assert env.observation_space.contains(obs)
    agent_state = obs['agent_state'] if obs_format == 'mavac' else obs
    np.testing.assert_array_equal(agent_state, flat_features(ours))
    assert agent_state.shape == (2, AGENT_STATE_DIM) == (2, sum(int(np.prod(s)) for s in OBS_SHAPES.values()))
    if obs_format == 'mavac':  # each player's own features, then every player's
        np.testing.assert_array_equal(obs['global_state'][1], np.concatenate([agent_state[1], agent_state.ravel()]))
        assert obs['action_mask'].shape == (2, ACTION_NUM) and obs['action_mask'].all()
        assert obs['global_state'].shape[1] == model_shapes('mavac', 2)['global_obs_shape']
    total, done = 0.0, False
    while not done:
        timestep, theirs = env.step(np.array([2, 9])), inner.step(np.array([2, 9]))
        assert timestep.reward.shape == (1, ) and timestep.reward[0] == pytest.approx(theirs.reward.mean())
        total, done = total + float(timestep.reward[0]), timestep.done
    assert timestep.info['eval_episode_return'] == pytest.approx(total)
    assert timestep.info['score_ratio'] == theirs.info['score_ratio']  # the same game, the same outcome
    with pytest.raises(ValueError, match="obs_format 'mappo' is not one of"):
        GoBiggerDingEnv(dict(obs_format='mappo'))
    with pytest.raises(ValueError, match="opponent 'self'"):
        GoBiggerDingEnv(dict(opponent='self'))


def test_stock_configs_fill_the_model_sizes_and_refuse_what_ding_would_ignore():
    cfg, _ = stock_configs(*stock(MAPPO))
    assert cfg.policy.model == dict(action_space='discrete', **model_shapes('mavac', 2))
    assert cfg.policy.model.global_obs_shape == 3 * AGENT_STATE_DIM
    cfg, _ = stock_configs(*stock(IPPO))
    assert cfg.policy.model == dict(action_space='discrete', obs_shape=AGENT_STATE_DIM, action_shape=ACTION_NUM)
    for overrides, message in [
        (['policy.learn.epochs_per_collect=4'], "unknown config key 'policy.learn.epochs_per_collect'"),
        (['env.obs_format=vac'], "env.obs_format 'vac' with policy.multi_agent=True"),
        (['policy.model.agent_obs_shape=100'], 'policy.model.agent_obs_shape=100, but the env gives 504'),
        (['policy.model.hidden_size=64'], "unknown policy.model keys ['hidden_size'] for DI-engine's MAVAC"),
        (['max_env_steps=10'], "unknown top-level config keys ['max_env_steps']"),
    ]:
        with pytest.raises(ConfigError, match=message.replace('(', r'\(').replace('[', r'\[')):
            stock_configs(*stock(MAPPO, *overrides))


def test_the_benchmark_trains_mappo_and_plays_the_final_games(tmp_path, monkeypatch, capsys):
    """benchmarks/ding_baseline.py on short games: DI-engine's serial pipeline trains (the loss moves, checkpoints are
    written), the latest checkpoint plays the final games, the row has learning.py's fields, the report prints it;
    --resume plays nothing again."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    point_at(tmp_path, monkeypatch)
    root = logging.getLogger()  # main() sets up the root logger: put it back for the tests that follow
    monkeypatch.setattr(root, 'handlers', list(root.handlers))
    monkeypatch.setattr(root, 'level', root.level)
    argv = ['ding_baseline.py', '--config', MAPPO, '--env-steps', '150', '--final-games', '2', '--tag', 'mappo',
            *(a for item in TINY for a in ('--set', item))]
    monkeypatch.setattr(sys, 'argv', argv)
    threads = torch.get_num_threads()
    ding_baseline.main()
    assert torch.get_num_threads() == threads  # the run's one thread is given back
    with open(tmp_path / 'results' / 'learning_mappo.json') as f:
        result = json.load(f)
    run = result['runs']['mappo']
    assert run['seed'] == 0 and run['env_steps'] == 150 and run['trained_env_steps'] >= 150
    assert run['checkpoint'] == os.path.join('runs', 'mappo', 'ckpt', f'iteration_{run["train_iter"]}.pth.tar')
    events = EventAccumulator(glob.glob(str(tmp_path / 'runs' / 'mappo' / 'log' / 'serial' / 'events.*'))[0])
    events.Reload()
    loss = [e.value for e in events.Scalars('learner_iter/total_loss_avg')]
    assert len(loss) >= 3 and all(np.isfinite(loss)) and len(set(loss)) > 1, loss
    first, last = (torch.load(tmp_path / 'runs' / 'mappo' / 'ckpt' / name, weights_only=False)['model']
                   for name in ('iteration_0.pth.tar', f'iteration_{run["train_iter"]}.pth.tar'))
    assert any(not torch.equal(first[k], last[k]) for k in first)
    row = run['final']
    assert row['games'] == 2 and set(learning_rows.SUMMARY_FIELDS) <= set(row)
    seeds = [g['game_seed'] for g in row['game_outcomes']]
    assert seeds == [2 * 1000 * 1_000_000 + 1, 2 * (1000 * 1_000_000 + 1) + 1]  # env seed 1000, evaluator games
    assert result['settings']['final_seed'] == 1000 and result['summary']['mean_win_rate'] == row['win_rate']
    assert 'mappo (seed 0, 150 env steps)' in capsys.readouterr().out
    learning_report.main([str(tmp_path / 'results' / 'learning_mappo.json')])
    assert 'mappo (seed 0, 150 env steps)' in capsys.readouterr().out

    monkeypatch.setattr(sys, 'argv', argv + ['--resume'])  # trained and played: nothing to do again
    monkeypatch.setattr(ding_baseline, 'play_stock', None)
    monkeypatch.setattr(ding_baseline, 'train_stock', None)
    ding_baseline.main()
    with open(tmp_path / 'results' / 'learning_mappo.json') as f:
        assert json.load(f)['runs']['mappo'] == run


def test_gobigger_ding_trains_independent_ppo_and_resumes(tmp_path, monkeypatch, capsys):
    """`gobigger-ding --config config/ding_ppo_config.py`: VAC shared by the players, trained by DI-engine's serial
    pipeline; --resume goes on from the latest checkpoint to the larger --max-env-step."""
    from ppo_gobigger.cli import ding_main

    monkeypatch.chdir(tmp_path)
    root = logging.getLogger()
    monkeypatch.setattr(root, 'handlers', list(root.handlers))
    argv = ['--config', IPPO, '--set', 'exp_name=ippo', *(a for item in TINY for a in ('--set', item))]
    assert ding_main(argv + ['--max-env-step', '100']) == 0
    first = torch.load(tmp_path / 'ippo' / 'ckpt' / 'iteration_8.pth.tar', weights_only=False)
    assert first['last_step'] == 100 and 'checkpoints: ippo/ckpt (latest: ippo/ckpt/iteration_8.pth.tar)' in \
        capsys.readouterr().out
    assert ding_main(argv + ['--max-env-step', '150', '--resume']) == 0
    resumed = torch.load(tmp_path / 'ippo' / 'ckpt' / 'iteration_12.pth.tar', weights_only=False)
    assert resumed['last_step'] == 150 and resumed['last_iter'] == 12  # one more collect and its 4 iterations
    assert any(not torch.equal(first['model'][k], resumed['model'][k]) for k in first['model'])
    assert ding_main(argv + ['--pipeline', 'middleware']) == 2
    assert 'is DI-engine\'s stock PPO, run by its serial pipeline' in capsys.readouterr().err
