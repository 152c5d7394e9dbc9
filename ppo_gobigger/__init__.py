"""Multi-agent PPO for GoBigger 0.2, in DI-engine style.

    from ppo_gobigger import train
    train(main_config, create_config, seed=0, max_env_step=100_000)

``train`` and ``evaluate`` are imported on first use: DI-engine's imports take seconds.

Layout, along the data path; a module imports only from the lines above its own, never in a circle
(tests/test_layout.py checks every import, those inside functions too):
    envs/       a GoBigger game -> fixed-shape features, the action table, opponents (DI-engine env)
    model/      shared encoder -> actor and critic heads
    policy/     PPO's learn / collect / eval modes and its math
    config.py   the complete default config (the recipe), assembled from the classes above, and the checks of a
                user's config; retired_keys.py drops the keys since removed from saved configs
    pipeline/   play, learn, distributed, monitor, then the training loop (pipeline/__init__.py has the map)
    cli.py, config_reference.py   the command lines and the generated config reference
quiet.py imports nothing of ours: the entry points call it first. files.py (every file written atomically) and
errors.py (ConfigError) import nothing of ours either. config/ (beside this package) is data only.
"""
__version__ = '0.1.0'

_LAZY = {'train': 'ppo_gobigger.pipeline.serial', 'evaluate': 'ppo_gobigger.pipeline.evaluate'}


def __getattr__(name):
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
