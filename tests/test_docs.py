"""The docs say what the code does and stay short: the config reference of docs/configuration.md is what the code
says now (regenerate with `make docs`); every relative link of README.md, CHANGELOG.md, zoo/README.md and docs/*.md
leads to a file (and a heading) that exists; the README fits a few screens (at most 120 lines, none over 120
characters) and names no commit; docs/results.md is at most 250 lines; CHANGELOG.md's entries are dated, newest
first."""
import glob
import os
import re

import pytest

from ppo_gobigger import config_reference
from ppo_gobigger.config import default_config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = ['README.md', 'CHANGELOG.md', os.path.join('zoo', 'README.md')] + sorted(
    os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, 'docs', '*.md')))
README_LINES, README_WIDTH = 120, 120
RESULTS_LINES = 250
LINK = re.compile(r'!?\[[^\]]*\]\(([^)\s]+)\)')  # [text](target) and ![alt](target)
COMMIT = re.compile(r'\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b')  # hex with a letter and a digit


def _read(relpath):
    with open(os.path.join(ROOT, relpath), encoding='utf-8') as f:
        return f.read()


def _without_code(text):
    """The text outside fenced code blocks: a link inside one is an example, not a link."""
    return re.sub(r'^```.*?^```', '', text, flags=re.S | re.M)


def _anchors(text):
    """GitHub's heading anchors: lower case, punctuation dropped but '-' and '_', spaces to '-'; repeats get -1, -2."""
    seen, anchors = {}, set()
    for heading in re.findall(r'^#{1,6} +(.+?) *$', _without_code(text), flags=re.M):
        slug = re.sub(r'[^\w\- ]', '', heading.strip().lower()).replace(' ', '-')
        anchors.add(slug if slug not in seen else f'{slug}-{seen[slug]}')
        seen[slug] = seen.get(slug, 0) + 1
    return anchors


def test_every_relative_link_resolves():
    broken = []
    for doc in DOCS:
        for target in LINK.findall(_without_code(_read(doc))):
            if re.match(r'[a-z]+:', target):  # https:, mailto:
                continue
            path, _, anchor = target.partition('#')
            resolved = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
            if not os.path.exists(os.path.join(ROOT, resolved)):
                broken.append(f'{doc}: {target} (no file {resolved})')
            elif anchor and resolved.endswith('.md') and anchor not in _anchors(_read(resolved)):
                broken.append(f'{doc}: {target} (no heading #{anchor} in {resolved})')
    assert not broken, 'broken links:\n' + '\n'.join(broken)


def test_the_link_check_sees_links_anchors_and_code():
    text = '# A title, with `code`\n## Title\n## Title\n```\n[x](nowhere.md)\n```\nsee [y](a.md#b) and ![z](c.png)\n'
    assert LINK.findall(_without_code(text)) == ['a.md#b', 'c.png']
    assert _anchors(text) == {'a-title-with-code', 'title', 'title-1'}


def test_readme_is_short_and_names_no_commit():
    lines = _read('README.md').splitlines()
    assert len(lines) <= README_LINES, f'README.md has {len(lines)} lines; at most {README_LINES}'
    wide = [f'{n}: {len(line)}' for n, line in enumerate(lines, 1) if len(line) > README_WIDTH]
    assert not wide, f'README.md lines over {README_WIDTH} characters (line: length): {wide}'
    commits = COMMIT.findall('\n'.join(lines))
    assert not commits, f'README.md names commits {commits}: give a date instead'
    assert COMMIT.findall('measured at 2e9ddf4, 180,000 env steps, 1080000 frames') == ['2e9ddf4']


def test_results_is_short():
    lines = len(_read(os.path.join('docs', 'results.md')).splitlines())
    assert lines <= RESULTS_LINES, (f'docs/results.md has {lines} lines; at most {RESULTS_LINES}: the facts per preset '
                                    'and the levers, the history in CHANGELOG.md')


def test_changelog_entries_are_dated_newest_first():
    headings = re.findall(r'^## (.*)$', _read('CHANGELOG.md'), flags=re.M)
    dates = [re.match(r'(\d{4}-\d{2}-\d{2})\b', heading) for heading in headings]
    assert headings and all(dates), f'CHANGELOG.md: every entry starts with its date (YYYY-MM-DD): {headings}'
    dates = [d.group(1) for d in dates]
    assert dates == sorted(dates, reverse=True), f'CHANGELOG.md: entries newest first: {dates}'


def test_readme_config_reference_is_current():
    with open(os.path.join(ROOT, 'docs', 'configuration.md')) as f:
        readme = f.read()
    current = config_reference.replace_section(readme, config_reference.markdown())
    assert current == readme, 'the README config reference is out of date: run `make docs`'


def test_every_key_has_a_meaning():
    entries = config_reference.entries()
    keys = [key for key, _, _ in entries]
    assert {'policy.learn.learning_rate', 'env.preset', 'policy.model.hidden_size', 'env.stop_value'} <= set(keys)
    assert all(meaning for _, _, meaning in entries)
    assert dict((k, d) for k, d, _ in entries)['policy.learn.learning_rate'] == \
        default_config().policy.learn.learning_rate


def test_a_key_without_a_comment_is_an_error(monkeypatch):
    found = config_reference.comments()
    del found['policy.learn.gae_lambda']
    monkeypatch.setattr(config_reference, 'comments', lambda: found)
    with pytest.raises(ValueError, match="'policy.learn.gae_lambda' has no comment"):
        config_reference.entries()
