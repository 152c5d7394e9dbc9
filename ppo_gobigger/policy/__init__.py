from .gobigger_ppo import GoBiggerPPOPolicy
# registers 'gobigger_ppo_command', which DI-engine's serial entries (serial_pipeline_onpolicy) build
from .ding_modes import GoBiggerPPOCommandModePolicy  # noqa: F401
