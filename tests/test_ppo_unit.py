"""The policy's learn mode without GoBigger: GoBiggerPPOPolicy._forward_learn on hand-made rollouts, checked against
numbers computed by hand (value normalisation, advantage normalisation, the first Adam step, the valid mask).

The model is a two-parameter actor-critic whose outputs do not depend on the observation (a logit pair and a value),
so that every gradient below can be written down. One env, one player, two actions unless said otherwise.
"""
import os
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.nn as nn

from ppo_gobigger.policy.gobigger_ppo import GoBiggerPPOPolicy

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LR = 0.01
ADAM_EPS = 1e-5  # the policy's Adam eps


class ConstantActorCritic(nn.Module):
    """logit (M, A, 2) = self.logit and value (M, A) = self.value for every observation {'x': (M, A, 1)}."""

    def __init__(self, value: float = 0.5) -> None:
        super().__init__()
        self.logit = nn.Parameter(torch.zeros(2))
        self.value = nn.Parameter(torch.tensor(value))

    def forward(self, inputs, mode):
        shape = inputs['x'].shape[:-1]  # (M, A)
        out = {}
        if mode in ('compute_actor', 'compute_actor_critic'):
            out['logit'] = self.logit.expand(*shape, 2)
        if mode in ('compute_critic', 'compute_actor_critic'):
            out['value'] = self.value.expand(shape)
        return out


def make_policy(policy_class=GoBiggerPPOPolicy, **learn):
    cfg = GoBiggerPPOPolicy.default_config()
    # clip_ratio 100: the value clip never binds here (the value is 11.5 from the collected one in normalised units)
    cfg.learn.update({**dict(learning_rate=LR, epoch_per_collect=1, batch_size=2, clip_ratio=100.0,
                             entropy_weight=0.0, grad_clip=100.0, discount_factor=0.5, gae_lambda=1.0), **learn})
    torch.manual_seed(0)
    return policy_class(cfg, model=ConstantActorCritic(), enable_field=['learn'])


def rollout(env_num: int = 1):
    """One whole game of 2 steps in env 0 (rewards 1 then 3, actions 0 then 1); envs 1.. are padding (valid False)
    holding values that would wreck every figure if they were used (NaN rewards, huge values)."""
    T = 2
    data = dict(
        obs={'x': torch.zeros(T, env_num, 1, 1)},  # (T, E, A, 1)
        action=torch.tensor([[0] * env_num, [1] * env_num]).unsqueeze(-1),  # (T, E, A)
        logit=torch.zeros(T, env_num, 1, 2),  # the rollout's policy: uniform, as the model's initial logits
        value=torch.zeros(T, env_num, 1),  # what the critic said when collecting (normalised units)
        next_value=torch.zeros(T, env_num, 1),
        reward=torch.tensor([[1.0] * env_num, [3.0] * env_num]).unsqueeze(-1),
        done=torch.tensor([[False] * env_num, [True] * env_num]),
        cut=torch.tensor([[False] * env_num, [True] * env_num]),
        valid=torch.zeros(T, env_num, dtype=torch.bool),
    )
    data['valid'][:, 0] = True
    if env_num > 1:
        data['reward'][:, 1:] = float('nan')
        data['value'][:, 1:] = 1e6
        data['action'][:, 1:] = 0
    return data


def adam_first_step(grad: torch.Tensor, lr: float = LR) -> torch.Tensor:
    """Adam's first update of a parameter with gradient ``grad``: -lr * g / (|g| + eps) (bias-corrected moments)."""
    return -lr * grad / (grad.abs() + ADAM_EPS)


