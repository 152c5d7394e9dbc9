from .encoder import Encoder
from .gobigger_ppo_model import GoBiggerPPOModel
