"""Tests for envs/: features, action table, opponents and the DI-engine env, on real (shortened) GoBigger games."""
import math
import os
import random
import subprocess
import sys
import textwrap
from functools import partial

import cv2
import numpy as np
import pytest
import torch
from gobigger.envs import create_env

from ppo_gobigger.envs import (
    ACTION_NUM, MASK_KEYS, MAX_CLONE, MAX_THORN, OBS_SHAPES, PRESETS, GameConsts, GoBiggerEnv, check_actions,
    player_features, to_game_action
)
from ppo_gobigger.envs.actions import EJECT, SPLIT, from_game_action
from ppo_gobigger.envs.features import FOOD_MISSING_DIST
from ppo_gobigger.envs.game import game_env_steps
from ppo_gobigger.envs.teams import EAT_COUNTS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPLIT_HEAVY = np.full(ACTION_NUM, 0.7 / 16)  # random play that splits often, so clone counts grow
SPLIT_HEAVY[EJECT], SPLIT_HEAVY[SPLIT] = 0.1, 0.2


# st_t4p3 players start at score 1000, below split_score_min (3600): start them bigger so that they split at once
BIG_START = {'manager_settings': {'player_manager': {'ball_settings': {'score_init': 13000}}}}


# the env as these tests play it, unless a test says otherwise: bots for opponents, a decision every GoBigger step, the
# team's log-score reward (the defaults are the recipe's: a league, action_repeat 4, log-ratio mixed per player)
TEST_ENV = dict(opponent='bot', action_repeat=1, reward='log_score', team_spirit=1.0)


def make_env(preset='st_t2p2', frame_limit=200, custom_cfg=None, **cfg):
    custom_cfg = dict(custom_cfg or {}, frame_limit=frame_limit)
    return GoBiggerEnv(dict(TEST_ENV, preset=preset, custom_cfg=custom_cfg, **cfg))


def random_actions(rng, A):
    return rng.choice(ACTION_NUM, size=A, p=SPLIT_HEAVY)


def play(env, seed, action_seed=0):
    """Seed, reset and play env to the end with seeded random actions -> (list of observations, last timestep)."""
    obs, _, last = play_game(env, seed, action_seed)
    return obs, last


def play_game(env, seed, action_seed=0):
    """play(), also returning the rewards: (observations, rewards (T, A) of the T steps, last timestep)."""
    env.seed(seed)
    obs, rewards = [env.reset()], []
    rng = np.random.default_rng(action_seed)
    A = env.action_space.shape[0]
    while True:
        ts = env.step(random_actions(rng, A))
        assert ts.reward.shape == (A, ) and ts.reward.dtype == np.float32
        obs.append(ts.obs)
        rewards.append(ts.reward)
        if ts.done:
            return obs, np.stack(rewards), ts


def assert_padding(obs):
    """Padded entries are exactly zero and masks say which entries are real (nearest first: a prefix)."""
    clone, thorn = obs['clone_mask'], obs['thorn_mask']  # (A, C), (A, K)
    for mask in (clone, thorn):
        assert not np.any(~mask[..., :-1] & mask[..., 1:]), 'masks must be a prefix'
    assert np.all(obs['clone'][~clone] == 0)
    assert np.all(obs['food_relation'][~clone] == 0)
    assert np.all(obs['thorn'][~thorn] == 0)


# ---- the action table ----
def test_action_table():
    assert ACTION_NUM == 18
    for k in range(16):
        x, y, action_type = to_game_action(k)
        assert action_type == 0 and math.isclose(math.hypot(x, y), 1.0)
        assert math.isclose(math.atan2(y, x) % (2 * math.pi), 2 * math.pi * k / 16, abs_tol=1e-9)
    assert to_game_action(0) == [1.0, 0.0, 0]
    assert to_game_action(EJECT) == [None, None, 1]
    assert to_game_action(SPLIT) == [None, None, 2]


