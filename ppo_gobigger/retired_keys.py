"""Config keys that are gone: a checkpoint's saved config (every zoo agent's included) may still hold them, and it
must still compile. config.compile_config drops them first (drop_retired_keys)."""
import copy
import logging
from typing import Dict

from .errors import ConfigError

# {dotted key: (the value that matches what the code does now, what the key did)}. At that value a key is dropped
# quietly; a 'training' key at another value is dropped with one log line (the weights play as they are); a 'model'
# key (it changed the network or what it observes) at another value cannot be dropped: ConfigError. A section left
# empty is dropped too. CHANGELOG.md says when each went.
RETIRED_KEYS = {
    'policy.type': ('gobigger_ppo', 'no-op'),
    'policy.on_policy': (True, 'no-op'),
    'policy.multi_gpu': (False, 'no-op'),
    'policy.bp_update_sync': (True, 'no-op'),
    'policy.traj_len_inf': (False, 'no-op'),
    'policy.load_learn_state': (False, 'training'),
    'policy.model.action_shape': (None, 'model'),
    'policy.model.relation_size': (None, 'model'),
    'policy.model.actor_head': ('directional', 'model'),
    'policy.learn.resume_training': (False, 'no-op'),
    'policy.learn.critic_warmup_iters': (0, 'training'),
    'policy.learn.lr_warmup_iters': (0, 'training'),
    'policy.learn.lr_anneal': (False, 'training'),
    'policy.learn.imitation_anneal': (False, 'training'),
    'policy.learn.imitation_weight': (0.0, 'training'),
    'policy.learn.kickstart_kl': (0.0, 'training'),
    'policy.learn.kickstart_kl_env_steps': (None, 'training'),
    'policy.learn.kickstart_teacher': (None, 'training'),
    'policy.learn.target_kl': (None, 'training'),
    'policy.learn.dual_clip': (None, 'training'),
    'policy.learn.value_clip': (True, 'training'),
    'policy.learn.adv_norm': (True, 'training'),
    'policy.learn.value_norm': (True, 'training'),
    'policy.learn.max_nonfinite_updates': (10, 'no-op'),
    'pretrain.env_steps': (0, 'training'),
    'pretrain.bot_level': (2, 'no-op'),
    'pretrain.epochs': (4, 'no-op'),
    'pretrain.learning_rate': (None, 'no-op'),
    'replay.save_best': (False, 'no-op'),
    'replay.episodes': (1, 'no-op'),
    'league.all_teams': (True, 'training'),
    'league.sampling': ('pfsp', 'training'),
    'league.pfsp_power': (2.0, 'training'),
    'env.step_mul': (2, 'model'),
    'env.team_id': (0, 'no-op'),
    'env.is_evaluator': (False, 'no-op'),
    'env.first_episode': (0, 'no-op'),
    'env.reward_scale': (1000.0, 'no-op'),
    'env.eaten_penalty': (0.0, 'training'),
    'env.enemy_clone_slots': (0, 'model'),
    'env.team_vision': (False, 'model'),
}


def drop_retired_keys(main_config: Dict, defaults: Dict) -> Dict:
    """A copy of ``main_config`` without the keys of RETIRED_KEYS, nor the sections they leave empty that
    ``defaults`` (the default config) lacks; ConfigError for a 'model' key at a value other than the one the code
    plays."""
    main_config = copy.deepcopy(dict(main_config))
    for path, (old, kind) in RETIRED_KEYS.items():
        *parents, key = path.split('.')
        nodes = [main_config]
        for parent in parents:
            nodes.append(nodes[-1].get(parent) if isinstance(nodes[-1], dict) else None)
        if not isinstance(nodes[-1], dict) or key not in nodes[-1]:
            continue
        value = nodes[-1].pop(key)
        for depth in reversed(range(len(parents))):  # drop the sections left empty that the defaults lack
            section = '.'.join(parents[:depth + 1])
            if nodes[depth][parents[depth]] or _has_section(defaults, section):
                break
            nodes[depth].pop(parents[depth])
        if value == old and isinstance(value, bool) == isinstance(old, bool):
            continue
        if kind == 'model':
            raise ConfigError(f'config key {path}={value!r} changed the model or what it observes and is no longer '
                              f'supported (only {old!r} is): this config, or the checkpoint it came from, cannot run')
        logging.getLogger('ppo_gobigger').warning(
            f'config key {path}={value!r} is retired (a training option since removed); ignored')
    return main_config


def _has_section(config: Dict, dotted: str) -> bool:
    for key in dotted.split('.'):
        if not isinstance(config, dict) or key not in config:
            return False
        config = config[key]
    return True
