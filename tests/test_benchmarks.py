"""Every benchmark script imports against today's package (a function renamed or moved in ppo_gobigger breaks it
here, not in a user's hands hours into a run), has a main() behind its `if __name__ == '__main__'`, and stays a
file of one job: at most 400 lines."""
import glob
import importlib
import os
import sys

import pytest

from test_training import ROOT

BENCHMARKS = os.path.join(ROOT, 'benchmarks')
SCRIPTS = sorted(os.path.basename(p)[:-len('.py')] for p in glob.glob(os.path.join(BENCHMARKS, '*.py')))
COMMANDS = ('learning', 'learning_report', 'throughput', 'scale', 'soak', 'demo_memory')  # what a user runs
MAX_LINES = 400


def test_the_commands_a_user_runs_are_there():
    assert set(COMMANDS) <= set(SCRIPTS)


@pytest.mark.parametrize('name', SCRIPTS)
def test_a_benchmark_script_imports_against_the_package_and_stays_small(name, monkeypatch):
    monkeypatch.syspath_prepend(BENCHMARKS)  # the scripts import their siblings as `python benchmarks/x.py` does
    path = os.path.join(BENCHMARKS, f'{name}.py')
    with open(path) as f:
        source = f.read()
    assert source.count('\n') <= MAX_LINES, f'benchmarks/{name}.py has {source.count(chr(10))} lines'
    module = sys.modules.get(name) or importlib.import_module(name)
    assert os.path.samefile(module.__file__, path)
    if name in COMMANDS:
        assert callable(module.main) and "if __name__ == '__main__':" in source
