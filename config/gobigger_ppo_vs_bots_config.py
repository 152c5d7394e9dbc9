"""A variant: PPO from scratch against level-3 bots alone (no league), 180,000 env steps, with the reward and discount
of its published agent (zoo/st_t2p2_scratch_s0): 'log_score' and 0.99.

With bot opponents it is also a config DI-engine's own entry runs as it is:
    from ding.entry import serial_pipeline_onpolicy
    serial_pipeline_onpolicy((main_config, create_config), seed=0, max_env_step=180_000)
DI-engine's stock PPO and MAPPO baselines (config/ding_mappo_config.py) play its games.
"""
from easydict import EasyDict

main_config = EasyDict(dict(
    exp_name='exp/gobigger_ppo_vs_bots_st_t2p2',
    max_env_step=180_000,
    env=dict(opponent='bot', reward='log_score'),
    policy=dict(learn=dict(discount_factor=0.99)),
))

create_config = EasyDict(dict(  # spelled out, not imported: DI-engine's read_config loads this file on its own
    env=dict(type='gobigger', import_names=['ppo_gobigger.envs.gobigger_env']),
    env_manager=dict(type='subprocess'),
    policy=dict(type='gobigger_ppo', import_names=['ppo_gobigger.policy.gobigger_ppo']),
))
