"""benchmarks/past_teacher_curve.py: each phase of the published recipe starts where its source ended, the average's
final rows sit at the lineage's whole training cost, and a lineage that has run only part of the way is drawn as far
as it has run."""
import importlib.util
import json
import os
import shutil
import sys

import pytest

from test_training import ROOT

BENCHMARKS = os.path.join(ROOT, 'benchmarks')


@pytest.fixture
def curve(monkeypatch):
    monkeypatch.syspath_prepend(BENCHMARKS)  # the script imports past_teacher beside it, as it does when run
    spec = importlib.util.spec_from_file_location('past_teacher_curve', os.path.join(BENCHMARKS, 'past_teacher_curve.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def recorded(tag, run):
    with open(os.path.join(BENCHMARKS, 'results', f'learning_{tag}.json')) as f:
        return json.load(f)['runs'][f'{tag}_s{run}']


@pytest.mark.parametrize('run', [0, 1, 2])
def test_the_published_phases_are_placed_end_to_end(curve, run):
    item = curve.lineage(run)
    prefix = curve.PUBLISHED_PREFIX
    selfplay, fall, level2, level2_long, average = (
        recorded(prefix + suffix, run) for suffix in ('', '_vs_bots_carry_distil_fall', '_vs_level2_carry',
                                                      '_vs_level2_carry_long', '_carry_long_average_select'))
    last = lambda r, key: r['curve'][-1][key]  # noqa: E731
    assert [s.phase for s in item.segments] == ['self-play', 'the falling-weight phase', 'the level-2 phase',
                                                'the level-2 phase']
    assert [s.opponents for s in item.segments] == ['level-3 bots', 'level-3 bots', 'level-2 bots', 'level-2 bots']
    assert [(s.env_steps[0], s.env_steps[-1]) for s in item.segments] == [
        (36_000, 360_000), (360_000, 468_000), (360_000, 468_000), (468_000, 900_000)]
    assert item.segments[3].wall_time_s[0] == pytest.approx(
        last(selfplay, 'wall_time_s') + last(level2, 'wall_time_s'))
    assert item.env_steps == 360_000 + 108_000 + 108_000 + 432_000
    assert item.wall_time_s == pytest.approx(sum(last(r, 'wall_time_s') for r in (selfplay, fall, level2, level2_long)))
    assert item.segments[1].win_rate == [p['win_rate'] for p in fall['curve']]
    assert item.final == {'level-3 bots': average['final'], 'level-2 bots': average['final_vs']['vs level-2 bots']}
    assert item.kickstart == average['kickstart']


def test_a_lineage_is_drawn_as_far_as_it_has_run(curve, tmp_path, monkeypatch):
    prefix = curve.PUBLISHED_PREFIX
    monkeypatch.setattr(curve.learning, 'RESULTS', str(tmp_path))
    assert curve.lineage(0, prefix) is None  # nothing has run: nothing to draw
    shutil.copy(os.path.join(BENCHMARKS, 'results', f'learning_{prefix}.json'), tmp_path)
    item = curve.lineage(0, prefix)
    assert [s.phase for s in item.segments] == ['self-play']
    assert (item.env_steps, item.final, item.kickstart) == (360_000, None, None)
    out = tmp_path / 'partial.png'
    curve.plot([item], 'self-play only', str(out))
    assert out.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'


def test_the_command_draws_every_published_seed(curve, monkeypatch, tmp_path, capsys):
    out = tmp_path / 'recipe.png'
    monkeypatch.setattr(sys, 'argv', ['past_teacher_curve.py', '--out', str(out)])
    curve.main()
    printed = capsys.readouterr().out
    for run in range(curve.SEEDS):
        assert f'run seed {run}: 1,008,000 env steps' in printed
    assert out.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'


def test_a_prefix_with_no_runs_is_refused_by_name(curve, monkeypatch, capsys):
    monkeypatch.setattr(sys, 'argv', ['past_teacher_curve.py', '--prefix', 'st_t2p2_nothing_here'])
    with pytest.raises(SystemExit):
        curve.main()
    assert 'no run of st_t2p2_nothing_here has evaluations yet' in capsys.readouterr().err
