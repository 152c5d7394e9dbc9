"""The config reference of docs/configuration.md is what the code says now (regenerate with `make docs`)."""
import os

import pytest

from ppo_gobigger import config_reference
from ppo_gobigger.config import default_config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_readme_config_reference_is_current():
    with open(os.path.join(ROOT, 'docs', 'configuration.md')) as f:
        readme = f.read()
    current = config_reference.replace_section(readme, config_reference.markdown())
    assert current == readme, 'the README config reference is out of date: run `make docs`'


def test_every_key_has_a_meaning():
    rows = config_reference.rows()
    keys = [key for key, _, _ in rows]
    assert {'policy.learn.learning_rate', 'env.preset', 'policy.model.hidden_size', 'replay.save_best'} <= set(keys)
    assert all(meaning for _, _, meaning in rows)
    assert dict((k, d) for k, d, _ in rows)['policy.learn.learning_rate'] == default_config().policy.learn.learning_rate


def test_a_key_without_a_comment_is_an_error(monkeypatch):
    monkeypatch.setattr(config_reference, 'UNCOMMENTED', {})
    with pytest.raises(ValueError, match="'policy.type' has no comment"):
        config_reference.rows()
