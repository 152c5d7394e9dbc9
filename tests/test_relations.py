"""The model's pairwise relations (model/relations.py) against the numpy ones the env computed before they moved.

The reference below is the env's code at commit b915a16 (features._fill_player), run on the raw GoBigger lists of
a real game: the model's relations, built from the per-item features, must give the same numbers.
"""
import random

import numpy as np
import pytest
import torch
from gobigger.agents import BotAgent
from gobigger.configs import st_t2p2
from gobigger.envs import create_env
from gobigger.utils import deep_merge_dicts

from ppo_gobigger.envs import MAX_CLONE, MAX_THORN, GameConsts, player_features
from ppo_gobigger.model.relations import CLONE_REL_DIM, THORN_REL_DIM, clone_relation, thorn_relation

EAT_CHANNELS = {'clone': (4, 5), 'thorn': (4, )}  # 0/1 channels: compared exactly


def reference_relations(player_state, eat_ratio: float):
    """Old env code: (clone_relation (n, n, CLONE_REL_DIM), thorn_relation (n, m, THORN_REL_DIM)) in float64 over
    the n nearest clones and m nearest thorns of the raw overlap lists (rows [x, y, r, score, ...])."""
    x0, y0, x1, y1 = player_state['rectangle']
    centre = np.array(((x0 + x1) / 2, (y0 + y1) / 2))
    half = max(x1 - x0, y1 - y0) / 2

    def nearest(items, width, cap):  # (n, width) rows nearest to the centre first, stable on ties
        rows = np.array(items, np.float64).reshape(len(items), width)
        offset = rows[:, :2] - centre
        return rows[(offset[:, 0] * offset[:, 0] + offset[:, 1] * offset[:, 1]).argsort(kind='stable')[:cap]]

    clones = nearest(player_state['overlap']['clone'], 10, MAX_CLONE)
    rel, radius, score = (clones[:, :2] - centre) / half, clones[:, 2] / half, clones[:, 3]
    delta = rel[None, :, :] - rel[:, None, :]
    dist = np.hypot(delta[..., 0], delta[..., 1])
    i_eats_j = score[:, None] > eat_ratio * score
    clone_rel = np.zeros((len(clones), len(clones), CLONE_REL_DIM))
    clone_rel[..., 0:2] = delta
    clone_rel[..., 2] = dist
    clone_rel[..., 3] = radius - radius[:, None]
    clone_rel[..., 4] = i_eats_j
    clone_rel[..., 5] = i_eats_j.T
    clone_rel[..., 6] = dist - radius[:, None] - radius

    thorns = nearest(player_state['overlap']['thorns'], 6, MAX_THORN)
    t_radius = thorns[:, 2] / half
    t_delta = (thorns[:, :2] - centre) / half - rel[:, None, :]
    t_dist = np.hypot(t_delta[..., 0], t_delta[..., 1])
    thorn_rel = np.zeros((len(clones), len(thorns), THORN_REL_DIM))
    thorn_rel[..., 0:2] = t_delta
    thorn_rel[..., 2] = t_dist
    thorn_rel[..., 3] = t_radius
    thorn_rel[..., 4] = score[:, None] > eat_ratio * thorns[:, 3]
    thorn_rel[..., 5] = t_dist - radius[:, None] - t_radius
    return clone_rel, thorn_rel


def model_relations(features):
    """The model's relations of one player's features, cut to its valid clones and thorns: (n, n, 7), (n, m, 6)."""
    n, m = int(features['clone_mask'].sum()), int(features['thorn_mask'].sum())
    clone = torch.from_numpy(features['clone'])[None]  # (1, C, CLONE_DIM)
    thorn = torch.from_numpy(features['thorn'])[None]  # (1, K, THORN_DIM)
    return clone_relation(clone)[0, :n, :n].numpy(), thorn_relation(clone, thorn)[0, :n, :m].numpy()


def assert_relations_equal(got: np.ndarray, want: np.ndarray, kind: str) -> None:
    assert got.shape == want.shape and got.dtype == np.float32
    eat = list(EAT_CHANNELS[kind])
    np.testing.assert_array_equal(got[..., eat], want[..., eat])
    np.testing.assert_allclose(np.delete(got, eat, -1), np.delete(want, eat, -1), rtol=1e-5, atol=1e-6)


