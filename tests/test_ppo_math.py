"""The learning math against hand-computed numbers and an independent NumPy reference."""
import numpy as np
import pytest
import torch

from ppo_gobigger.envs.actions import ACTION_KINDS
from ppo_gobigger.policy.ppo_math import (ValueNorm, explained_variance, gae, group_entropy,
                                         policy_loss, value_loss)


def _t(x, dtype=torch.float32):
    return torch.tensor(x, dtype=dtype)


def _gae_case(done, cut):
    # one env, one player, T = 3, gamma = lambda = 0.5
    reward = _t([[1.0], [2.0], [3.0]])  # (T, E)
    value = _t([[[0.5]], [[1.0]], [[1.5]]])  # (T, E, A)
    next_value = _t([[[1.0]], [[1.5]], [[2.0]]])
    return gae(reward, value, next_value, _t(done, torch.bool), _t(cut, torch.bool), 0.5, 0.5)[:, 0, 0]


def test_gae_hand_computed_no_end():
    # deltas 1.0, 1.75, 2.5; A2 = 2.5, A1 = 1.75 + .25 * 2.5, A0 = 1.0 + .25 * A1
    adv = _gae_case([[False], [False], [False]], [[False], [False], [False]])
    assert torch.allclose(adv, _t([1.59375, 2.375, 2.5]))


def test_gae_hand_computed_episode_end():
    # the game ends after step 1: no bootstrap there and no credit across the end
    adv = _gae_case([[False], [True], [False]], [[False], [True], [False]])
    assert torch.allclose(adv, _t([1.25, 1.0, 2.5]))


def test_gae_hand_computed_cut_mid_episode():
    # the rollout stops after step 1 mid-game: bootstrap with next_value, no credit across the cut
    adv = _gae_case([[False], [False], [False]], [[False], [True], [False]])
    assert torch.allclose(adv, _t([1.4375, 1.75, 2.5]))


def test_gae_with_zero_values_and_lambda_one_is_the_discounted_return_of_each_game():
    # the kickstart's critic targets (pipeline/learn/pretrain.py): two games end to end, gamma = 0.5
    reward = _t([[1.0], [2.0], [4.0], [8.0], [16.0]])  # game 1: steps 0-2, game 2: steps 3-4
    end = _t([[False], [False], [True], [False], [True]], torch.bool)
    zero = torch.zeros(5, 1, 1)
    returns = gae(reward, zero, zero, end, end, 0.5, 1.0)[:, 0, 0]
    assert torch.allclose(returns, _t([1 + 0.5 * 2 + 0.25 * 4, 2 + 0.5 * 4, 4, 8 + 0.5 * 16, 16]))


def _numpy_gae(reward, value, next_value, done, cut, gamma, lam):
    T, E, A = value.shape
    adv = np.zeros((T, E, A))
    for e in range(E):
        for a in range(A):
            running = 0.0
            for t in reversed(range(T)):
                if cut[t, e]:
                    running = 0.0
                bootstrap = 0.0 if done[t, e] else next_value[t, e, a]
                delta = reward[t, e] + gamma * bootstrap - value[t, e, a]
                running = delta + gamma * lam * running
                adv[t, e, a] = running
    return adv


def test_gae_matches_numpy_reference_on_random_rollouts():
    rng = np.random.default_rng(0)
    T, E, A = 17, 3, 2
    reward = rng.normal(size=(T, E))
    value, next_value = rng.normal(size=(T, E, A)), rng.normal(size=(T, E, A))
    done = rng.random((T, E)) < 0.1
    cut = done | (rng.random((T, E)) < 0.1)
    cut[-1] = True
    expected = _numpy_gae(reward, value, next_value, done, cut, 0.99, 0.95)
    got = gae(*(torch.from_numpy(x) for x in (reward, value, next_value, done, cut)), 0.99, 0.95)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10, atol=1e-10)


def test_policy_loss_hand_computed():
    ratio = np.array([[1.5, 0.5, 1.1]])  # (M=1, A=3): each player clipped on its own ratio
    old_logp = _t([[-1.0, -2.0, -0.5]])
    logp = old_logp + _t(np.log(ratio))
    adv = _t([[1.0, -1.0, 2.0]])
    out = policy_loss(logp, old_logp, adv, clip_ratio=0.2)
    # min(r * A, clip(r) * A) = [1.2, -0.8, 2.2]
    assert out['loss'].item() == pytest.approx(-(1.2 - 0.8 + 2.2) / 3, rel=1e-6)
    assert out['clipfrac'].item() == pytest.approx(2 / 3)
    kl = np.mean((ratio - 1) - np.log(ratio))
    assert out['approx_kl'].item() == pytest.approx(kl, rel=1e-5)


