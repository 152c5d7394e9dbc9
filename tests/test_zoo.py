"""The model zoo: every agent in zoo/ loads with today's code and plays a short game through the package's
evaluation path (what `gobigger-eval --ckpt zoo/<name>.pth.tar` runs), is named <preset>_<name>_s<K> after the preset
it was trained on, and has its card: the preset, the command that trained it and the line that replays it."""
import glob
import os
import re

import pytest

from ppo_gobigger.envs.gobigger_env import SEED_STRIDE
from ppo_gobigger.pipeline.evaluate import evaluate
from ppo_gobigger.pipeline.learn.checkpoint import load_checkpoint
from test_training import ROOT

ZOO = os.path.join(ROOT, 'zoo')
AGENTS = sorted(os.path.basename(p)[:-len('.pth.tar')] for p in glob.glob(os.path.join(ZOO, '*.pth.tar')))
NAME = re.compile(r'^(?P<preset>st_t\d+p\d+)_(?P<name>[a-z0-9]+(?:_[a-z0-9]+)*)_s(?P<seed>\d+)$')
SHORT_GAME = ['env.custom_cfg.frame_limit=200', 'env.evaluator_env_num=1']  # 200 frames, one env
MAX_AGENTS = 12  # issue 71: the agents a user would pick, not the lab's every run


def card(name: str) -> str:
    with open(os.path.join(ZOO, f'{name}.md')) as f:
        return f.read()


def test_the_zoo_holds_a_few_agents_each_with_its_card():
    assert 1 <= len(AGENTS) <= MAX_AGENTS
    cards = sorted(os.path.basename(p)[:-len('.md')] for p in glob.glob(os.path.join(ZOO, '*.md')))
    assert cards == sorted(AGENTS + ['README'])  # a card per agent, no card without its agent
    with open(os.path.join(ZOO, 'README.md')) as f:
        index = f.read()
    for name in AGENTS:  # the index links each card and each agent
        assert f'({name}.md)' in index and f'({name}.pth.tar)' in index


@pytest.mark.parametrize('name', AGENTS)
def test_a_card_names_its_preset_command_and_replay(name):
    match = NAME.match(name)
    assert match, f'zoo/{name}.pth.tar is not named <preset>_<name>_s<K>'
    text = card(name)
    assert f'**Preset**: `{match["preset"]}`' in text
    assert '## How it was trained' in text and '```bash\n' in text.split('## How it was trained')[1]
    assert f'gobigger-eval --ckpt zoo/{name}.pth.tar --episodes 20' in text
    assert '- env steps: ' in text and '- training time: ' in text
    results = text.split('## Held-out results')[1]
    assert 'env seed 1000' in results and '(reference' in results  # the held-out games, beside a reference row


@pytest.mark.parametrize('name', AGENTS)
def test_a_zoo_agent_loads_and_plays_a_short_game(name):
    path = os.path.join(ZOO, f'{name}.pth.tar')
    config = load_checkpoint(path)['config']
    assert config['env']['preset'] == NAME.match(name)['preset']  # the name says which game it was trained on
    config['env']['manager'] = dict(type='base')  # in this process: no env process to start for one short game
    report = evaluate(path, main_config=config, episodes=1, seed=1000, overrides=SHORT_GAME, progress=False)
    assert report['episode_count'] == 1 and len(report['games']) == 1
    game = report['games'][0]
    assert game['game_seed'] == 2 * 1000 * SEED_STRIDE + 1  # env seed 1000's first held-out game
    assert game['score_ratio'] == pytest.approx(game['final_score'] / game['opponent_score'])
    assert game['win'] == (game['rank'] == 1) and 1 <= game['rank'] <= int(name[len('st_t')])
