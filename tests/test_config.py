"""Config errors a user can make, caught before anything runs, with a message naming the bad value."""
import copy
import os

import pytest

from ppo_gobigger.config import ConfigError, apply_overrides, compile_config, load_config_file, parse_value

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG_DIR = os.path.join(ROOT, 'config')


@pytest.fixture(scope='module')
def default_files():
    return load_config_file(os.path.join(CONFIG_DIR, 'gobigger_ppo_config.py'))


@pytest.mark.parametrize('name', sorted(f for f in os.listdir(CONFIG_DIR) if f.endswith('_config.py')))
def test_every_committed_config_compiles(name):
    main_config, create_config = load_config_file(os.path.join(CONFIG_DIR, name))
    cfg, create = compile_config(main_config, create_config)
    assert cfg.env.preset.startswith('st_')
    assert create.policy.type == 'gobigger_ppo'


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
        ('policy.learn.kickstart_kl=1.0', r'kickstart_kl=1.0 distils a kickstart: it needs pretrain.env_steps > 0, '
                                          r'or a policy.load_path or policy.learn.kickstart_teacher to distil, got 0, '
                                          r'None and None'),
        ('policy.learn.kickstart_teacher="k.pth.tar"', r"kickstart_teacher='k.pth.tar' is the teacher of kickstart_kl "
                                                       r'.* needs kickstart_kl > 0 and pretrain.env_steps 0, got 0.0'),
        ('policy.learn.kickstart_kl_env_steps=0', r'kickstart_kl_env_steps None or > 0; got 0.0 and 0'),
        ('policy.learn.lr_warmup_iters=-1', r'lr_warmup_iters must be an int >= 0, got -1'),
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
