"""DI-engine's stock PPO on our env as independent PPO: PPOPolicy ('ppo', ding/policy/ppo.py) with its default
single-agent model VAC (ding/model/template/vac.py), shared by the two players, each an agent with its own value
from its own features (no centralised critic), trained by ding.entry.serial_pipeline_onpolicy:
`gobigger-ding --config config/ding_ppo_config.py --seed K`.

config/ding_mappo_config.py's settings (the same work as our PPO against the bots,
config/gobigger_ppo_vs_bots_config.py: st_t2p2, our team of 2 against level-3 bots, action_repeat 4, reward log_score
with team_spirit 0.5 paid as one team reward, 180,000 env steps, 8 collector envs, n_sample 3600, 2 evaluator envs
and 8 games per evaluation, about every 36,000 env steps) but for the model. The input is our features, flattened
(env.obs_format 'vac': (2, 504), one row per player; VAC acts on the last axis, so logits are (B, 2, 18) and values
(B, 2)); policy.model's sizes are set from the env.

Everything else is DI-engine's default for PPOPolicy and VAC, left out here on purpose: epoch_per_collect 10,
batch_size 64, learning_rate 3e-4, value_weight 0.5, entropy_weight 0.0, clip_ratio 0.2, adv_norm, value_norm,
orthogonal init, grad_clip_value 0.5 (norm), discount_factor 0.99, gae_lambda 0.95, recompute_adv; VAC's shared
encoder 128-128-64, actor and critic heads 64 wide.

DI-engine counts iterations per minibatch: ceil(3600 / 64) x 10 epochs = 570 per collect, so eval_freq 5700 and
save_ckpt_after_iter 5700 are every 10 collects (36,000 env steps); change them with batch_size or epoch_per_collect.
"""
from copy import deepcopy

from ding_mappo_config import create_config, main_config as _mappo

main_config = deepcopy(_mappo)
main_config.exp_name = 'exp/ding_ppo_st_t2p2'
main_config.env.obs_format = 'vac'
main_config.policy.multi_agent = False
