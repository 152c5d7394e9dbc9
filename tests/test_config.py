"""Config errors a user can make, caught before anything runs, with a message naming the bad value."""
import copy
import os

import pytest

from ppo_gobigger.config import (RETIRED_KEYS, ConfigError, apply_overrides, compile_config, default_config,
                                 load_config_file, parse_value)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG_DIR = os.path.join(ROOT, 'config')


@pytest.fixture(scope='module')
def default_files():
    return load_config_file(os.path.join(CONFIG_DIR, 'gobigger_ppo_config.py'))


@pytest.mark.parametrize('name', sorted(f for f in os.listdir(CONFIG_DIR) if f.endswith('_config.py')))
def test_every_committed_config_compiles(name):
    from ppo_gobigger.pipeline.ding_baseline import is_stock, stock_configs

    main_config, create_config = load_config_file(os.path.join(CONFIG_DIR, name))
    if is_stock(create_config):  # DI-engine's own PPO, the baseline: checked against DI-engine's defaults
        cfg, create = stock_configs(main_config, create_config)
        assert create.policy.type == 'ppo'
    else:
        cfg, create = compile_config(main_config, create_config)
        assert create.policy.type == 'gobigger_ppo'
    assert cfg.env.preset.startswith('st_')


def test_unknown_key_names_the_key_and_the_nearest(default_files):
    main_config, create_config = default_files
    bad = copy.deepcopy(main_config)
    bad['policy']['learn']['learning_rat'] = 1e-3
    with pytest.raises(ConfigError, match=r"policy\.learn\.learning_rat.*'learning_rate'"):
        compile_config(bad, create_config)


def test_set_parses_literals_and_checks_the_path(default_files):
    main_config, _ = default_files
    out = apply_overrides(main_config, ['policy.learn.batch_size=128', 'env.preset=st_t3p2', 'env.custom_cfg.frame_limit=600'])
    assert out['policy']['learn']['batch_size'] == 128
    assert out['env']['preset'] == 'st_t3p2'
    assert out['env']['custom_cfg'] == {'frame_limit': 600}
    assert main_config['policy']['learn']['batch_size'] != 128  # the input is not modified
    with pytest.raises(ConfigError, match=r"'policy\.lern'.*'learn'"):
        apply_overrides(main_config, ['policy.lern.batch_size=1'])
    with pytest.raises(ConfigError, match='KEY=VALUE'):
        apply_overrides(main_config, ['policy.learn.batch_size'])
    assert parse_value('[1, 2]') == [1, 2] and parse_value('None') is None and parse_value('abc') == 'abc'


def test_wrong_type_is_an_error(default_files):
    main_config, create_config = default_files
    bad = apply_overrides(main_config, ['policy.learn.batch_size="big"'])
    with pytest.raises(ConfigError, match=r"policy\.learn\.batch_size.*int.*'big'"):
        compile_config(bad, create_config)
    bad = apply_overrides(main_config, ['policy.learn.value_clip=1'])
    with pytest.raises(ConfigError, match='value_clip.*bool'):
        compile_config(bad, create_config)


@pytest.mark.parametrize(
    'override, message', [
        ('env.collector_env_num=0', 'collector_env_num must be >= 1'),
        ('policy.learn.batch_size=100000', 'batch_size'),
        ('policy.collect.n_sample=4097', 'multiple of env.collector_env_num'),
        ('env.manager.type="threads"', "unknown env.manager.type 'threads'"),
        ('env.manager.shared_memroy=True', 'shared_memory'),
        ('policy.learn.dual_clip=0.5', 'dual_clip'),
        ('env.manager.step_timeout=2.5', 'whole number of seconds'),
        ('pretrain.bot_level=5', r'pretrain.bot_level 5 is not one of \(1, 2, 3\)'),
        ('pretrain.env_steps=-1', 'pretrain.env_steps must be >= 0'),
        ('policy.model.actor_head=pointer', "unknown policy.model.actor_head 'pointer': choose one of discrete, "),
        ('policy.learn.kickstart_kl=1.0', r'kickstart_kl=1.0 distils a kickstart: it needs pretrain.env_steps > 0 '
                                          r'or a policy.load_path to distil, got 0 and None'),
        ('env.stop_value=0', r'env.stop_value is a win rate: None or a number in \(0, 1\], got 0'),
        ('env.stop_value=1.5', r'env.stop_value is a win rate: None or a number in \(0, 1\], got 1.5'),
    ]
)
def test_inconsistent_settings(default_files, override, message):
    main_config, create_config = default_files
    with pytest.raises(ConfigError, match=message):
        compile_config(apply_overrides(main_config, [override]), create_config)


