"""The PPO learning math: GAE, the clipped surrogate, the clipped value loss, value normalisation.

Pure functions of tensors (plus one small stateful normaliser), so that tests can check them against references.
Shapes: T = rollout length, E = envs, A = players per team, M = minibatch size (env steps), N = actions.
"""
from typing import Dict, Sequence, Tuple

import torch
import torch.nn as nn


def gae(
        reward: torch.Tensor,
        value: torch.Tensor,
        next_value: torch.Tensor,
        done: torch.Tensor,
        cut: torch.Tensor,
        gamma: float,
        lambda_: float,
) -> torch.Tensor:
    """Generalised advantage estimation, time-first.

    Arguments:
        reward: (T, E, A) each player's reward, or (T, E) one reward shared by the A players of a team.
        value: (T, E, A) V(s_t) per player.
        next_value: (T, E, A) V(s_{t+1}) per player; its value is ignored where ``done``.
        done: (T, E) the game ended after step t: nothing follows, no bootstrap.
        cut: (T, E) the trajectory stops after step t (game end, the rollout's last step, or a lost env);
            the recursion does not cross a cut. ``done`` implies ``cut``.
    Returns:
        advantage: (T, E, A).
    """
    T = reward.shape[0]
    if reward.dim() == value.dim() - 1:
        reward = reward.unsqueeze(-1)  # (T, E) -> (T, E, 1): broadcast over players
    not_done = 1.0 - done.to(value.dtype).unsqueeze(-1)  # (T, E, 1)
    not_cut = 1.0 - cut.to(value.dtype).unsqueeze(-1)  # (T, E, 1)
    delta = reward + gamma * not_done * next_value - value  # (T, E, A)
    advantage = torch.zeros_like(value)
    running = torch.zeros_like(value[0])  # (E, A)
    for t in reversed(range(T)):
        running = delta[t] + gamma * lambda_ * not_cut[t] * running
        advantage[t] = running
    return advantage


def policy_loss(
        logp: torch.Tensor,
        old_logp: torch.Tensor,
        advantage: torch.Tensor,
        clip_ratio: float,
) -> Dict[str, torch.Tensor]:
    """Clipped surrogate on each player's own probability ratio.

    Arguments:
        logp, old_logp, advantage: (M, A). The ratio is never averaged over players before clipping.
    Returns:
        loss (scalar, to minimise), approx_kl and clipfrac (scalars, no grad).
    """
    log_ratio = logp - old_logp  # (M, A)
    ratio = log_ratio.exp()
    surr1 = ratio * advantage
    surr2 = ratio.clamp(1.0 - clip_ratio, 1.0 + clip_ratio) * advantage
    objective = torch.min(surr1, surr2)  # (M, A)
    with torch.no_grad():
        approx_kl = ((ratio - 1.0) - log_ratio).mean()  # the low-variance estimator of KL(old || new)
        clipfrac = ((ratio - 1.0).abs() > clip_ratio).float().mean()
    return {'loss': -objective.mean(), 'approx_kl': approx_kl, 'clipfrac': clipfrac}


def value_loss(
        value: torch.Tensor,
        old_value: torch.Tensor,
        target: torch.Tensor,
        clip_ratio: float,
) -> torch.Tensor:
    """0.5 * the larger squared error of the value and of the value kept within clip_ratio of old_value.

    All of shape (M, A), in the (normalised) space the critic predicts in.
    """
    clipped = old_value + (value - old_value).clamp(-clip_ratio, clip_ratio)
    error = torch.max((value - target).pow(2), (clipped - target).pow(2))
    return 0.5 * error.mean()


def group_entropy(logit: torch.Tensor, groups: Sequence[slice]) -> torch.Tensor:
    """Entropy of the distribution over groups of actions (a group's probability is the sum of its actions'), e.g.
    the action table's kinds: move, eject, split.

    Arguments:
        logit: (..., N) unnormalised log-probabilities over the N actions.
        groups: G slices of the last axis that partition it.
    Returns:
        (...,) the entropy of each state's (G,) group distribution, in nats; 0 where one group has all the mass.
    """
    logp = torch.log_softmax(logit, dim=-1)  # (..., N)
    group_logp = torch.stack([torch.logsumexp(logp[..., g], dim=-1) for g in groups], dim=-1)  # (..., G)
    return -(group_logp.exp() * group_logp).sum(-1)  # (...,)


def local_moments(x: torch.Tensor) -> Tuple[int, torch.Tensor, torch.Tensor]:
    """(count, mean, variance) of the values of x, float64: the value-norm statistics of one process's returns."""
    x = x.detach().double().flatten()
    return x.numel(), x.mean(), x.var(unbiased=False)


def explained_variance(prediction: torch.Tensor, target: torch.Tensor) -> float:
    """1 - Var[target - prediction] / Var[target]; nan when the target is constant."""
    var_target = target.var()
    if var_target == 0:
        return float('nan')
    return float(1.0 - (target - prediction).var() / var_target)


class ValueNorm(nn.Module):
    """Running mean and variance of the returns; the critic predicts (return - mean) / std.

    DI-engine's RunningMeanStd only divides by std and is not saved in checkpoints; this one keeps its
    statistics as buffers, so they travel in ``state_dict``. Statistics over all batches seen (Chan et al.).
    """

    def __init__(self, epsilon: float = 1e-5) -> None:
        super().__init__()
        self.epsilon = epsilon
        self.register_buffer('mean', torch.zeros((), dtype=torch.float64))
        self.register_buffer('var', torch.ones((), dtype=torch.float64))
        self.register_buffer('count', torch.zeros((), dtype=torch.float64))

    @property
    def std(self) -> torch.Tensor:
        return self.var.clamp_min(self.epsilon).sqrt()

    @torch.no_grad()
    def update(self, x: torch.Tensor) -> None:
        x = x.detach().double().flatten()
        self.update_moments(x.numel(), x.mean(), x.var(unbiased=False))

    @torch.no_grad()
    def update_moments(self, n: int, batch_mean: torch.Tensor, batch_var: torch.Tensor) -> None:
        """Merge in a batch of n values given by its mean and (biased) variance, float64 scalars."""
        if self.count == 0:
            self.mean.copy_(batch_mean)
            self.var.copy_(batch_var)
            self.count.fill_(n)
            return
        total = self.count + n
        delta = batch_mean - self.mean
        m2 = self.var * self.count + batch_var * n + delta.pow(2) * self.count * n / total
        self.mean.add_(delta * n / total)
        self.var.copy_(m2 / total)
        self.count.copy_(total)

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return ((x.double() - self.mean) / self.std).to(x.dtype)

    def denormalize(self, x: torch.Tensor) -> torch.Tensor:
        return (x.double() * self.std + self.mean).to(x.dtype)