def test_from_game_action_inverts_the_table_and_rounds_to_the_nearest_direction():
    assert [from_game_action(to_game_action(k)) for k in range(ACTION_NUM)] == list(range(ACTION_NUM))
    step = 2 * math.pi / 16
    assert from_game_action([math.cos(0.4 * step), math.sin(0.4 * step), 0]) == 0
    assert from_game_action([math.cos(0.6 * step), math.sin(0.6 * step), 0]) == 1
    assert from_game_action([math.cos(-0.6 * step), math.sin(-0.6 * step), 0]) == 15
    assert from_game_action([0, 0, 0]) == 0  # GoBigger bots send a zero direction while they split


def test_check_actions_accepts_and_rejects():
    for good in ([0, 17], np.array([3, 4]), torch.tensor([5, 6]), np.array([1.0, 2.0])):
        out = check_actions(good, 2)
        assert out.dtype == np.int64 and out.shape == (2, )
    assert check_actions(7, 1).tolist() == [7]
    with pytest.raises(ValueError, match=r'18.*\[0, 18\)'):
        check_actions([0, 18], 2)
    with pytest.raises(ValueError, match=r'-1'):
        check_actions(np.array([-1, 2]), 2)
    with pytest.raises(ValueError, match=r'shape \(2,\)'):
        check_actions([1, 2, 3], 2)
    with pytest.raises(ValueError, match=r'shape \(2,\)'):
        check_actions(3, 2)
    with pytest.raises(ValueError, match=r'1\.5'):
        check_actions([1.5, 2], 2)


# ---- config errors ----
@pytest.mark.parametrize(
    'cfg, message', [
        (dict(preset='st_t9p9'), r"st_t9p9.*st_t1p1.*st_t6p4"),
        (dict(bot_level=4), r'bot_level 4'),
        (dict(opponent='human'), r"'human'.*'bot', 'random'"),
        (dict(team_id=2), r'team_id 2'),
        (dict(stand_in='human'), r"'human'.*'bot', 'random'"),
        (dict(stand_in='bot', stand_in_bot_level=0), r'bot_level 0'),
        (dict(reward='win'), r"'win'.*'log_score', 'log_ratio'"),
        (dict(team_spirit=1.5), r'team_spirit must be in \[0, 1\]; got 1.5'),
        (dict(custom_cfg={'frame_limt': 10}), r'frame_limt'),
        (dict(custom_cfg={'manager_settings': {'food_manager': {'num_innit': 1}}}), r'num_innit'),
    ]
)
def test_bad_config_raises(cfg, message):
    with pytest.raises(ValueError, match=message):
        GoBiggerEnv(dict(TEST_ENV, **cfg))


def test_presets_come_from_gobigger():
    assert PRESETS == (
        'st_t1p1', 'st_t1p2', 'st_t2p1', 'st_t2p2', 'st_t3p2', 'st_t4p3', 'st_t5p3', 'st_t5p4', 'st_t6p4'
    )


def test_lazy_init_and_spaces():
    env = make_env('st_t4p3')
    assert env._game is None  # DI-engine builds one env in the parent just to read the spaces
    A = 3
    assert env.action_space.nvec.tolist() == [ACTION_NUM] * A
    for k, shape in OBS_SHAPES.items():
        space = env.observation_space[k]
        assert space.shape == (A, ) + shape
        assert space.dtype == (np.bool_ if k in MASK_KEYS else np.float32)
    assert env.reward_space.shape == (3, )  # one reward per player


def test_env_cfg_copies():
    cfg = dict(preset='st_t2p2', collector_env_num=3, evaluator_env_num=2, manager={'shared_memory': True})
    collect = GoBiggerEnv.create_collector_env_cfg(cfg)
    evaluate = GoBiggerEnv.create_evaluator_env_cfg(cfg)
    assert [c.is_evaluator for c in collect] == [False] * 3
    assert [c.is_evaluator for c in evaluate] == [True] * 2
    assert 'is_evaluator' not in cfg and cfg['collector_env_num'] == 3  # the input is left alone
    collect[0].manager.shared_memory = False
    assert collect[1].manager.shared_memory is True  # copies, not one shared dict
    GoBiggerEnv(evaluate[0])  # extra keys are ignored


