"""Multi-agent PPO for GoBigger 0.2, in DI-engine style.

    from ppo_gobigger import train
    train(main_config, create_config, seed=0, max_env_step=100_000)

``train`` and ``evaluate`` are imported on first use: DI-engine's imports take seconds.
"""
__version__ = '0.1.0'

_LAZY = {'train': 'ppo_gobigger.pipeline.serial', 'evaluate': 'ppo_gobigger.pipeline.evaluate'}


def __getattr__(name):
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
