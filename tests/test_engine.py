"""The fast GoBigger engine (ppo_gobigger/envs/engine/) plays stock GoBigger 0.2.1's game, bit for bit.

Each game is played once per engine from the same seed, in lockstep, and every step's actions, observation
(every ball's position, radius, score, speed and direction; views; leaderboard), reward, done and eat counters
are compared exactly (fidelity.first_difference walks the nested structures: no tolerance, types included).
Short games keep the suite fast; benchmarks/engine.py --fidelity plays whole ones.
"""
import logging
import os
import random

import numpy as np
import pytest
from gobigger.agents import BotAgent
from gobigger.envs import GoBiggerEnv as StockGame  # GoBigger's own game class (ours is the DI-engine env)

from ppo_gobigger.envs import GoBiggerEnv
from ppo_gobigger.envs import engine as engine_module
from ppo_gobigger.envs.engine import ENGINES, create_bot, create_game, resolve_engine, step_game
from test_env import TEST_ENV
from ppo_gobigger.envs.engine.bot import FastBotAgent
from ppo_gobigger.envs.engine.fidelity import SeededGame, compare_games, first_difference
from ppo_gobigger.envs.engine.server import FastGoBiggerEnv

# a small crowded map: four teams of two on a quarter of st_t2p2's area, with more food and thorns
CROWDED = {'team_num': 4, 'map_width': 32, 'map_height': 32,
           'manager_settings': {'food_manager': {'num_init': 400, 'num_min': 400, 'num_max': 450},
                                'thorns_manager': {'num_init': 8, 'num_min': 8, 'num_max': 10}}}
# st_t4p3 players start at score 1000, below split_score_min: start them bigger so that they split at once
BIG_START = {'manager_settings': {'player_manager': {'ball_settings': {'score_init': 13000}}}}


@pytest.mark.parametrize('preset, controller, seed, steps, custom', [
    ('st_t2p2', 3, 0, 250, None),
    ('st_t2p2', 3, 11, 250, None),
    ('st_t2p2', 2, 1, 150, None),
    ('st_t2p2', 1, 2, 150, None),
    ('st_t2p2', 'random', 3, 250, None),
    ('st_t3p2', 3, 4, 150, None),
    ('st_t3p2', 'random', 5, 150, None),
    ('st_t4p3', 3, 6, 100, BIG_START),
    ('st_t4p3', 'random', 7, 100, BIG_START),
    ('st_t2p2', 'random', 8, 200, CROWDED),
    ('st_t2p2', 3, 9, 200, CROWDED),
])
def test_fast_engine_plays_the_stock_game_step_for_step(preset, controller, seed, steps, custom):
    result = compare_games(preset, seed, controller, steps=steps, custom_cfg=custom)
    assert result['difference'] is None, f'first difference (step, path, stock, fast): {result["difference"]}'
    assert result['steps'] == steps


def test_first_difference_names_the_path_and_both_values():
    a = [{'leaderboard': {0: 1.0, 1: 2.0}}, {0: {'overlap': {'clone': [[1.0, 2.0]]}}}]
    b = [{'leaderboard': {0: 1.0, 1: 2.0}}, {0: {'overlap': {'clone': [[1.0, 2.0000000001]]}}}]
    assert first_difference(a, a) is None
    assert first_difference(a, b) == ("[1][0]['overlap']['clone'][0][1]", 2.0, 2.0000000001)
    assert first_difference([1], [1.0]) == ('[0]', 1, 1.0)  # a type change is a difference too


def test_a_whole_short_game_ends_the_same():
    custom = {'frame_limit': 300}
    result = compare_games('st_t2p2', 21, 3, steps=None, custom_cfg=custom)
    assert result['difference'] is None and result['steps'] == 150
    assert result['leaderboard'][0] == result['leaderboard'][1]


def _play_env(engine, steps=40, **cfg):
    frames = 2 * steps * cfg.get('action_repeat', 1)
    env = GoBiggerEnv(dict(TEST_ENV, preset='st_t2p2', custom_cfg={'frame_limit': frames}, engine=engine, **cfg))
    env.seed(5)
    obs = [env.reset()]
    rng = np.random.default_rng(0)
    rewards, infos = [], []
    while True:
        ts = env.step(rng.integers(16, size=2))
        obs.append(ts.obs)
        rewards.append(ts.reward)
        infos.append(ts.info)
        if ts.done:
            env.close()
            return obs, rewards, infos


