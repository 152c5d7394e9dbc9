"""What every way of running the policy starts from: the random seeds, the policy with its model, and a usable
experiment folder (the training loop, each Ray actor, a checkpoint's evaluation, the benchmarks)."""
import os
import random
import shutil
import tempfile

import numpy as np
import torch
from easydict import EasyDict

from ..config import ConfigError

MIN_FREE_DISK_MB = 200  # free disk an experiment folder needs at the start (a checkpoint is ~1 MB at default size)


def set_global_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def build_policy(cfg: EasyDict, create_cfg: EasyDict, enable_field=None):
    """(policy, model): the registered policy of ``create_cfg`` around a new model of ``cfg.policy.model``;
    ``enable_field`` the modes to set up (DI-engine's: 'learn', 'collect', 'eval'; None: all)."""
    from ding.utils import POLICY_REGISTRY, import_module

    import_module(create_cfg.policy.import_names)
    model = build_model(cfg)
    policy = POLICY_REGISTRY.get(create_cfg.policy.type)(cfg.policy, model=model, enable_field=enable_field)
    return policy, model


def build_model(cfg: EasyDict):
    """A new model of ``cfg.policy.model`` (a compiled config's)."""
    from ..model import GoBiggerPPOModel

    return GoBiggerPPOModel(**cfg.policy.model)


def check_exp_dir(exp_dir: str) -> None:
    """Fail now, not an hour in: the experiment folder must be writable and its disk must have room."""
    try:
        os.makedirs(exp_dir, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=exp_dir):
            pass
    except OSError as e:
        raise ConfigError(f'experiment folder {exp_dir!r} is not writable: {e}') from e
    free_mb = shutil.disk_usage(exp_dir).free / 2**20
    if free_mb < MIN_FREE_DISK_MB:
        raise ConfigError(
            f'only {free_mb:.0f} MB free for experiment folder {exp_dir!r}; checkpoints and logs need at least '
            f'{MIN_FREE_DISK_MB} MB'
        )
