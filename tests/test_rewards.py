"""The training rewards (envs/rewards.py) as the env pays them over whole games: each kind adds up to its potential
at the game's end (GoBigger's true outcome), and team_spirit mixes each player's own part with the team's."""
import math

import numpy as np
import pytest

from ppo_gobigger.envs import GameConsts
from test_env import make_env, play_game


@pytest.mark.parametrize('preset', ['st_t2p2', 'st_t3p2'])
def test_log_rewards_sum_to_the_log_of_the_final_score_and_of_the_ratio(preset):
    """reward='log_score' adds up to ln(final / start team score); 'log_ratio' to ln(final score / the best other
    team's), positive exactly when the game is won."""
    totals = {}
    for kind in ('log_score', 'log_ratio'):
        env = make_env(preset, frame_limit=160, reward=kind, action_repeat=2)
        _, step_rewards, ts = play_game(env, seed=3)
        rewards = [float(r) for r in step_rewards[:, 0]]
        totals[kind] = sum(rewards), ts.info
        assert ts.info['eval_episode_return'] == pytest.approx(sum(rewards), rel=1e-5)
        env.close()
    start = 2 * GameConsts.from_game_cfg(make_env(preset)._game_cfg).score_init
    (log_score, info), (log_ratio, same) = totals['log_score'], totals['log_ratio']
    assert same['final_score'] == info['final_score']  # the reward does not change the game
    assert log_score == pytest.approx(math.log(info['final_score'] / start), rel=1e-4, abs=1e-5)
    assert log_ratio == pytest.approx(math.log(info['score_ratio']), rel=1e-4, abs=1e-5)
    assert (log_ratio > 0) == info['win']


@pytest.mark.parametrize('kind', ['log_score', 'log_ratio'])
def test_team_spirit_mixes_each_players_own_log_score_with_the_teams(kind):
    """team_spirit=0.25: player i's rewards add up to 0.25 (the team's return) + 0.75 ln(its own final / start
    score), the team's return being ln(team final / start) ('log_score') or ln(the final score ratio) ('log_ratio',
    the teams start equal); the players' rewards differ; the game's return is their mean."""
    env = make_env(frame_limit=160, reward=kind, team_spirit=0.25, action_repeat=2)
    consts = env._consts
    _, rewards, ts = play_game(env, seed=4, action_seed=1)
    returns = np.sum(rewards, axis=0, dtype=np.float64)  # (A,)
    team_start = consts.player_num_per_team * consts.score_init
    team = math.log(ts.info['final_score'] / team_start if kind == 'log_score' else ts.info['score_ratio'])
    own = [env._game.server.obs()[1][pid]['score'] for pid in env._our_ids]
    for a in range(2):
        expected = 0.25 * team + 0.75 * math.log(own[a] / consts.score_init)
        assert returns[a] == pytest.approx(expected, rel=1e-3, abs=1e-4)
    assert returns[0] != pytest.approx(returns[1])
    assert ts.info['eval_episode_return'] == pytest.approx(returns.mean(), rel=1e-4)
    env.close()
