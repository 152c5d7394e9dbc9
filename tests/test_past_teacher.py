"""benchmarks/past_teacher.py: its five commands are the ones behind the published target-2 runs, and it stops at the
first step that does not finish."""
import importlib.util
import json
import os
import sys

import pytest

from test_training import ROOT


@pytest.fixture
def past_teacher():
    spec = importlib.util.spec_from_file_location('past_teacher', os.path.join(ROOT, 'benchmarks', 'past_teacher.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def settings_of(argv):
    """The part of learning.py's recorded `settings` that its command line sets (its defaults where absent)."""
    options, overrides, i = {}, [], 0
    while i < len(argv):
        name = argv[i]
        values = []
        while i + 1 < len(argv) and not argv[i + 1].startswith('--'):
            i += 1
            values.append(argv[i])
        if name == '--set':
            overrides.append(values[0])
        else:
            options[name] = values
        i += 1

    def number(name, default=None):
        return int(options[name][0]) if name in options else default

    return dict(config=options['--config'][0], overrides=overrides, env_steps=number('--env-steps'),
                eval_every=number('--eval-every'), eval_games=number('--eval-games', 8),
                final_games=number('--final-games', 100), seeds=number('--seeds', 1),
                from_runs=options.get('--from-runs', [None])[0], distil_kickstart='--distil-kickstart' in options,
                average_runs=options.get('--average-runs'),
                average_select=[float(w) for w in options['--average-select']] if '--average-select' in options
                else None)


def test_each_step_is_the_command_of_the_published_runs(past_teacher):
    for run in range(past_teacher.SEEDS):
        steps = past_teacher.recipe(run)
        assert [s.tag for s in steps] == [past_teacher.PUBLISHED_PREFIX + suffix for suffix in (
            '', '_vs_bots_carry_distil_fall', '_vs_level2_carry', '_vs_level2_carry_long',
            '_carry_long_average_select')]
        for step in steps:
            with open(os.path.join(ROOT, 'benchmarks', 'results', f'learning_{step.tag}.json')) as f:
                recorded = json.load(f)['settings']
            ours = settings_of(step.argv)
            assert ours == {key: recorded[key] for key in ours}, step.name
            assert step.argv[step.argv.index('--run') + 1] == str(run)
            assert '--resume' in step.argv


def test_a_prefix_renames_every_tag_and_the_links_between_them(past_teacher):
    steps = past_teacher.recipe(2, 'st_t2p2_mine')
    assert all(s.tag.startswith('st_t2p2_mine') for s in steps)
    everything = ' '.join(arg for s in steps for arg in s.argv)
    assert past_teacher.PUBLISHED_PREFIX not in everything
    assert steps[4].argv[steps[4].argv.index('--average-runs') + 1:][:2] == [steps[1].tag, steps[3].tag]


def test_the_steps_run_in_order_and_a_stopped_one_ends_the_recipe(past_teacher, monkeypatch, capsys):
    ran, codes = [], iter([0, 0, 130])
    monkeypatch.setattr(past_teacher, 'run_to_the_end', lambda command, cwd: ran.append(command) or next(codes))
    monkeypatch.setattr(sys, 'argv', ['past_teacher.py', '--run', '1'])
    with pytest.raises(SystemExit) as stopped:
        past_teacher.main()
    assert stopped.value.code == 130
    assert [c[c.index('--tag') + 1] for c in ran] == [s.tag for s in past_teacher.recipe(1)[:3]]
    assert 'step 3 (the level-2 phase) ended with exit status 130' in capsys.readouterr().err


def test_a_step_really_runs_and_its_exit_status_comes_back(past_teacher):
    assert past_teacher.run_to_the_end([sys.executable, '-c', 'raise SystemExit(3)'], ROOT) == 3


@pytest.mark.parametrize('args, message', [
    (['--run', '3'], '--run must be a run seed from 0 to 2, got 3'),
    (['--run', '0', '--prefix', 'mine'], "--prefix must start with st_t2p2_ and hold only letters, digits and _, "
                                         "got 'mine'"),
])
def test_a_bad_run_or_prefix_is_refused_by_name(past_teacher, monkeypatch, capsys, args, message):
    monkeypatch.setattr(sys, 'argv', ['past_teacher.py', '--dry-run', *args])
    with pytest.raises(SystemExit):
        past_teacher.main()
    assert message in capsys.readouterr().err
