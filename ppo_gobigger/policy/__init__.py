from .gobigger_ppo import GoBiggerPPOPolicy