@pytest.mark.parametrize(
    'override, message', [
        ('env.preset=st_t9p9', r"st_t9p9.*st_t2p2"),
        ('env.opponent=robot', r"robot.*bot"),
        ('env.bot_level=4', r"bot_level.*4"),
        ('env.action_repeat=0', r"action_repeat must be a positive int; got 0"),
        ('env.reward=log_margin', r"unknown reward 'log_margin'"),
    ]
)
def test_env_settings_are_checked_at_compile_time(default_files, override, message):
    main_config, create_config = default_files
    with pytest.raises(ConfigError, match=message):
        compile_config(apply_overrides(main_config, [override]), create_config)


def test_a_stop_value_of_one_is_allowed(default_files):
    main_config, create_config = default_files
    cfg, _ = compile_config(apply_overrides(main_config, ['env.stop_value=1']), create_config)
    assert cfg.env.stop_value == 1


def _with(config, path, value):
    config = copy.deepcopy(config)
    *parents, key = path.split('.')
    node = config
    for parent in parents:
        node = node.setdefault(parent, {})
    node[key] = value
    return config


@pytest.mark.parametrize('path', sorted(RETIRED_KEYS))
def test_a_saved_config_with_a_retired_key_at_its_old_value_loads_quietly(default_files, path, caplog):
    """A checkpoint's saved config may hold keys since removed (every zoo agent's does): at their old no-op value
    they are dropped without a word, and none of them is a key of today's config."""
    main_config, create_config = default_files
    cfg, _ = compile_config(_with(main_config, path, RETIRED_KEYS[path][0]), create_config)
    assert not [r for r in caplog.records if r.name.startswith('ppo_gobigger')]  # (DI-engine's imports log too)
    node = default_config()
    *parents, key = path.split('.')
    for parent in parents:
        node = node[parent]
    assert key not in node


def test_a_retired_training_key_at_another_value_is_dropped_with_one_log_line(default_files, caplog):
    main_config, create_config = default_files
    saved = _with(_with(main_config, 'policy.learn.kickstart_kl_env_steps', 72000), 'policy.multi_gpu', False)
    cfg, _ = compile_config(saved, create_config)
    assert [r.getMessage() for r in caplog.records if r.name.startswith('ppo_gobigger')] == [
        'config key policy.learn.kickstart_kl_env_steps=72000 is retired (a training option since removed); ignored']
    assert 'kickstart_kl_env_steps' not in cfg.policy.learn and saved['policy']['learn']['kickstart_kl_env_steps']


@pytest.mark.parametrize('path, value', [('env.enemy_clone_slots', 4), ('env.team_vision', True)])
def test_a_retired_key_that_changed_the_observation_is_an_error(default_files, path, value):
    main_config, create_config = default_files
    with pytest.raises(ConfigError, match=f'config key {path}={value!r} changed what the model observes'):
        compile_config(_with(main_config, path, value), create_config)


def test_a_user_cannot_set_a_retired_key(default_files):
    main_config, _ = default_files
    with pytest.raises(ConfigError, match="unknown config key 'policy.learn.critic_warmup_iters'"):
        apply_overrides(main_config, ['policy.learn.critic_warmup_iters=3'])
