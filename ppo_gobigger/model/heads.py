"""The actor head: player embedding (..., H) -> logits over the action table (..., ACTION_NUM).

The MOVE_DIRECTIONS moves are directions in the plane, and the head knows it: one MLP layer, then a heading
v = (v_x, v_y) and the move logits <u_k, v> for the unit vectors u_k of the action table (a von Mises-like
distribution over the moves, peaked around v's angle, as sharp as v is long); eject and split get logits of their own.

Why a heading: with one logit per move (DI-engine's DiscreteHead), PPO from scratch first learns a global preference
for one heading (straight lines eat more fresh food than a random walk) and greedy play runs into a wall; steering
that depends on the view (towards food, an edible thorn, away from a bigger ball) is a separate lesson for each of
the 16 logits. With a heading, every step's gradient moves all 16 together, and "towards the thing at (dx, dy)" is a
linear read-out of the embedding.
"""
import torch
import torch.nn as nn
from ding.torch_utils import MLP

from ppo_gobigger.envs.actions import ACTION_NUM, ACTION_TABLE, MOVE_DIRECTIONS


class DirectionalHead(nn.Module):
    """(..., H) -> {'logit': (..., ACTION_NUM)}, the moves first in action-table order, then eject and split."""

    def __init__(self, hidden_size: int) -> None:
        super().__init__()
        H = hidden_size
        self.body = MLP(H, H, H, layer_num=1, activation=nn.ReLU())
        self.heading = nn.Linear(H, 2)  # v, in the game's x/y frame
        self.other = nn.Linear(H, ACTION_NUM - MOVE_DIRECTIONS)  # eject, split
        directions = torch.tensor([ACTION_TABLE[k][:2] for k in range(MOVE_DIRECTIONS)], dtype=torch.float32)
        self.register_buffer('directions', directions, persistent=False)  # (MOVE_DIRECTIONS, 2) unit vectors u_k

    def forward(self, emb: torch.Tensor) -> dict:
        x = self.body(emb)  # (..., H)
        move = self.heading(x) @ self.directions.T  # (..., 2) @ (2, MOVE_DIRECTIONS) -> (..., MOVE_DIRECTIONS)
        return {'logit': torch.cat([move, self.other(x)], dim=-1)}  # (..., ACTION_NUM)

    def last_layers(self):
        return (self.heading, self.other)