def test_value_normalisation_and_the_first_update_by_hand():
    policy = make_policy()
    stats = policy._forward_learn(rollout())
    # GAE with gamma 0.5, lambda 1 and zero values: returns 1 + 0.5 * 3 = 2.5 and 3
    assert stats['value_norm_mean'] == pytest.approx(2.75) and stats['value_norm_std'] == pytest.approx(0.25)
    # targets (2.5 - 2.75) / 0.25 = -1 and +1; the value 0.5: value loss 0.5 * mean(1.5^2, 0.5^2) = 0.625
    assert stats['value_loss'] == pytest.approx(0.625)
    # advantages 2.5 and 3 normalised in the minibatch (mean 2.75, sample std 0.25 * sqrt(2)): -1/sqrt(2), +1/sqrt(2);
    # ratio 1 at the rollout's own policy: policy loss -mean(normalised advantages) = 0
    assert stats['policy_loss'] == pytest.approx(0.0, abs=1e-7)
    assert stats['total_loss'] == pytest.approx(0.5 * 0.625)
    assert stats['approx_kl'] == 0.0 and stats['clipfrac'] == 0.0 and stats['update_count'] == 1
    # gradients: logit: -mean(adv * (onehot(a) - [.5, .5])) = -(-h * [.5, -.5] + h * [-.5, .5]) / 2 = [h, -h] / 2,
    # h = 1/sqrt(2); value: 0.5 weight x mean(v - target) = 0.5 x (1.5 - 0.5) / 2 = 0.25
    model = policy._learn_model
    half = 0.5 / 2 ** 0.5
    assert torch.allclose(model.logit.detach(), adam_first_step(torch.tensor([half, -half])))
    assert float(model.value.detach()) == pytest.approx(0.5 + float(adam_first_step(torch.tensor(0.25))))


def test_padded_steps_change_nothing():
    """valid False (async managers' padding, a team that sat out): the same update, statistics and figures as the
    rollout without them, though they hold NaN rewards and huge values."""
    alone, padded = make_policy(), make_policy()
    expected, got = alone._forward_learn(rollout(1)), padded._forward_learn(rollout(3))
    assert got == pytest.approx(expected, nan_ok=True)
    for (name, a), (_, b) in zip(alone._learn_model.named_parameters(), padded._learn_model.named_parameters()):
        assert torch.equal(a, b), name


def test_a_subclass_adds_a_loss_term_in_minibatch_loss():
    """minibatch_loss is the one place for another loss term: a subclass adds its own to the PPO loss, the update
    follows its gradient and the iteration's figures report it."""
    class WithLogitPenalty(GoBiggerPPOPolicy):
        def minibatch_loss(self, mb):
            loss, terms = super().minibatch_loss(mb)
            penalty = (self._learn_model.logit - 1.0).pow(2).sum()  # 2 at the initial logits (0, 0)
            return loss + 0.5 * penalty, {**terms, 'logit_penalty': penalty}

    plain, extended = make_policy(), make_policy(WithLogitPenalty)
    base, stats = plain._forward_learn(rollout()), extended._forward_learn(rollout())
    assert stats['logit_penalty'] == pytest.approx(2.0) and 'logit_penalty' not in base
    assert stats['total_loss'] == pytest.approx(base['total_loss'] + 0.5 * 2.0)
    # the penalty's gradient, 0.5 * 2 * (0 - 1) = -1 per logit, outweighs PPO's +-0.354: both logits step up by lr
    assert torch.allclose(extended._learn_model.logit.detach(), torch.full((2, ), LR), atol=1e-6)


def test_the_policy_and_its_learning_need_no_gobigger():
    """This tier runs where GoBigger is not installed: the policy's imports and a learn step, with every import of
    gobigger refused."""
    code = textwrap.dedent('''
        import importlib.abc, sys

        class NoGoBigger(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name == 'gobigger' or name.startswith('gobigger.'):
                    raise ImportError(f'{name} refused: this tier needs no GoBigger')

        sys.meta_path.insert(0, NoGoBigger())
        sys.path.insert(0, 'tests')
        import test_ppo_unit
        test_ppo_unit.test_value_normalisation_and_the_first_update_by_hand()
        assert not any(m == 'gobigger' or m.startswith('gobigger.') for m in sys.modules)
        print('ok')
    ''')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.strip().endswith('ok'), out.stderr[-2000:]
