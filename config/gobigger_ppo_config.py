"""The default run, the recipe: PPO from scratch in a league of the run's own snapshots and GoBigger's level-2 and
level-3 bots, our team of 2 on st_t2p2, 360,000 env steps. `make train` runs it.

Every setting is the code's default (ppo_gobigger.config.default_config(); docs/configuration.md says what each key
does and docs/results.md what the recipe's runs scored), so main_config only names the experiment folder. The files
beside it state what differs for another preset or a variant. DI-engine's dizoo convention: main_config and
create_config, the env manager's type in create_config.
"""
from easydict import EasyDict

# every value is the default; DI-engine's entries read the sections env and policy.learn, so they are here, empty
main_config = EasyDict(dict(exp_name='exp/gobigger_ppo_st_t2p2', env=dict(), policy=dict(learn=dict())))

create_config = EasyDict(dict(
    env=dict(type='gobigger', import_names=['ppo_gobigger.envs.gobigger_env']),
    env_manager=dict(type='subprocess'),
    policy=dict(type='gobigger_ppo', import_names=['ppo_gobigger.policy.gobigger_ppo']),
))
