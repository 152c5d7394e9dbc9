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
gets one linear layer, and everything else runs after pooling, once per clone (``relu_max``): the ReLU after the max
(the same numbers: ReLU is monotone), the second layer. Padded partners are masked with -inf on a per-clone term
before it is broadcast to the pairs (pair_ent_fc(e_j)), so the pair tensor itself is written once and read once by
the pool; the rows of padded clones i are not masked at all: they are garbage that the clone pools fill. The pool
takes the max with its indices (``Tensor.max``): its backward scatters into the winners, where ``amax``'s backward
compares whole tensors. Slots unused by the whole batch are cut off first, and the relations are built only over the
slots kept.
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


def relu_max(x: torch.Tensor, dim: int) -> torch.Tensor:
    """``relu(x).max(dim)`` as ``relu(x.max(dim))``: equal, ReLU being monotone, and so are the gradients (the winner's,
    where it is > 0), but the ReLU and its backward run on the pooled tensor only. Masked entries hold -inf: they
    never win, and a set with nothing valid pools to relu(-inf) = 0.

    x: (..., M, D) pre-activations with ``dim`` pointing at M. Returns (..., D) >= 0.
    """
    return x.max(dim=dim).values.relu()


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
        if missing:  # e.g. observations recorded before the pairwise relations moved into the model
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
        pair = self.pair_rel_fc(clone_relation(clone))  # (N, C, C, CLONE_REL) -> (N, C_i, C_j, R)
        pair += e_j.unsqueeze(1)  # in place (the linear layer keeps no output for its backward); broadcast over i
        c = self.pair_out(relu_max(pair, dim=2))  # (N, C_i, R)

        # clone-thorn: pair (i, k) pooled over valid thorns k for each clone i.
        thorn = self.thorn_fc(thorn_relation(clone, flat('thorn')[:, :K]))  # (N, C, K, THORN_REL) -> (N, C, K, R)
        thorn.masked_fill_(~thorn_mask[:, None, :, None], padded)  # (N, 1, K, 1) broadcast over clones and R
        t = self.thorn_out(relu_max(thorn, dim=2))  # (N, C, R)

        h = self.clone_out_mlp(torch.cat([e, c, t], dim=-1))  # (N, C, H + 2R) -> (N, C, H)
        clones = torch.cat([masked_max(h, clone_mask, dim=1), masked_mean(h, clone_mask, dim=1)], dim=-1)  # (N, 2H)

        player = self.player_mlp(torch.cat([s, f, clones], dim=-1))  # (N, 4H) -> (N, H)
        return player.reshape(*lead, self.hidden_size)  # (*lead, H)
