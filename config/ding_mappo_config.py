"""DI-engine's stock MAPPO on our env: PPOPolicy ('ppo', ding/policy/ppo.py) with multi_agent=True and its default
model MAVAC (ding/model/template/mavac.py), trained by ding.entry.serial_pipeline_onpolicy. The baseline of
docs/di-engine.md ("DI-engine's PPO on our env"): `gobigger-ding --config config/ding_mappo_config.py --seed K`.

The same work as our PPO against the bots (config/gobigger_ppo_vs_bots_config.py): st_t2p2, our team of 2 against
level-3 bots, action_repeat 4, reward log_score with team_spirit 0.5 (paid as one team reward, the players' mean:
see envs/ding_adapter.py), 180,000 env steps, 8 collector envs, n_sample 3600 (one whole game per env and collect, so
DI-engine's collector drops no steps), 2 evaluator envs and 8 games per evaluation, about every 36,000 env steps.
The input is our features, flattened (env.obs_format 'mavac': agent_state (2, 504), global_state (2, 1512),
action_mask (2, 18)); policy.model's sizes are set from the env.

Everything else is DI-engine's default for PPOPolicy and MAVAC, left out here on purpose: epoch_per_collect 10,
batch_size 64, learning_rate 3e-4, value_weight 0.5, entropy_weight 0.0, clip_ratio 0.2, adv_norm, value_norm,
orthogonal init, grad_clip_value 0.5 (norm), discount_factor 0.99, gae_lambda 0.95, recompute_adv; MAVAC's actor
encoder + head 256 wide (2 layers), critic 512 wide (1 layer).

DI-engine counts iterations per minibatch: ceil(3600 / 64) x 10 epochs = 570 per collect, so eval_freq 5700 and
save_ckpt_after_iter 5700 are every 10 collects (36,000 env steps); change them with batch_size or epoch_per_collect.
"""
from copy import deepcopy

from easydict import EasyDict

from gobigger_ppo_vs_bots_config import main_config as _ours

main_config = EasyDict(dict(
    exp_name='exp/ding_mappo_st_t2p2',
    seed=0,
    max_env_step=_ours.max_env_step,
    env=dict(obs_format='mavac', preset='st_t2p2', bot_level=3, **deepcopy(_ours.env)),  # envs, evaluation: defaults
    policy=dict(
        cuda=False,
        multi_agent=True,
        action_space='discrete',
        model=dict(action_space='discrete'),
        learn=dict(learner=dict(hook=dict(save_ckpt_after_iter=5700))),
        collect=dict(n_sample=3600),  # one whole game per env of 8, as ours
        eval=dict(evaluator=dict(eval_freq=5700)),
    ),
))

create_config = EasyDict(dict(
    env=dict(type='gobigger_ding', import_names=['ppo_gobigger.envs.ding_adapter']),
    env_manager=dict(type='subprocess'),
    policy=dict(type='ppo'),
))
