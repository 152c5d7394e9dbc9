"""Seeding: one seed, one game; the evaluator's games are not the collector's; envs sharing a process (and the
caller) keep their own draws of the global `random` that GoBigger and its bots use."""
import random

import numpy as np
import pytest

from ppo_gobigger.envs import GoBiggerEnv
from test_env import make_env, play, random_actions


@pytest.fixture(scope='module')
def bot_game():
    """(observations, last timestep) of one 100-frame game against bots, game seed 11, actions play(action_seed=0)."""
    return play(make_env(opponent='bot', frame_limit=100), seed=11)


def test_same_seed_same_game_different_seed_different_game(bot_game):
    (obs_a, last_a), (obs_b, last_b), (obs_c, _) = [bot_game] + [
        play(make_env(opponent='bot', frame_limit=100), seed=s) for s in (11, 12)
    ]
    for a, b in zip(obs_a, obs_b):
        for k in a:
            np.testing.assert_array_equal(a[k], b[k])
    assert (last_a.info['final_score'], last_a.info['opponent_score']) == \
        (last_b.info['final_score'], last_b.info['opponent_score'])
    assert not np.array_equal(obs_a[0]['scalar'], obs_c[0]['scalar'])


def test_envs_sharing_a_process_do_not_disturb_each_other(bot_game):
    """Bots and GoBigger draw from the global `random`; each env keeps its own state of it."""
    alone, _ = bot_game
    a, b = make_env(opponent='bot', frame_limit=100), make_env(opponent='bot', frame_limit=100)
    a.seed(11)
    b.seed(11)
    random.seed(123)
    caller_state = random.getstate()
    interleaved = [(a.reset(), b.reset())]
    rng = np.random.default_rng(0)  # the same action stream as play(..., action_seed=0)
    for _ in range(50):
        action = random_actions(rng, 2)
        interleaved.append((a.step(action).obs, b.step(action).obs))
    assert random.getstate() == caller_state  # the caller's stream is untouched
    for want, (got_a, got_b) in zip(alone, interleaved):
        for k in want:
            np.testing.assert_array_equal(got_a[k], want[k])
            np.testing.assert_array_equal(got_b[k], want[k])


def test_evaluator_and_collector_play_different_games():
    cfg = dict(preset='st_t2p2', custom_cfg={'frame_limit': 200}, collector_env_num=1, evaluator_env_num=1)
    collector = GoBiggerEnv(GoBiggerEnv.create_collector_env_cfg(cfg)[0])
    evaluator = GoBiggerEnv(GoBiggerEnv.create_evaluator_env_cfg(cfg)[0])
    for env in (collector, evaluator):
        env.seed(3)
        env.reset()
    assert collector.game_seed == 2 * 3_000_000 and evaluator.game_seed == 2 * 3_000_000 + 1
    assert not np.array_equal(collector.reset()['scalar'], evaluator.reset()['scalar'])


def test_dynamic_seed_moves_on_static_seed_repeats():
    env = make_env()
    env.seed(4, dynamic_seed=True)
    first, second = env.reset(), env.reset()
    assert not np.array_equal(first['scalar'], second['scalar'])
    env.seed(4, dynamic_seed=False)
    again, again2 = env.reset(), env.reset()
    np.testing.assert_array_equal(again['scalar'], first['scalar'])
    np.testing.assert_array_equal(again2['scalar'], first['scalar'])