@pytest.mark.parametrize('cfg', [{}, {'action_repeat': 4}, {'action_repeat': 3, 'stand_in': 'bot'},
                                 {'action_repeat': 4, 'opponent': 'random'}])
def test_env_features_and_rewards_are_equal_under_both_engines(cfg):
    # with action_repeat > 1 the fast engine builds, between decisions, only the views the bots act on
    stock, fast = _play_env('stock', **cfg), _play_env('fast', **cfg)
    assert len(stock[0]) == len(fast[0]) == 41
    for t, (a, b) in enumerate(zip(stock[0], fast[0])):
        for key in a:
            assert np.array_equal(a[key], b[key]), f'step {t}, feature {key}'
    assert np.array_equal(np.stack(stock[1]), np.stack(fast[1]))
    assert repr(stock[2][-1]) == repr(fast[2][-1])  # the episode's end info: scores, ranks, eats


def _in_own_random(game: SeededGame, play):
    """play() with the game's own state of the global `random` (CloneBall draws from it)."""
    saved = random.getstate()
    random.setstate(game._random_state)
    try:
        return play()
    finally:
        game._random_state = random.getstate()
        random.setstate(saved)


def test_views_of_some_players_are_theirs_in_the_whole_view_and_change_nothing():
    whole, partial = (SeededGame('st_t2p2', 3, 3, 'fast') for _ in range(2))
    for step in range(60):
        observe = None if step % 4 == 3 else {2, 3}
        actions = {pid: bot.step(whole.obs[1][pid]) for pid, bot in whole.bots.items()}
        obs_whole = _in_own_random(whole, lambda: whole.game.step(actions))[0]
        obs_partial = _in_own_random(partial, lambda: step_game(partial.game, actions, observe))[0]
        assert list(obs_partial[1]) == (list(obs_whole[1]) if observe is None else [2, 3])
        assert first_difference(obs_whole[0], obs_partial[0]) is None
        assert first_difference({pid: obs_whole[1][pid] for pid in obs_partial[1]}, obs_partial[1]) is None
        whole.obs = obs_whole


def test_the_env_runs_the_engine_its_config_names():
    env = GoBiggerEnv(dict(TEST_ENV, preset='st_t2p2', custom_cfg={'frame_limit': 20}))
    env.seed(0)
    env.reset()
    assert env._cfg.engine == 'fast' and isinstance(env._game, FastGoBiggerEnv)
    assert all(isinstance(bot, FastBotAgent) for bot in env._opponents._bots.values())
    env.close()
    with pytest.raises(ValueError, match="engine must be one of \\('fast', 'stock'\\); got 'turbo'"):
        GoBiggerEnv(dict(engine='turbo'))


def test_a_fast_game_that_raises_gives_an_abnormal_step_and_a_fresh_game(caplog):
    env = GoBiggerEnv(dict(TEST_ENV, preset='st_t2p2', custom_cfg={'frame_limit': 40}, engine='fast'))
    env.seed(1)
    env.reset()
    broken = env._game

    def failing_frame(*args, **kwargs):
        raise RuntimeError('injected failure inside the fast frame step')
    broken.server.step_one_frame = failing_frame
    with caplog.at_level(logging.WARNING):
        ts = env.step(np.zeros(2, dtype=np.int64))
    assert ts.info['abnormal'] and 'injected failure' in ts.info['error']
    assert 'GoBigger step failed' in caplog.text
    env.reset()
    assert env._game is not broken and isinstance(env._game, FastGoBiggerEnv)
    assert not env.step(np.zeros(2, dtype=np.int64)).info.get('abnormal')
    env.close()