def test_policy_loss_ratio_is_not_averaged_over_players():
    # players with ratios 1.5 and 0.5 average to 1.0; clipping each gives a different objective
    old_logp = _t([[0.0, 0.0]])
    logp = _t(np.log([[1.5, 0.5]]))
    adv = _t([[1.0, 1.0]])
    out = policy_loss(logp, old_logp, adv, clip_ratio=0.2)
    assert out['loss'].item() == pytest.approx(-(1.2 + 0.5) / 2, rel=1e-6)


def test_value_loss_hand_computed():
    value, old, target = _t([[1.0, 2.0]]), _t([[0.5, 0.5]]), _t([[2.0, 0.0]])
    # clipped values [0.7, 0.7]; errors [1, 4] and [1.69, 0.49]; elementwise max [1.69, 4]
    assert value_loss(value, old, target, 0.2).item() == pytest.approx(0.5 * (1.69 + 4.0) / 2, rel=1e-6)


def test_value_norm_matches_numpy_over_batches_and_round_trips():
    rng = np.random.default_rng(1)
    batches = [rng.normal(5.0, 3.0, size=n) for n in (10, 100, 7)]
    norm = ValueNorm()
    for b in batches:
        norm.update(torch.from_numpy(b))
    everything = np.concatenate(batches)
    assert norm.mean.item() == pytest.approx(everything.mean(), rel=1e-9)
    assert norm.var.item() == pytest.approx(everything.var(), rel=1e-9)
    x = torch.from_numpy(rng.normal(size=(4, 3)))
    torch.testing.assert_close(norm.denormalize(norm.normalize(x)), x)
    torch.testing.assert_close(norm.normalize(x), (x - everything.mean()) / everything.std())
    restored = ValueNorm()
    restored.load_state_dict(norm.state_dict())
    torch.testing.assert_close(restored.normalize(x), norm.normalize(x))


def test_group_entropy_hand_computed_and_its_gradient_revives_a_starved_group():
    """The entropy of the kinds (move, eject, split): hand-computed on 4 actions in 3 groups, ln 3 at equal kind
    masses however the moves share theirs, 0 when one kind has all; its gradient raises a kind near 0."""
    probs = torch.tensor([0.1, 0.3, 0.2, 0.4])  # groups {0, 1}, {2}, {3}: masses 0.4, 0.2, 0.4
    groups = (slice(0, 2), slice(2, 3), slice(3, 4))
    expected = -(0.4 * np.log(0.4) + 0.2 * np.log(0.2) + 0.4 * np.log(0.4))
    assert float(group_entropy(torch.log(probs), groups)) == pytest.approx(expected, rel=1e-6)
    moves = torch.full((16, ), np.log(2 / 3 / 16))  # the table: 16 moves sharing 2/3, eject 1/6, split 1/6
    equal = torch.cat([moves, torch.log(torch.tensor([1 / 6, 1 / 6]))])
    assert float(group_entropy(equal, ACTION_KINDS)) == pytest.approx(-(2 / 3 * np.log(2 / 3) + 2 / 6 * np.log(1 / 6)),
                                                                   rel=1e-6)
    skew = equal.clone()
    skew[:16] = torch.linspace(-3, 3, 16) + np.log(2 / 3)  # the moves' share moved around, their mass kept
    skew[:16] += np.log(2 / 3) - torch.logsumexp(skew[:16], 0)
    assert float(group_entropy(skew, ACTION_KINDS)) == pytest.approx(float(group_entropy(equal, ACTION_KINDS)),
                                                                  rel=1e-5)
    starved = torch.cat([torch.zeros(16), torch.tensor([-12.0, -12.0])]).requires_grad_()  # eject, split ~4e-7
    h = group_entropy(starved.unsqueeze(0), ACTION_KINDS)
    assert h.shape == (1, ) and float(h.detach()) == pytest.approx(0.0, abs=1e-4)
    h.sum().backward()
    assert float(starved.grad[16]) > 0 and float(starved.grad[17]) > 0  # ascent raises eject and split
    assert torch.all(starved.grad[:16] < 0)


def test_explained_variance():
    target = _t([1.0, 2.0, 3.0, 4.0])
    assert explained_variance(target, target) == pytest.approx(1.0)
    assert explained_variance(torch.full_like(target, target.mean()), target) == pytest.approx(0.0)
