"""Config errors a user can make, caught before anything runs, with a message naming the bad value."""
import copy
import os

import pytest

from ppo_gobigger.config import (ConfigError, apply_overrides, compile_config, default_config, load_config_file,
                                 parse_value)
from ppo_gobigger.retired_keys import RETIRED_KEYS

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
        assert create.policy.type == 'ppo' and create.env_manager.type == 'subprocess'
    else:
        cfg, create = compile_config(main_config, create_config)
        assert create.policy.type == 'gobigger_ppo' and cfg.env.preset.startswith('st_')


def test_unknown_key_names_the_key_and_the_nearest(default_files):
    main_config, create_config = default_files
    bad = _with(main_config, 'policy.learn.learning_rat', 1e-3)
    with pytest.raises(ConfigError, match=r"policy\.learn\.learning_rat.*'learning_rate'"):
        compile_config(bad, create_config)


def test_set_parses_literals_and_checks_the_path(default_files):
    main_config, _ = default_files
    out = apply_overrides(main_config, ['policy.learn.batch_size=128', 'env.preset=st_t3p2', 'env.custom_cfg.frame_limit=600'])
    assert out['policy']['learn']['batch_size'] == 128
    assert out['env']['preset'] == 'st_t3p2'
    assert out['env']['custom_cfg'] == {'frame_limit': 600}
    assert main_config['policy']['learn'] == {}  # the input is not modified
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
    bad = apply_overrides(main_config, ['policy.eval.sample=1'])
    with pytest.raises(ConfigError, match='sample.*bool'):
        compile_config(bad, create_config)


@pytest.mark.parametrize(
    'override, message', [
        ('env.collector_env_num=0', 'collector_env_num must be >= 1'),
        ('policy.learn.batch_size=100000', 'batch_size'),
        ('policy.collect.n_sample=4097', 'multiple of env.collector_env_num'),
        ('env.manager.type="threads"', "unknown env.manager.type 'threads'"),
        ('env.manager.shared_memroy=True', 'shared_memory'),
        ('env.manager.step_timeout=2.5', 'whole number of seconds'),
        ('league.self_play=1.5', r'league.self_play in \[0, 1\]; got 10 and 1.5'),
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
        node = node.get(parent, {})
    assert key not in node


def test_a_retired_training_key_at_another_value_is_dropped_with_one_log_line(default_files, caplog):
    main_config, create_config = default_files
    saved = _with(_with(main_config, 'policy.learn.kickstart_kl_env_steps', 72000), 'policy.multi_gpu', False)
    cfg, _ = compile_config(saved, create_config)
    assert [r.getMessage() for r in caplog.records if r.name.startswith('ppo_gobigger')] == [
        'config key policy.learn.kickstart_kl_env_steps=72000 is retired (a training option since removed); ignored']
    assert 'kickstart_kl_env_steps' not in cfg.policy.learn and saved['policy']['learn']['kickstart_kl_env_steps']


@pytest.mark.parametrize('path, value', [('env.enemy_clone_slots', 4), ('env.team_vision', True), ('env.step_mul', 1),
                                         ('policy.model.actor_head', 'discrete')])
def test_a_retired_key_that_changed_the_model_is_an_error(default_files, path, value):
    main_config, create_config = default_files
    with pytest.raises(ConfigError, match=f'config key {path}={value!r} changed the model or what it observes'):
        compile_config(_with(main_config, path, value), create_config)


def test_a_section_of_retired_keys_is_dropped_with_them(default_files):
    """An older checkpoint's config holds whole sections since removed (replay, pretrain): at their old values they
    go quietly, and the sections with them."""
    main_config, create_config = default_files
    saved = _with(_with(main_config, 'replay.save_best', False), 'pretrain.env_steps', 0)
    cfg, _ = compile_config(saved, create_config)
    assert 'replay' not in cfg and 'pretrain' not in cfg and cfg == compile_config(main_config, create_config)[0]


def test_the_default_config_file_is_the_code_defaults(default_files):
    """config/gobigger_ppo_config.py, what `make train` runs, compiles to default_config() itself: a config built in
    Python gets the recipe too."""
    assert compile_config(*default_files) == compile_config({}, {})


def test_the_env_manager_type_comes_from_create_config_and_a_set_overrides_it(default_files):
    main_config, create_config = default_files
    cfg, create = compile_config(main_config, create_config)
    assert cfg.env.manager.type == create.env_manager.type == create_config.env_manager.type == 'subprocess'
    cfg, create = compile_config(apply_overrides(main_config, ['env.manager.type=base']), create_config)
    assert cfg.env.manager.type == create.env_manager.type == 'base'


def test_a_user_cannot_set_a_retired_key(default_files):
    main_config, _ = default_files
    with pytest.raises(ConfigError, match="unknown config key 'policy.learn.critic_warmup_iters'"):
        apply_overrides(main_config, ['policy.learn.critic_warmup_iters=3'])