# ---- whole games ----
@pytest.mark.parametrize(
    'preset, frame_limit, opponent, custom_cfg', [
        ('st_t2p2', 300, 'bot', None),  # our clone lists first reach 8 at step 112 (probed)
        ('st_t4p3', 120, 'random', BIG_START),  # ... at step 18
    ]
)
def test_whole_game_matches_observation_space(preset, frame_limit, opponent, custom_cfg):
    env = make_env(preset, frame_limit, custom_cfg, opponent=opponent)
    space = env.observation_space
    obs, last = play(env, seed=1)
    assert len(obs) == frame_limit // 2 + 1  # reset + one step per 2 frames
    for o in obs:
        assert o.keys() == space.spaces.keys()
        for k, v in o.items():
            assert v.shape == space[k].shape and v.dtype == space[k].dtype, k
            assert np.all(np.isfinite(v)), k
        assert_padding(o)
    assert max(o['clone_mask'].sum(-1).max() for o in obs) >= 8  # splits happened, clone lists grew

    # episode-end info
    info = last.info
    team_num = env._consts.team_num
    assert last.done is True
    assert info['final_score'] > 0 and info['opponent_score'] > 0
    assert info['rank'] in range(1, team_num + 1)
    assert info['win'] == (info['rank'] == 1)
    assert info['score_ratio'] == pytest.approx(info['final_score'] / info['opponent_score'])
    start = env._consts.player_num_per_team * env._consts.score_init
    assert info['eval_episode_return'] == pytest.approx(math.log(info['final_score'] / start), rel=1e-5)  # log_score
    assert info['episode_info']['rank'] == info['rank']
    # what our team ate: GoBigger's own counters of the game, summed over our players (team t owns players t*A..)
    counters = env._game.server.eats
    ours = [p for p in counters if p // env._consts.player_num_per_team == env._cfg.team_id]
    assert {k: info[k] for k in EAT_COUNTS} == {k: sum(counters[p][c] for p in ours) for k, c in EAT_COUNTS.items()}
    assert info['ate_food'] > 0 and info['episode_info']['eaten'] == info['eaten']
    with pytest.raises(RuntimeError, match='reset'):
        env.step([0] * env.action_space.shape[0])
    env.close()


def test_single_team_preset_has_no_opponent():
    obs, last = play(make_env('st_t1p2', frame_limit=20), seed=0)
    assert obs[0]['scalar'].shape == (2, 16)
    assert last.info['rank'] == 1 and last.info['win'] is True
    assert math.isnan(last.info['opponent_score']) and math.isnan(last.info['score_ratio'])


def capped_raw_game(steps: int = 60):
    """(consts, global_state, player id, player state) for every player of every step of a raw st_t2p2 game (random
    actions, seed 5) whose players start big (4 x 60000 on a 64x64 map), so they split into 16 balls and see each
    other: the feature caps get hit."""
    from gobigger.configs import st_t2p2
    from gobigger.utils import deep_merge_dicts
    custom = {'frame_limit': 400, 'manager_settings': {'player_manager': {'ball_settings': {'score_init': 60000}}}}
    consts = GameConsts.from_game_cfg(deep_merge_dicts(st_t2p2, custom))
    game = create_env('st_t2p2', custom)
    game.server._random.seed(5)
    random.seed(5)
    rng = np.random.default_rng(5)
    game.reset()
    for _ in range(steps):
        actions = {pid: to_game_action(k) for pid, k in zip(range(4), random_actions(rng, 4))}
        (global_state, states), _, _, _ = game.step(actions)
        for pid, state in states.items():
            yield consts, global_state, pid, state


def test_masks_hand_checked_on_a_raw_game():
    """Feature arrays against the raw GoBigger lists, over a raw game split often enough to fill the caps."""
    saw_cap = False
    for consts, global_state, pid, state in capped_raw_game():
        f = player_features(global_state, state, pid, pid // 2, pid % 2, consts)
        clones, thorns = state['overlap']['clone'], state['overlap']['thorns']
        assert f['clone_mask'].sum() == min(MAX_CLONE, len(clones))
        assert f['thorn_mask'].sum() == min(MAX_THORN, len(thorns))
        assert_padding({k: v[None] for k, v in f.items()})
        # c is the score-weighted centroid of the player's own clones (== the view box centre)
        own = np.array([c for c in clones if c[8] == pid])
        centre = own[:, 3] @ own[:, :2] / own[:, 3].sum()
        x0, y0, x1, y1 = state['rectangle']
        h = max(x1 - x0, y1 - y0) / 2
        assert np.allclose(centre, [(x0 + x1) / 2, (y0 + y1) / 2])
        # the kept clones, by hand: the nearest MAX_CLONE, nearest first (equal distances in either order)
        d = np.array([math.hypot(c[0] - centre[0], c[1] - centre[1]) for c in clones])
        rows = np.array([[(c[0] - centre[0]) / h, (c[1] - centre[1]) / h, c[2] / h, math.log(c[3] / 60000),
                          c[4] / 10, c[5] / 10, c[8] == pid, c[9] == pid // 2 and c[8] != pid, c[9] != pid // 2,
                          dist / h, c[3] / 60000, 1.3 * c[3] / 60000] for c, dist in zip(clones, d)])  # (N, 12)
        n = f['clone_mask'].sum()
        np.testing.assert_allclose(f['clone'][:n, 9], np.sort(d)[:n] / h, rtol=1e-5, atol=1e-6)
        for row in f['clone'][:n]:
            assert np.isclose(rows, row, rtol=1e-5, atol=1e-5).all(1).any(), row
        # the kept thorns, by hand: the nearest MAX_THORN, nearest first
        d = np.array([math.hypot(t[0] - centre[0], t[1] - centre[1]) for t in thorns])
        rows = np.array([[(t[0] - centre[0]) / h, (t[1] - centre[1]) / h, t[2] / h, 1.3 * t[3] / 60000]
                         for t in thorns]).reshape(len(thorns), 4)  # (T, THORN_DIM)
        m = f['thorn_mask'].sum()
        np.testing.assert_allclose(np.hypot(*f['thorn'][:m, :2].T) * h, np.sort(d)[:m], rtol=1e-5, atol=1e-5)
        for row in f['thorn'][:m]:
            assert np.isclose(rows, row, rtol=1e-5, atol=1e-5).all(1).any(), row
        assert f['scalar'][10] == pytest.approx(len(own) / 16)
        if len(state['overlap']['food']) < 2:
            assert np.all(f['food_relation'][f['clone_mask'], 5] == FOOD_MISSING_DIST)
        saw_cap |= len(clones) > MAX_CLONE
    assert saw_cap, 'the game never showed more than MAX_CLONE clones: the cap went untested'


# ---- failures ----
def test_game_exception_gives_abnormal_timestep_then_reset_works(monkeypatch):
    env = make_env()
    env.seed(0)
    env.reset()

    def broken_step(*args, **kwargs):
        raise RuntimeError('boom inside the game')

    monkeypatch.setattr(env._game.server, 'step', broken_step)
    ts = env.step([0, 1])
    assert ts.info['abnormal'] is True and 'boom inside the game' in ts.info['error']
    assert ts.done is False and ts.reward.dtype == np.float32 and ts.reward.tolist() == [0.0, 0.0]  # one per player
    for k, space in env.observation_space.spaces.items():
        assert ts.obs[k].shape == space.shape and ts.obs[k].dtype == space.dtype and not ts.obs[k].any()
    obs = env.reset()
    assert obs['clone_mask'].any()
    assert env.step([0, 1]).info == {}


def test_bad_action_is_a_value_error_not_abnormal():
    env = make_env()
    env.reset()
    with pytest.raises(ValueError, match='19'):
        env.step([0, 19])
    assert env.step([0, 1]).info == {}  # the env is still fine


# ---- DI-engine env manager ----
def test_sync_subprocess_manager_with_shared_memory_matches_in_process():
    from ding.envs import SyncSubprocessEnvManager
    cfg = dict(TEST_ENV, preset='st_t2p2', custom_cfg={'frame_limit': 200})
    manager_cfg = SyncSubprocessEnvManager.default_config()
    manager_cfg.shared_memory = True
    manager = SyncSubprocessEnvManager([partial(GoBiggerEnv, cfg)] * 2, manager_cfg)
    manager.seed(20)  # env i gets seed 20 + i
    manager.launch()
    actions = [np.array([k % ACTION_NUM, (3 * k) % ACTION_NUM]) for k in range(6)]
    try:
        seen = {i: [manager.ready_obs[i]] for i in range(2)}
        for action in actions:
            timesteps = manager.step({i: action for i in range(2)})
            for i, ts in timesteps.items():
                seen[i].append(ts.obs)
    finally:
        manager.close()
    space = GoBiggerEnv(cfg).observation_space
    for i in range(2):
        env = GoBiggerEnv(cfg)
        env.seed(20 + i)
        expected = [env.reset()] + [env.step(a).obs for a in actions]
        for got, want in zip(seen[i], expected):
            for k in space.spaces:
                assert got[k].shape == space[k].shape and got[k].dtype == space[k].dtype, k
                np.testing.assert_array_equal(got[k], want[k])
    assert not np.array_equal(seen[0][-1]['clone'], seen[1][-1]['clone'])


# ---- replays ----
def test_enable_save_replay_writes_a_video(tmp_path):
    env = make_env(frame_limit=20, opponent='random')
    env.enable_save_replay(str(tmp_path))
    play(env, seed=0)
    video = cv2.VideoCapture(str(tmp_path / f'st_t2p2_seed{env.game_seed}-all.mp4'))
    assert video.get(cv2.CAP_PROP_FRAME_COUNT) == 10  # a 20-frame game, GoBigger saving every 2nd frame


def test_stand_in_plays_our_side_and_reports_its_moves():
    """With a bot stand-in the given actions are ignored (any action gives the same game) and every step says,
    as action indices, what the bot played; without one the actions matter."""
    def play(stand_in, action):
        env = GoBiggerEnv(dict(TEST_ENV, stand_in=stand_in, custom_cfg={'frame_limit': 60}, is_evaluator=True))
        env.seed(4)
        env.reset()
        moves, done = [], False
        while not done:
            timestep = env.step(np.full(2, action))
            done = timestep.done
            moves.append(timestep.info.get('stand_in_action'))
        env.close()
        return timestep.info['final_score'], moves

    score_a, moves_a = play('bot', 0)
    score_b, moves_b = play('bot', EJECT)
    assert score_a == score_b
    assert all(m.shape == (2, ) and m.dtype == np.int64 and ((0 <= m) & (m < ACTION_NUM)).all() for m in moves_a)
    assert [m.tolist() for m in moves_a] == [m.tolist() for m in moves_b]
    assert len({m.tolist()[0] for m in moves_a}) > 1  # the bot steers
    assert play(None, 0)[0] != play(None, EJECT)[0]


def test_action_repeat_holds_our_moves_while_the_bots_act_on_every_step():
    """action_repeat=4: one env step is 4 GoBigger steps. A held move is the same game as sending that move on each
    of the 4 steps at action_repeat=1 (the bots act on every step either way); rewards add up over the 4 steps and a
    game of frame_limit frames takes frame_limit / (step_mul * 4) env steps."""
    rng = np.random.default_rng(5)
    moves = rng.integers(16, size=(25, 2))  # move actions only: an eject or a split happens once, not 4 times
    held, every = make_env(frame_limit=200, action_repeat=4), make_env(frame_limit=200)
    held.seed(7), every.seed(7)
    held.reset(), every.reset()
    for k, move in enumerate(moves):
        ts = held.step(move)
        steps = [every.step(move) for _ in range(4)]
        assert held._game.server.obs()[0]['leaderboard'] == every._game.server.obs()[0]['leaderboard']
        for key, value in ts.obs.items():
            np.testing.assert_array_equal(value, steps[-1].obs[key], err_msg=key)
        assert ts.reward[0] == pytest.approx(sum(s.reward[0] for s in steps), rel=1e-5, abs=1e-6)
        assert ts.done == steps[-1].done == (k == len(moves) - 1)  # 200 frames / (2 * 4)
    assert game_env_steps(held._cfg) == len(moves) and game_env_steps(every._cfg) == 100
    odd = make_env(frame_limit=210, action_repeat=4)  # 105 GoBigger steps: the 27th env step ends after one
    _, rewards, _ = play_game(odd, 3)
    assert len(rewards) == game_env_steps(odd._cfg) == 27
    odd.close()
    assert ts.info['final_score'] == steps[-1].info['final_score']
    with pytest.raises(ValueError, match='action_repeat'):
        make_env(action_repeat=0)
    held.close(), every.close()


# ---- imports ----
def test_model_and_policy_import_where_gobigger_cannot():
    """envs/ loads its GoBigger modules on first use: the model and the policy (feature sizes, the action table)
    import in a process that refuses to import gobigger, and the env itself then names the missing module."""
    script = textwrap.dedent("""
        import sys

        class NoGoBigger:
            def find_spec(self, name, path=None, target=None):
                if name == 'gobigger' or name.startswith('gobigger.'):
                    raise ModuleNotFoundError(f'No module named {name!r} (refused)', name=name)

        sys.meta_path.insert(0, NoGoBigger())
        import ppo_gobigger.model, ppo_gobigger.policy
        from ppo_gobigger.envs import ACTION_NUM, OBS_SHAPES
        assert ACTION_NUM == 18 and OBS_SHAPES['clone'] == (16, 12)
        assert not any(name.split('.')[0] == 'gobigger' for name in sys.modules)
        try:
            from ppo_gobigger.envs import GoBiggerEnv
        except ModuleNotFoundError as e:
            print('refused', e.name)
    """)
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, '-c', script], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ['refused', 'gobigger'], done.stdout


def test_env_is_registered_as_gobigger_and_by_its_former_name():
    from ding.utils import ENV_REGISTRY
    assert ENV_REGISTRY.get('gobigger') is GoBiggerEnv
    assert ENV_REGISTRY.get('gobigger_ppo') is GoBiggerEnv  # the env type of create_configs saved before the rename


def test_checkpoints_saved_with_a_retired_env_setting_load_only_with_it_off(tmp_path):
    """env.eaten_penalty, env.enemy_clone_slots and env.team_vision are gone: a checkpoint's config that holds one
    at its old default compiles without it (retired_keys.RETIRED_KEYS); one trained with an observation option on is
    refused, naming the setting."""
    from ppo_gobigger.config import ConfigError, compile_config, default_config
    from ppo_gobigger.pipeline.learn.checkpoint import load_checkpoint, save_checkpoint
    config = default_config()
    config.env.update(eaten_penalty=0.0, enemy_clone_slots=0, team_vision=False)
    save_checkpoint(str(tmp_path / 'off.pth.tar'), {}, 0, 0, config)
    compiled, _ = compile_config(load_checkpoint(str(tmp_path / 'off.pth.tar'))['config'])
    assert not {'eaten_penalty', 'enemy_clone_slots', 'team_vision'} & set(compiled.env)
    config.env.team_vision = True
    save_checkpoint(str(tmp_path / 'on.pth.tar'), {}, 0, 0, config)
    with pytest.raises(ConfigError, match=r'env.team_vision=True changed the model or what it observes'):
        compile_config(load_checkpoint(str(tmp_path / 'on.pth.tar'))['config'])
