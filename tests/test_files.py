"""Atomic writes (ppo_gobigger/files.py): a target is the old file or the new one, never half of either."""
import json
import os

import pytest
import torch
from matplotlib.figure import Figure

from ppo_gobigger.files import replaced_atomically, write_json
from ppo_gobigger.pipeline.learn.checkpoint import load_checkpoint, save_checkpoint
from ppo_gobigger.pipeline.league.ratings import FILES, rating_table, write_league
from ppo_gobigger.pipeline.league.round_robin import League, bot_participants


def plain_file_mode(folder) -> int:
    """The mode an ordinary open() gives a new file in ``folder`` (the umask applied)."""
    probe = folder / 'probe'
    probe.write_text('')
    return probe.stat().st_mode


def test_write_json_replaces_the_file_whole_with_a_plain_files_mode(tmp_path):
    path = tmp_path / 'deeper' / 'results.json'  # the folder is created
    write_json(str(path), {'a': 1})
    write_json(str(path), {'b': [1, 2]}, indent=1)
    assert json.loads(path.read_text()) == {'b': [1, 2]}
    assert path.read_text() == json.dumps({'b': [1, 2]}, indent=1)
    assert path.stat().st_mode == plain_file_mode(tmp_path)  # not mkstemp's 0600
    assert os.listdir(path.parent) == ['results.json']  # no temporary file left


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / 'results.json'
    write_json(str(path), {'old': True})
    with pytest.raises(TypeError, match='not JSON serializable'):
        write_json(str(path), {'new': object()})  # json.dump fails after writing part of the text
    assert json.loads(path.read_text()) == {'old': True}
    with pytest.raises(KeyboardInterrupt):
        with replaced_atomically(str(path)) as tmp:
            with open(tmp, 'w') as f:
                f.write('{"half": ')
            raise KeyboardInterrupt  # a SIGINT mid-write
    assert json.loads(path.read_text()) == {'old': True}
    assert sorted(os.listdir(tmp_path)) == ['results.json']


def test_the_temporary_path_keeps_the_targets_name_and_folder(tmp_path):
    """Writers that pick a format from the file name (matplotlib's savefig) see the target's extension."""
    target = tmp_path / 'curve.png'
    with replaced_atomically(str(target)) as tmp:
        assert os.path.dirname(tmp) == str(tmp_path)  # same filesystem: the rename is atomic
        assert os.path.basename(tmp).startswith('.tmp_') and tmp.endswith('_curve.png')
        open(tmp, 'wb').close()
    assert target.exists()


class Unsaveable:
    """Fails torch.save partway through: after the payload's other entries are written."""

    def __reduce__(self):
        raise TypeError('this object cannot be saved')


def test_a_checkpoint_that_fails_to_save_leaves_the_previous_one(tmp_path):
    path = str(tmp_path / 'ckpt' / 'iteration_1.pth.tar')
    save_checkpoint(path, {'model': {'w': torch.ones(2)}}, train_iter=1, envstep=10, config={})
    with pytest.raises(TypeError, match='cannot be saved'):
        save_checkpoint(path, {'model': {'w': torch.zeros(2)}, 'bad': Unsaveable()}, train_iter=2, envstep=20,
                        config={})
    payload = load_checkpoint(path)
    assert payload['train_iter'] == 1 and torch.equal(payload['model']['w'], torch.ones(2))
    assert os.listdir(tmp_path / 'ckpt') == ['iteration_1.pth.tar']


def test_a_league_that_fails_to_draw_its_figure_leaves_the_previous_files(tmp_path, monkeypatch):
    """The league tool's csv and png go through the same replace as its json: a fault mid-write loses nothing."""
    participants = bot_participants([1, 3])
    records = [dict(fixture=0, participants=['bot_level_1', 'bot_level_3'], ranks=[2, 1])]
    league = League(participants, dict(preset='st_t2p2'), records)
    write_league(str(tmp_path), league, rating_table(participants, records))
    png_before = (tmp_path / 'league.png').read_bytes()

    def half_a_figure(self, path, **kwargs):
        with open(path, 'wb') as f:
            f.write(b'\x89PNG half')
        raise KeyboardInterrupt  # a SIGINT while matplotlib writes

    monkeypatch.setattr(Figure, 'savefig', half_a_figure)
    records.append(dict(fixture=1, participants=['bot_level_1', 'bot_level_3'], ranks=[1, 2]))
    with pytest.raises(KeyboardInterrupt):
        write_league(str(tmp_path), league, rating_table(participants, records))
    assert (tmp_path / 'league.png').read_bytes() == png_before
    assert sorted(os.listdir(tmp_path)) == sorted(FILES)  # no temporary file left
