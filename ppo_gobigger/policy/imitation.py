"""Learning from another player, beside PPO's own losses (ppo_math.py): behaviour cloning of the bots' demonstrations
(the kickstart, pipeline/learn/pretrain.py; policy.learn.imitation_weight) and distillation of the frozen kickstart
(policy.learn.kickstart_kl, the KL of ppo_math.distillation_kl).

Shapes: S = demonstration or rollout steps, A = players per team, N = actions, M = minibatch.
"""
import copy
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .ppo_math import ValueNorm, value_loss

Observations = Dict[str, torch.Tensor]  # {key: (S, A, ...)}


def frozen_copy(model: nn.Module) -> nn.Module:
    """A copy of ``model`` that is never trained: the kickstart that kickstart_kl distils."""
    return copy.deepcopy(model).eval().requires_grad_(False)


@torch.no_grad()
def teacher_log_probs(teacher: nn.Module, obs: Observations, batch_size: int) -> torch.Tensor:
    """The teacher's log-probabilities on every state of ``obs``, in chunks of batch_size: (S, A, N)."""
    S = len(next(iter(obs.values())))
    device = next(iter(obs.values())).device
    logits = [teacher({k: v[idx] for k, v in obs.items()}, mode='compute_actor')['logit']
              for idx in torch.arange(S, device=device).split(batch_size)]
    return torch.log_softmax(torch.cat(logits), -1)


def imitation_loss(model: nn.Module, demonstrations: Tuple[Observations, torch.Tensor], size: int) -> torch.Tensor:
    """Cross-entropy of the actor on ``size`` demonstration steps drawn at random (with replacement)."""
    obs, action = demonstrations  # {key: (S, A, ...)}, (S, A)
    idx = torch.randint(len(action), (size, ), device=action.device)
    logit = model({k: v[idx] for k, v in obs.items()}, mode='compute_actor')['logit']  # (M, A, N)
    return F.cross_entropy(logit.flatten(0, 1), action[idx].flatten())


def behaviour_cloning(model: nn.Module, optimizer: torch.optim.Optimizer, obs: Observations, action: torch.Tensor,
                      returns: torch.Tensor, value_norm: Optional[ValueNorm], epochs: int, batch_size: int,
                      value_weight: float, grad_clip: float,
                      on_update: Optional[Callable[[int, Dict[str, float]], None]] = None) -> Dict[str, float]:
    """The actor learns to play ``action`` (cross-entropy) and the critic the games' discounted ``returns``, over
    ``epochs`` of shuffled minibatches; the optimizer's learning rate is the caller's.

    obs: {key: (S, A, ...)}, action: (S, A) demonstrated action indices, returns: (S, A) in return units.
    value_norm: the policy's statistics, updated with the returns and used for the targets (None: raw returns).
    on_update(epoch, stats): called after each minibatch with its epoch (from 0) and its figures (progress).
    Returns the mean over the last epoch of imitation_loss, imitation_accuracy and value_loss.
    """
    if value_norm is not None:
        value_norm.update(returns)
        target = value_norm.normalize(returns)  # (S, A)
    else:
        target = returns
    model.train()
    S = len(action)
    stats: Dict[str, List[float]] = {}
    for epoch in range(epochs):
        stats = {}
        for idx in torch.randperm(S, device=action.device).split(batch_size):
            out = model({k: v[idx] for k, v in obs.items()}, mode='compute_actor_critic')
            logit = out['logit']  # (M, A, N)
            imitation = F.cross_entropy(logit.flatten(0, 1), action[idx].flatten())
            vl = value_loss(out['value'], target[idx], target[idx], None)  # plain squared error
            loss = imitation + value_weight * vl
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
            optimizer.step()
            accuracy = (logit.argmax(-1) == action[idx]).float().mean()
            for name, x in (('imitation_loss', imitation), ('imitation_accuracy', accuracy), ('value_loss', vl)):
                stats.setdefault(name, []).append(float(x.detach()))
            if on_update is not None:
                on_update(epoch, {name: values[-1] for name, values in stats.items()})
    return {k: float(np.mean(v)) for k, v in stats.items()}