def test_a_fast_game_saves_a_video(tmp_path, monkeypatch):
    cv2 = pytest.importorskip('cv2')
    monkeypatch.setenv('SDL_VIDEODRIVER', 'dummy')
    custom = {'frame_limit': 40, 'playback_settings': {'playback_type': 'by_video', 'by_video': {
        'save_video': True, 'save_dir': str(tmp_path), 'save_name_prefix': 'fast'}}}
    game = create_game('st_t2p2', custom, step_mul=2, engine='fast')
    assert isinstance(game, FastGoBiggerEnv)
    game.reset()
    done = False
    while not done:
        _, _, done, _ = game.step({})
    video = tmp_path / 'fast-all.mp4'
    assert video.is_file()
    capture = cv2.VideoCapture(str(video))
    # GoBigger saves every fps // save_fps = 20 // 10 = 2nd frame: 20 of the game's 40
    assert capture.get(cv2.CAP_PROP_FRAME_COUNT) == 20
    capture.release()


def test_version_guard_falls_back_to_stock_with_one_warning(monkeypatch, caplog):
    monkeypatch.setattr(engine_module, '_warned', False)
    monkeypatch.setattr(engine_module, 'gobigger_version', lambda: '0.2.2')
    with caplog.at_level(logging.WARNING, logger='ppo_gobigger.envs.engine'):
        game = create_game('st_t2p2', {'frame_limit': 10}, 2, 'fast')
        bot = create_bot(0, 3, 'fast')
        assert resolve_engine('fast') == 'stock'
    assert type(game) is StockGame and type(bot) is BotAgent
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and 'gobigger 0.2.2 is installed' in warnings[0]
    assert resolve_engine('fast', version='0.2.1') == 'fast'


def test_the_fast_engine_runs_compiled_or_falls_back_to_stock_with_one_warning(monkeypatch, caplog):
    """The install (make, pip install -e .) compiles the engine's hot modules with Cython (setup.py), so the
    fidelity tests above check the compiled code against stock; where they are not built, 'fast' plays stock."""
    from ppo_gobigger.envs.engine import balls, collision
    assert engine_module.compiled(), f'{balls.__file__}, {collision.__file__}: not built (pip install -e .)'
    monkeypatch.setattr(engine_module, '_warned_uncompiled', False)
    monkeypatch.setattr(engine_module, 'compiled', lambda: False)
    with caplog.at_level(logging.WARNING, logger='ppo_gobigger.envs.engine'):
        game = create_game('st_t2p2', {'frame_limit': 10}, 2, 'fast')
        assert resolve_engine('fast') == 'stock' and type(game) is StockGame
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and 'not built here' in warnings[0]


def test_engine_choices_are_checked():
    assert ENGINES == ('fast', 'stock')
    with pytest.raises(ValueError, match="engine must be one of"):
        create_game('st_t2p2', {}, 2, 'turbo')
    with pytest.raises(ValueError, match="st_\\* preset"):
        create_game('sp_t4p3', {}, 2, 'fast')
    assert type(create_game('st_t2p2', {}, 2, 'stock')) is StockGame



def test_a_training_run_is_the_same_run_on_either_engine(tmp_path):
    """A small training run on each engine from the same seed, its rollouts whole games as in the default config
    (every env's game ends at an iteration's end, so no env's reset races the next step): the same games make the
    same rollouts, and every checkpoint's weights are equal, bit for bit."""
    import torch

    from ppo_gobigger import train
    from test_training import small_config

    whole_games = ['policy.collect.n_sample=120', 'policy.learn.batch_size=60', 'max_env_step=480',
                   'policy.eval.evaluator.eval_freq=240']  # 2 envs x 60 env steps a game: 4 iterations
    for engine in ENGINES:
        main_config, create_config = small_config(tmp_path / engine, f'env.engine={engine}', *whole_games)
        train(main_config, create_config, seed=0)
    names = sorted(os.listdir(tmp_path / 'fast' / 'ckpt'))
    assert 'iteration_16.pth.tar' in names and names == sorted(os.listdir(tmp_path / 'stock' / 'ckpt'))
    for name in names:
        fast, stock = (torch.load(tmp_path / engine / 'ckpt' / name, map_location='cpu', weights_only=True)['model']
                       for engine in ('fast', 'stock'))
        assert fast.keys() == stock.keys()
        assert all(torch.equal(fast[k], stock[k]) for k in fast), name