def test_relations_match_the_old_env_code_on_a_bot_game():
    """Level-2 bots play st_t2p2 (bot play keeps many clones in view); every player's view at every step."""
    custom = {'frame_limit': 400}  # 200 steps: the checks below are first all met at step 155 (probed)
    consts = GameConsts.from_game_cfg(deep_merge_dicts(st_t2p2, custom))
    game = create_env('st_t2p2', custom)
    game.server._random.seed(7)
    random.seed(7)
    global_state, states = game.reset()
    bots = {pid: BotAgent(name=pid, level=2) for pid in states}
    seen = dict(pairs=0, clone_eats=0, thorn_pairs=0, thorn_eats=0, most_clones=0)
    done = False
    while not done:
        (global_state, states), _, done, _ = game.step({pid: bot.step(states[pid]) for pid, bot in bots.items()})
        for pid, state in states.items():
            f = player_features(global_state, state, pid, pid // 2, pid % 2, consts)
            clone_want, thorn_want = reference_relations(state, consts.eat_ratio)
            clone_got, thorn_got = model_relations(f)
            assert_relations_equal(clone_got, clone_want, 'clone')
            assert_relations_equal(thorn_got, thorn_want, 'thorn')
            seen['pairs'] += clone_want[..., 4].size
            seen['clone_eats'] += int(clone_want[..., 4].sum())
            seen['thorn_pairs'] += thorn_want[..., 4].size
            seen['thorn_eats'] += int(thorn_want[..., 4].sum())
            seen['most_clones'] = max(seen['most_clones'], len(clone_want))
    # the comparison covered both answers of each eat test, and crowded views
    assert 0 < seen['clone_eats'] < seen['pairs'] and 0 < seen['thorn_eats'] < seen['thorn_pairs'], seen
    assert seen['most_clones'] >= 12, seen


def one_view(clone_scores, thorn_scores, score_init=13000.0):
    """Features of a hand-made view: clones and thorns in a row on the x axis, the player owning all clones."""
    half = 20.0
    clones = [[30.0 + 3 * i, 30.0, 2.0, s, 0.0, 0.0, 0.0, 0.0, 0, 0] for i, s in enumerate(clone_scores)]
    thorns = [[30.0 + 3 * k, 34.0, 3.0, s, 0.0, 0.0] for k, s in enumerate(thorn_scores)]
    state = dict(
        rectangle=[30.0 - half, 30.0 - half, 30.0 + half, 30.0 + half], score=sum(clone_scores), can_eject=True,
        can_split=True, overlap=dict(food=[], spore=[], clone=clones, thorns=thorns)
    )
    global_state = dict(leaderboard={0: sum(clone_scores)}, border=[64, 64], last_frame_count=0, total_frame=3600)
    consts = GameConsts(score_init=score_init, eat_ratio=1.3, part_num_max=16, team_num=1, player_num_per_team=1)
    return player_features(global_state, state, 0, 0, 0, consts), state


@pytest.mark.parametrize('score_init', [13000.0, 1000.0, 7.0])
def test_eat_tests_are_exact_at_the_ratio(score_init):
    """13000 = 1.3 * 10000 exactly: neither eats the other (strict >); a ball one point bigger eats. Thorns likewise.
    (Sides closer than float32 rounding, ~6e-8 relative, without being equal may get either answer.)"""
    f, state = one_view([13000.0, 10000.0, 13001.0], [10000.0, 9999.0], score_init)
    clone_got, thorn_got = model_relations(f)
    clone_want, thorn_want = reference_relations(state, 1.3)
    # clones sorted by distance to the centre: 13000 (at the centre), 10000, 13001
    assert clone_got[..., 4].tolist() == [[0, 0, 0], [0, 0, 0], [0, 1, 0]]
    assert thorn_got[..., 4].tolist() == [[0, 1], [0, 0], [1, 1]]
    assert_relations_equal(clone_got, clone_want, 'clone')
    assert_relations_equal(thorn_got, thorn_want, 'thorn')
