"""Pairwise relations of one player's view, built from its per-item features (``ppo_gobigger.envs.features``).

The env sends each clone and thorn once; the pairs are built here, inside the model, over the slots the batch uses.
Units are the features': positions relative to the player's centre c and divided by h (half its view box).
Shapes: N = players in the batch, C = clone slots, K = thorn slots.

clone_relation (N, C_i, C_j, CLONE_REL_DIM): clone j seen from clone i
    0, 1 (x_j - x_i, y_j - y_i) / h      2 distance / h      3 (r_j - r_i) / h
    4 i can eat j (score_i > eat_ratio * score_j)      5 j can eat i      6 surface gap (distance - r_i - r_j) / h
    A pure score test: it ignores that a player's own balls merge instead (is_own in ``clone`` tells them apart).
thorn_relation (N, C, K, THORN_REL_DIM): thorn k seen from clone i
    0, 1 (x_k - x_i, y_k - y_i) / h      2 distance / h      3 r_k / h
    4 clone i can eat thorn k (score_i > eat_ratio * score_k)      5 surface gap (distance - r_i - r_k) / h

The eat tests compare the eater and prey keys the env wrote (``features.CLONE_EATER``): eat_ratio comes in with them.
A pair with a padded item gets finite values of no meaning; the encoder pools over valid pairs only.
"""
import torch

from ppo_gobigger.envs.features import CLONE_EATER, CLONE_PREY, POS_X, POS_Y, RADIUS, THORN_PREY

CLONE_REL_DIM = 7
THORN_REL_DIM = 6


def clone_relation(clone: torch.Tensor) -> torch.Tensor:
    """clone: (N, C, CLONE_DIM) features -> (N, C_i, C_j, CLONE_REL_DIM), clone j seen from clone i."""
    pos = clone[..., POS_X:POS_Y + 1]  # (N, C, 2)
    delta = pos.unsqueeze(1) - pos.unsqueeze(2)  # (N, 1, C_j, 2) - (N, C_i, 1, 2) -> (N, C_i, C_j, 2)
    dist = torch.hypot(delta[..., 0], delta[..., 1])  # (N, C_i, C_j)
    r_i, r_j = clone[..., RADIUS].unsqueeze(2), clone[..., RADIUS].unsqueeze(1)  # (N, C_i, 1), (N, 1, C_j)
    i_eats_j = clone[..., CLONE_EATER].unsqueeze(2) > clone[..., CLONE_PREY].unsqueeze(1)  # (N, C_i, C_j)
    j_eats_i = i_eats_j.transpose(1, 2)  # [i, j] = eater_j > prey_i
    scalars = [dist, r_j - r_i, i_eats_j.to(clone.dtype), j_eats_i.to(clone.dtype), dist - r_i - r_j]
    return torch.cat([delta, torch.stack(scalars, dim=-1)], dim=-1)  # (N, C_i, C_j, 2 + 5)


def thorn_relation(clone: torch.Tensor, thorn: torch.Tensor) -> torch.Tensor:
    """clone: (N, C, CLONE_DIM), thorn: (N, K, THORN_DIM) features -> (N, C, K, THORN_REL_DIM), thorn k seen from
    clone i."""
    delta = thorn[..., POS_X:POS_Y + 1].unsqueeze(1) - clone[..., POS_X:POS_Y + 1].unsqueeze(2)  # (N, C, K, 2)
    dist = torch.hypot(delta[..., 0], delta[..., 1])  # (N, C, K)
    r_i = clone[..., RADIUS].unsqueeze(2)  # (N, C, 1)
    r_k = thorn[..., RADIUS].unsqueeze(1).expand_as(dist)  # (N, 1, K) -> (N, C, K)
    i_eats_k = clone[..., CLONE_EATER].unsqueeze(2) > thorn[..., THORN_PREY].unsqueeze(1)  # (N, C, K)
    scalars = [dist, r_k, i_eats_k.to(clone.dtype), dist - r_i - r_k]
    return torch.cat([delta, torch.stack(scalars, dim=-1)], dim=-1)  # (N, C, K, 2 + 4)
