"""Encode one player's fixed-shape view (see ``ppo_gobigger.envs.features``) into one embedding.

Data path, per player (C = MAX_CLONE, K = MAX_THORN, H = hidden size, R = relation width):

    scalar (16,)                         -> MLP                                   -> s   (H,)
    food   (2, 8, 8)                     -> flatten -> MLP                        -> f   (H,)
    clone[:, :10] ++ food_relation (C, 7) -> MLP                                  -> e_i (C, H)
    clone (C, 12)                         -> clone_relation (C, C, 7)   (relations.py, no parameters)
    clone (C, 12), thorn (K, 4)           -> thorn_relation (C, K, 6)
    clone_relation, e_j                   -> pair layer, max over valid j -> layer -> c_i (C, R)
    thorn_relation                        -> pair layer, max over valid k -> layer -> t_i (C, R)
    e_i ++ c_i ++ t_i                     -> MLP                                  -> h_i (C, H)
    h_i                                   -> masked max ++ masked mean over valid i -> (2H,)
    s ++ f ++ clone summary               -> MLP                                  -> player embedding (H,)

Padded items (mask False) never reach the output: every pool fills them before reducing, and a set with no valid
item pools to zeros.

The pairwise tensors (N, C, C, R) and (N, C, K, R) are where the time goes (C*C = 256 pairs per player), so each pair
gets one linear layer, and everything else runs after pooling, once per clone (``pair_max``): the ReLU after the max
(the same numbers: ReLU is monotone), the second layer. The pair tensor is built without autograd, only to find each
max's winning partner; the winners' values are computed again with autograd from their relations, so the backward
never touches the pair tensor (its backward was the largest cost left in a PPO update). Padded partners get -inf,
so they never win; the rows of padded clones i are not masked at all: they are garbage that the clone pools fill.
Slots unused by the whole batch are cut off first, and the relations are built only over the slots kept.
"""
from typing import Dict, Optional

import torch
import torch.nn as nn
from ding.torch_utils import MLP, fc_block

from ppo_gobigger.envs.features import CLONE_EMBED_DIM, FOOD_CHANNELS, FOOD_GRID, FOOD_REL_DIM, OBS_SHAPES, SCALAR_DIM
from .relations import CLONE_REL_DIM, THORN_REL_DIM, clone_relation, thorn_relation


def masked_max(x: torch.Tensor, mask: torch.Tensor, dim: int) -> torch.Tensor:
    """Max of ``x`` over ``dim`` taking only entries where ``mask`` is True; zeros where no entry is valid.

    x: (..., M, D) with ``dim`` pointing at M; mask: broadcastable to x without its last axis, i.e. (..., M).
    """
    mask = mask.unsqueeze(-1)  # (..., M, 1)
    pooled = x.masked_fill(~mask, float('-inf')).max(dim=dim).values  # (..., D); -inf where nothing is valid
    any_valid = mask.any(dim=dim)  # (..., 1)
    return torch.where(any_valid, pooled, torch.zeros_like(pooled))


def masked_mean(x: torch.Tensor, mask: torch.Tensor, dim: int) -> torch.Tensor:
    """Mean of ``x`` over ``dim`` taking only entries where ``mask`` is True; zeros where no entry is valid.

    Shapes as in ``masked_max``. Padded entries are filled with 0 (not multiplied) so even inf/nan garbage drops out.
    """
    mask = mask.unsqueeze(-1)  # (..., M, 1)
    total = x.masked_fill(~mask, 0.).sum(dim=dim)  # (..., D)
    count = mask.sum(dim=dim).clamp(min=1)  # (..., 1)
    return total / count


def used_slots(mask: torch.Tensor) -> int:
    """Number of leading slots that hold a valid item for at least one row: mask (N, M) -> 1 + last valid index
    (at least 1, so every pool has an axis to reduce; an all-False column pools to zeros)."""
    valid_slots = mask.any(dim=0).nonzero()  # (M', 1)
    return int(valid_slots.max()) + 1 if len(valid_slots) else 1


def pair_max(fc: nn.Linear, rel: torch.Tensor, partner: torch.Tensor) -> torch.Tensor:
    """Max over partners m of ``fc(rel) + partner``, with autograd through the winners only.

    rel: (N, C, M, F) relations of each item i to each partner m (observations: no gradient);
    partner: (N, M, R) or (N, M, 1), a term per partner, -inf where the partner is padding (then it never wins, and
    a row with no valid partner pools to -inf). Returns (N, C, R).

    The dense (N, C, M, R) values are built under no_grad to find each winner; with autograd on, the winners' values
    are then computed again from their relations (F multiply-adds each), so that the weights' gradients come from the
    (N, C, R, F) winning relations instead of a (N*C*M, R)^T (N*C*M, F) product that is zero but for 1 row in M.
    The same winners and values as ``fc(rel) + partner`` then ``Tensor.max``, up to float32 rounding of the sums.
    """
    N, C, M, F = rel.shape
    R = fc.out_features
    partner = partner.expand(N, M, R)
    with torch.no_grad():
        dense = torch.nn.functional.linear(rel, fc.weight, fc.bias)  # (N, C, M, R)
        dense += partner.unsqueeze(1)  # (N, 1, M, R), broadcast over items
        best = dense.max(dim=2)  # values and indices (N, C, R)
    if not torch.is_grad_enabled():  # inference: the dense values are the output
        return best.values
    winner_rel = rel.gather(2, best.indices.unsqueeze(-1).expand(N, C, R, F))  # (N, C, R, F) = rel[n, i, idx, f]
    return (winner_rel * fc.weight).sum(dim=-1) + fc.bias + partner.gather(1, best.indices)  # (N, C, R)


