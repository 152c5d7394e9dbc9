"""Multi-agent actor-critic for GoBigger: one shared encoder, a per-player actor and a centralised per-player critic.

Shapes: B = batch (any leading dims work, e.g. (T, B)), A = players per team, H = hidden size, N = action count.

    obs dict (B, A, ...) -> Encoder -> emb (B, A, H)
    actor:  emb                                   -> DirectionalHead -> logit (B, A, N)  (heads.py)
    critic: emb ++ team mean(emb) ++ team max(emb) -> RegressionHead -> value (B, A)

The critic sees the whole team, but the value stays per player so PPO clips each player's own ratio.
"""
from typing import Dict

import math
import torch
import torch.nn as nn
from ding.model.common import RegressionHead
from ding.utils import MODEL_REGISTRY

from .encoder import Encoder
from .heads import DirectionalHead


@MODEL_REGISTRY.register('gobigger_ppo')
class GoBiggerPPOModel(nn.Module):
    """``forward(inputs, mode)`` with mode in ``GoBiggerPPOModel.mode``; inputs as in ``Encoder.forward``."""
    mode = ('compute_actor', 'compute_critic', 'compute_actor_critic')

    def __init__(
            self,
            hidden_size: int = 64,  # width of the player embedding and of both heads
    ) -> None:
        super().__init__()
        H = hidden_size
        self.encoder = Encoder(hidden_size=H)
        self.actor_head = DirectionalHead(H)
        # own embedding ++ team mean ++ team max -> 3H
        self.critic_head = RegressionHead(3 * H, 1, layer_num=2, hidden_size=H)
        self._init_weights()

    def _init_weights(self) -> None:
        """PPO init (cf. CleanRL / ding's ``ppo_param_init``): orthogonal weights with gain sqrt(2) and zero biases,
        then gain 0.01 on the policy's last layer (near-uniform first policy) and 1.0 on the value's last layer."""
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.orthogonal_(m.weight, gain=math.sqrt(2))
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
        for policy_last in self.actor_head.last_layers():
            nn.init.orthogonal_(policy_last.weight, gain=0.01)
        nn.init.orthogonal_(self.critic_head.last.weight, gain=1.0)

    def forward(self, inputs: Dict[str, torch.Tensor], mode: str) -> Dict[str, torch.Tensor]:
        if mode not in self.mode:
            raise ValueError(f'unknown forward mode {mode!r}; allowed: {self.mode}')
        return getattr(self, mode)(inputs)

    def compute_actor(self, inputs: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        """Returns {'logit': (B, A, N)}."""
        return self._actor(self.encoder(inputs))

    def compute_critic(self, inputs: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        """Returns {'value': (B, A)}."""
        return self._critic(self.encoder(inputs))

    def compute_actor_critic(self, inputs: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        """Returns {'logit': (B, A, N), 'value': (B, A)} from one encoder pass."""
        emb = self.encoder(inputs)  # (B, A, H)
        return {**self._actor(emb), **self._critic(emb)}

    def _actor(self, emb: torch.Tensor) -> Dict[str, torch.Tensor]:
        return {'logit': self.actor_head(emb)['logit']}  # (B, A, H) -> (B, A, N)

    def _critic(self, emb: torch.Tensor) -> Dict[str, torch.Tensor]:
        team = torch.cat([emb.mean(dim=-2), emb.amax(dim=-2)], dim=-1)  # (B, A, H) -> (B, 2H)
        team = team.unsqueeze(-2).expand(*emb.shape[:-1], team.shape[-1])  # (B, 2H) -> (B, A, 2H)
        value = self.critic_head(torch.cat([emb, team], dim=-1))['pred']  # (B, A, 3H) -> (B, A, 1) -> squeezed (B, A)
        return {'value': value}
