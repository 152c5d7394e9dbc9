"""Default run: our team of 2 against level-3 bots on st_t2p2 (23 min 17 s on a 2-core machine at commit 51d55ed).

Every key is documented where its default lives (docs/configuration.md, "Config reference"); this file sets what
differs.
"""
from easydict import EasyDict

main_config = EasyDict(dict(
    exp_name='exp/gobigger_ppo_st_t2p2',
    seed=0,
    max_env_step=143_360,
    env=dict(
        preset='st_t2p2',
        opponent='bot',
        bot_level=3,
        collector_env_num=4,
        evaluator_env_num=2,
        n_evaluator_episode=4,
        manager=dict(type='subprocess'),
    ),
    policy=dict(
        model=dict(hidden_size=64),
        learn=dict(
            epoch_per_collect=4,
            batch_size=512,
            learning_rate=5e-4,
            entropy_weight=0.01,
        ),
        collect=dict(n_sample=4096),
        eval=dict(evaluator=dict(eval_freq=35_840)),
    ),
))

create_config = EasyDict(dict(
    env=dict(type='gobigger_ppo', import_names=['ppo_gobigger.envs.gobigger_env']),
    policy=dict(type='gobigger_ppo', import_names=['ppo_gobigger.policy.gobigger_ppo']),
))
