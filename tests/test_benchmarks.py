"""Every benchmark script imports against today's package (a function renamed or moved in ppo_gobigger breaks it
here, not in a user's hands hours into a run), has a main() behind its `if __name__ == '__main__'`, and stays a
file of one job: at most 400 lines."""
import glob
import importlib
import os
import sys

import pytest

from ppo_gobigger.envs.gobigger_env import SEED_STRIDE
from ppo_gobigger.pipeline.league.head_to_head import side_report
from test_training import ROOT

BENCHMARKS = os.path.join(ROOT, 'benchmarks')
SCRIPTS = sorted(os.path.basename(p)[:-len('.py')] for p in glob.glob(os.path.join(BENCHMARKS, '*.py')))
COMMANDS = ('learning', 'learning_report', 'ding_baseline', 'head_to_head', 'throughput', 'learn_step', 'scale',
            'soak')  # what a user runs
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


def test_head_to_head_plays_each_pair_once_on_the_final_games(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(BENCHMARKS)
    import head_to_head as h2h
    zoo = os.path.join(ROOT, 'zoo')
    agents = {'lineage': os.path.join(zoo, 'st_t2p2_lineage_s0.pth.tar')}
    earlier = {'scratch': os.path.join(zoo, 'st_t2p2_scratch_s0.pth.tar')}
    path = str(tmp_path / 'head_to_head_test.json')
    short = ['env.custom_cfg.frame_limit=200', 'env.manager.type=base']
    result = h2h.play_pairs(agents, earlier, 2, 1, path, short)
    pair = result['pairs']['lineage vs scratch']
    assert pair['seed'] == h2h.final_seed() == h2h.FINAL_SEED_OFFSET  # learning.py's final block of config seed 0
    records = pair['game_records']  # on one env: its first two held-out games, A's seat rotating
    assert [(r['game_seed'], r['participants']) for r in records] == [
        (2 * (pair['seed'] * SEED_STRIDE + k) + 1, seats) for k, seats in enumerate((['A', 'B'], ['B', 'A']))]
    for side in ('A', 'B'):  # each side's figures are its own of the games recorded
        assert pair[side] == {k: side_report(records, side)[k] for k in h2h.TABLE_FIELDS}
    (row, ) = [line.split('|')[1:-1] for line in h2h.table(result).splitlines() if 'lineage vs scratch' in line]
    assert row[0].strip() == 'lineage vs scratch'  # then the games, A's figures and B's win rate, to 2 decimals
    assert [float(cell) for cell in row[1:]] == [2, *(round(pair['A'][k], 2) for k in h2h.TABLE_FIELDS),
                                                 round(pair['B']['win_rate'], 2)]

    def played_again(*args, **kwargs):
        raise AssertionError('a pair already in the results file was played again')
    monkeypatch.setattr(h2h, 'head_to_head', played_again)
    assert h2h.play_pairs(agents, earlier, 2, 1, path, short)['pairs'] == result['pairs']


def test_throughput_times_the_default_league_config_with_the_cpu_of_each_part(monkeypatch):
    """throughput.py on the default config (a league: the trainer plays the other teams): the raw rate puts bots on
    every team, the training rate goes through the league's team play, and every part's CPU is counted."""
    monkeypatch.syspath_prepend(BENCHMARKS)
    import throughput
    from ppo_gobigger.cli import DEFAULT_CONFIG
    from ppo_gobigger.config import apply_overrides, compile_config, load_config_file

    main_config, create_config = load_config_file(DEFAULT_CONFIG)
    small = ['env.custom_cfg.frame_limit=200', 'env.collector_env_num=2', 'env.evaluator_env_num=1',
             'policy.collect.n_sample=64', 'policy.learn.batch_size=64', 'policy.model.hidden_size=32']
    cfg, create_cfg = compile_config(apply_overrides(main_config, small), create_config)
    assert cfg.env.opponent == 'league' and cfg.env.manager.type == 'subprocess'
    raw = throughput.measure_raw(cfg.env, 1, 1.0, cfg.seed, our_side='bots')
    assert raw['env_steps'] > 0 and raw['cpu_ms_per_step'] > 0
    for overlap in (False, True):
        train = throughput.measure_training(cfg, create_cfg, 2, 1 if not overlap else 0, overlap=overlap)
        assert train['env_steps'] == 2 * 64 and train['overlap'] is overlap and train['env_steps_per_s'] > 0
        cpu = train['cpu_ms_per_step']
        assert cpu['envs'] > 0 and cpu['inference'] > 0  # the env processes' and the forward passes' CPU
        assert (cpu['learning'] > 0) is not overlap  # overlapped, learning shares the collection's time
        if not overlap:  # one evaluation game, against the bots, with its own CPU
            evaluation = train['evaluation']
            assert evaluation['env_steps'] > 0 and evaluation['cpu_ms_per_step']['envs'] > 0
    assert train['learn_s'] and len(train['collect_s']) == 2
