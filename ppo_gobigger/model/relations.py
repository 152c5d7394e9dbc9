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
    """clone: (N, C, CLONE_DIM) features -> (N, C_i, C_j, CLONE_REL_DIM), clone j seen from clone i.

    Each channel is written in place into one preallocated tensor (fewer passes than stacking; this runs in every
    inference step). The features get no gradient (out= arguments): they are observations.
    """
    N, C, _ = clone.shape
    rel = clone.new_empty(N, C, C, CLONE_REL_DIM)
    ci, cj = clone.unsqueeze(2), clone.unsqueeze(1)  # clone i: (N, C_i, 1, CLONE_DIM); clone j: (N, 1, C_j, CLONE_DIM)
    r_i, r_j = ci[..., RADIUS], cj[..., RADIUS]  # (N, C_i, 1), (N, 1, C_j)
    dist = rel[..., 2]  # (N, C_i, C_j)
    torch.sub(cj[..., POS_X:POS_Y + 1], ci[..., POS_X:POS_Y + 1], out=rel[..., 0:2])  # (N, C_i, C_j, 2)
    torch.hypot(rel[..., 0], rel[..., 1], out=dist)
    torch.sub(r_j, r_i, out=rel[..., 3])
    torch.gt(ci[..., CLONE_EATER], cj[..., CLONE_PREY], out=rel[..., 4])  # i eats j
    torch.gt(cj[..., CLONE_EATER], ci[..., CLONE_PREY], out=rel[..., 5])  # j eats i
    torch.sub(dist, r_i + r_j, out=rel[..., 6])
    return rel


def thorn_relation(clone: torch.Tensor, thorn: torch.Tensor) -> torch.Tensor:
    """clone: (N, C, CLONE_DIM), thorn: (N, K, THORN_DIM) features -> (N, C, K, THORN_REL_DIM), thorn k seen from
    clone i. Built like ``clone_relation``."""
    N, C, _ = clone.shape
    K = thorn.shape[1]
    rel = clone.new_empty(N, C, K, THORN_REL_DIM)
    ci, tk = clone.unsqueeze(2), thorn.unsqueeze(1)  # clone i: (N, C, 1, CLONE_DIM); thorn k: (N, 1, K, THORN_DIM)
    r_i, r_k = ci[..., RADIUS], tk[..., RADIUS]  # (N, C, 1), (N, 1, K)
    dist = rel[..., 2]  # (N, C, K)
    torch.sub(tk[..., POS_X:POS_Y + 1], ci[..., POS_X:POS_Y + 1], out=rel[..., 0:2])  # (N, C, K, 2)
    torch.hypot(rel[..., 0], rel[..., 1], out=dist)
    rel[..., 3] = r_k  # broadcast over clones
    torch.gt(ci[..., CLONE_EATER], tk[..., THORN_PREY], out=rel[..., 4])  # i eats k
    torch.sub(dist, r_i + r_k, out=rel[..., 5])
    return rel