class Encoder(nn.Module):
    """Player view -> embedding: inputs are the ``OBS_SHAPES`` dict with any leading dims, e.g. (B, A, ...);
    the output is (B, A, hidden_size)."""

    def __init__(self, hidden_size: int = 64, relation_size: Optional[int] = None) -> None:
        """
        Arguments:
            - hidden_size: width H of every per-player and per-clone embedding.
            - relation_size: width R of the pairwise (clone-clone, clone-thorn) layers; default H // 2. These run on
              C*C pairs per player, so they dominate compute and memory.
        """
        super().__init__()
        H = hidden_size
        R = relation_size if relation_size is not None else max(hidden_size // 2, 1)
        act = nn.ReLU()
        self.hidden_size = H
        self.relation_size = R

        self.scalar_mlp = MLP(SCALAR_DIM, H, H, layer_num=2, activation=act)
        self.food_mlp = MLP(FOOD_CHANNELS * FOOD_GRID * FOOD_GRID, H, H, layer_num=2, activation=act)
        self.clone_mlp = MLP(CLONE_EMBED_DIM + FOOD_REL_DIM, H, H, layer_num=2, activation=act)
        # clone-clone pair (i, j): relation_ij and clone j's embedding are projected to R and added (one layer per
        # pair); after the pool over j, one more layer per clone.
        self.pair_rel_fc = nn.Linear(CLONE_REL_DIM, R)
        self.pair_ent_fc = nn.Linear(H, R, bias=False)  # pair_rel_fc already carries the bias
        self.pair_out = fc_block(R, R, activation=act)
        self.thorn_fc = nn.Linear(THORN_REL_DIM, R)
        self.thorn_out = fc_block(R, R, activation=act)
        self.clone_out_mlp = MLP(H + 2 * R, H, H, layer_num=2, activation=act)
        self.player_mlp = MLP(4 * H, H, H, layer_num=2, activation=act)

    def forward(self, inputs: Dict[str, torch.Tensor]) -> torch.Tensor:
        """inputs[key]: (*lead, *OBS_SHAPES[key]), e.g. lead = (B, A). Returns (*lead, H)."""
        missing = OBS_SHAPES.keys() - inputs.keys()
        if missing:  # e.g. observations of another layout (with the env's pair tensors in place of 'thorn')
            raise KeyError(f'observation lacks {sorted(missing)}; got {sorted(inputs)}, expected {list(OBS_SHAPES)}')
        lead = inputs['scalar'].shape[:-1]  # e.g. (B, A)

        def flat(key: str) -> torch.Tensor:  # (*lead, ...) -> (N, ...), N = prod(lead)
            x = inputs[key]
            return x.reshape(-1, *x.shape[len(lead):])

        clone_mask = flat('clone_mask').bool()  # (N, C); float 0/1 masks are accepted too
        thorn_mask = flat('thorn_mask').bool()  # (N, K)
        # Slots past the last one valid anywhere in the batch are padding for every player: cut them off so the
        # pairwise tensors are (N, C', C', R) and (N, C', K', R). Thorns in view rarely exceed 4 of K = 8.
        C, K = used_slots(clone_mask), used_slots(thorn_mask)
        clone_mask, thorn_mask = clone_mask[:, :C], thorn_mask[:, :K]

        s = self.scalar_mlp(flat('scalar'))  # (N, H)
        food = flat('food')  # (N, FOOD_CHANNELS, FOOD_GRID, FOOD_GRID)
        f = self.food_mlp(food.flatten(start_dim=1))  # (N, FOOD_CHANNELS * FOOD_GRID**2) -> (N, H)

        clone = flat('clone')[:, :C]  # (N, C, CLONE_DIM)
        clone_in = torch.cat([clone[..., :CLONE_EMBED_DIM], flat('food_relation')[:, :C]], dim=-1)  # (N, C, 10 + 7)
        e = self.clone_mlp(clone_in)  # (N, C, H)

        # clone-clone: pair (i, j) sees relation_ij and e_j; pooled over valid j for each clone i (rows of padded i
        # are left unmasked: the clone pools below fill them).
        padded = float('-inf')
        e_j = self.pair_ent_fc(e).masked_fill(~clone_mask.unsqueeze(-1), padded)  # (N, C_j, R), -inf at padded j
        pair = pair_max(self.pair_rel_fc, clone_relation(clone), e_j)  # relations (N, C_i, C_j, 7) -> (N, C_i, R)
        c = self.pair_out(pair.relu())  # (N, C_i, R)

        # clone-thorn: pair (i, k) pooled over valid thorns k for each clone i.
        thorn_pad = torch.zeros_like(thorn_mask, dtype=e.dtype).masked_fill_(~thorn_mask, padded)  # (N, K)
        thorn = pair_max(self.thorn_fc, thorn_relation(clone, flat('thorn')[:, :K]), thorn_pad.unsqueeze(-1))
        t = self.thorn_out(thorn.relu())  # relations (N, C, K, 6) -> (N, C, R)

        h = self.clone_out_mlp(torch.cat([e, c, t], dim=-1))  # (N, C, H + 2R) -> (N, C, H)
        clones = torch.cat([masked_max(h, clone_mask, dim=1), masked_mean(h, clone_mask, dim=1)], dim=-1)  # (N, 2H)

        player = self.player_mlp(torch.cat([s, f, clones], dim=-1))  # (N, 4H) -> (N, H)
        return player.reshape(*lead, self.hidden_size)  # (*lead, H)
