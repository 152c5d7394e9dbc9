"""benchmarks/learning.py on small settings: a kickstarted run's rows (its last checkpoint, its kickstart alone, and
the last checkpoint against other bot levels) on the same final games, what it publishes, and --resume adding a row."""
import importlib.util
import json
import logging
import os
import sys

import pytest
import torch

from ppo_gobigger.config import ConfigError
from ppo_gobigger.envs.teams import EAT_COUNTS
from ppo_gobigger.pipeline.learn.checkpoint import load_checkpoint
from test_training import ROOT, SMALL


@pytest.fixture
def learning(tmp_path, monkeypatch):
    """benchmarks/learning.py as a module whose results, run states and experiment folders are under tmp_path."""
    spec = importlib.util.spec_from_file_location('learning_benchmark', os.path.join(ROOT, 'benchmarks', 'learning.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, 'HERE', str(tmp_path))
    for name, folder in (('RESULTS', 'results'), ('RUN_STATE', 'results/runs'), ('PUBLISHED', 'results/checkpoints'),
                         ('RUNS', 'runs')):
        monkeypatch.setattr(module, name, str(tmp_path / folder))

    root = logging.getLogger()  # main() sets up the root logger: put it back for the tests that follow
    monkeypatch.setattr(root, 'handlers', list(root.handlers))
    monkeypatch.setattr(root, 'level', root.level)

    def run(*args, references=False):
        sets = [a for item in SMALL + ['pretrain.env_steps=100', 'policy.model.actor_head="discrete"']
                if not item.startswith(('max_env_step', 'policy.eval')) for a in ('--set', item)]
        monkeypatch.setattr(sys, 'argv', ['learning.py', *sets, '--tag', 'kick', '--env-steps', '376',
                                          '--eval-every', '256', '--eval-games', '2', '--final-games', '2',
                                          *([] if references else ['--no-references']), *args])
        module.main()
        with open(tmp_path / 'results' / 'learning_kick.json') as f:
            return json.load(f)

    run.module = module
    return run


def record_evaluations(module, monkeypatch, played: list) -> list:
    """The benchmark's evaluations go on as before, each checkpoint path played appended to ``played``."""
    evaluate = module.evaluate
    monkeypatch.setattr(module, 'evaluate', lambda path, **kwargs: played.append(path) or evaluate(path, **kwargs))
    return played


def interrupt_at_call(module, monkeypatch, n: int, played: list, calls: list) -> None:
    """The benchmark's evaluations go on as before, each one's env seed appended to ``calls`` and its checkpoint path
    to ``played``, until the n-th, which is stopped as Ctrl-C stops it (KeyboardInterrupt)."""
    evaluate = module.evaluate

    def stop_at_the_nth(path, **kwargs):
        calls.append(kwargs.get('seed'))
        if len(calls) == n:
            raise KeyboardInterrupt
        played.append(path)
        return evaluate(path, **kwargs)

    monkeypatch.setattr(module, 'evaluate', stop_at_the_nth)


def test_kickstarted_run_is_played_with_its_kickstart_and_against_another_level(learning, tmp_path, capsys):
    result = learning('--vs-level', '2')
    run = result['runs']['kick']
    assert all(set(EAT_COUNTS) <= set(g) for g in run['final']['game_outcomes'])  # what our team ate, game by game
    assert 'what our side ate per game' in capsys.readouterr().out
    assert [p['env_steps'] for p in run['curve']] == [120, 376]  # after the kickstart's 2 games, after PPO
    for key in ('final', 'kickstart'):
        assert run[key]['games'] == 2 and 0.0 <= run[key]['win_rate'] <= 1.0
    assert list(run['final_vs']) == ['vs level-2 bots'] and run['final_vs']['vs level-2 bots']['games'] == 2
    assert {'summary', 'summary_kickstart', 'summary_vs_level2_bots'} <= set(result)
    seeds = [g['game_seed'] for g in run['final']['game_outcomes']]  # the same games, each kept with its outcome
    assert len(seeds) == 2 and seeds == [g['game_seed'] for g in run['kickstart']['game_outcomes']]
    assert run['final_against_kickstart']['games'] == 2

    kickstart = load_checkpoint(tmp_path / run['kickstart_published'])  # weights before any PPO update
    final = load_checkpoint(tmp_path / run['published'])
    assert run['kickstart_published'] == 'results/checkpoints/kick_kickstart.pth.tar'
    assert (kickstart['train_iter'], kickstart['envstep'], final['envstep']) == (0, 120, 376)
    assert any(not torch.equal(w, final['model'][k]) for k, w in kickstart['model'].items())
    assert os.path.isfile(tmp_path / 'results' / 'runs' / 'kick' / 'kickstart.pth.tar')  # committed for --resume

    again = learning('--vs-level', '2', '--vs-level', '1', '--resume')  # a finished run: only the new row is played
    run_again = again['runs']['kick']
    assert list(run_again['final_vs']) == ['vs level-2 bots', 'vs level-1 bots']
    for key in ('final', 'kickstart', 'curve'):
        assert run_again[key] == run[key]
    assert run_again['final_vs']['vs level-2 bots'] == run['final_vs']['vs level-2 bots']

    # --checkpoint: published agents on the final games, as trained and against other bot levels, no training
    published = str(tmp_path / run['published'])
    kickstart_published = str(tmp_path / run['kickstart_published'])
    rows = learning('--checkpoint', f'agent={published}', '--checkpoint', f'kickstart={kickstart_published}',
                    '--vs-level', '1')['checkpoints']
    assert rows['agent']['games'] == 2 and rows['agent']['checkpoint'] == published
    printed = capsys.readouterr().out.split('what our side ate per game')[-1]  # each row's eat counts, by name
    assert 'agent, as trained' in printed and 'kickstart, vs level-1 bots' in printed
    # the same games, greedy: the same outcome, game by game
    assert rows['agent']['game_outcomes'] == run['final']['game_outcomes']
    assert rows['kickstart']['game_outcomes'] == run['kickstart']['game_outcomes']
    # the kickstart against the agent: the run's own comparison the other way round
    reverse, forward = rows['kickstart']['against_first'], run['final_against_kickstart']
    assert reverse['checkpoint'] == 'agent' and reverse['games'] == 2
    assert reverse['score_ratio_difference_mean'] == pytest.approx(-forward['score_ratio_difference_mean'])
    assert (reverse['won_where_baseline_lost'], reverse['lost_where_baseline_won']) == \
        (forward['lost_where_baseline_won'], forward['won_where_baseline_lost'])
    assert list(rows['agent']['final_vs']) == ['vs level-1 bots']
    assert rows['agent']['final_vs']['vs level-1 bots'] == run_again['final_vs']['vs level-1 bots']


def test_a_final_evaluation_stopped_half_way_keeps_the_rows_already_played(learning, tmp_path, monkeypatch):
    """Each final row is written as soon as it is played: a run stopped in its kickstart's final games keeps its own
    row, and --resume plays only the missing one (no training, the same trained row)."""
    evaluate, played = learning.module.evaluate, []

    def stopped_in_the_kickstart(path, **kwargs):
        played.append(os.path.basename(path))
        if path.endswith('_kickstart.pth.tar'):
            raise KeyboardInterrupt  # as Ctrl-C half way through those games
        return evaluate(path, **kwargs)

    monkeypatch.setattr(learning.module, 'evaluate', stopped_in_the_kickstart)
    with pytest.raises(KeyboardInterrupt):
        learning()
    with open(tmp_path / 'results' / 'learning_kick.json') as f:
        run = json.load(f)['runs']['kick']
    assert run['final']['games'] == 2 and 'kickstart' not in run
    assert played == ['kick.pth.tar', 'kick_kickstart.pth.tar']

    monkeypatch.setattr(learning.module, 'evaluate', evaluate)  # no more stops
    record_evaluations(learning.module, monkeypatch, played)
    again = learning('--resume')['runs']['kick']
    assert played[2:] == [str(tmp_path / 'results' / 'checkpoints' / 'kick_kickstart.pth.tar')]
    assert again['final'] == run['final'] and again['curve'] == run['curve'] and again['kickstart']['games'] == 2


def test_a_finished_run_extended_keeps_its_kickstart_row(learning, tmp_path, monkeypatch):
    """--resume with a larger --env-steps trains the finished run on from its committed state and plays its last
    checkpoint again, but not its kickstart: the same weights on the same games."""
    run = learning()['runs']['kick']
    played = record_evaluations(learning.module, monkeypatch, [])
    extended = learning('--resume', '--env-steps', '632')['runs']['kick']
    assert played == [str(tmp_path / 'results' / 'checkpoints' / 'kick.pth.tar')]
    assert [p['env_steps'] for p in extended['curve']] == [120, 376, 632]
    assert load_checkpoint(tmp_path / extended['published'])['envstep'] == 632
    assert (extended['kickstart'], extended['kickstart_published']) == (run['kickstart'], run['kickstart_published'])


def test_a_run_name_leads_back_to_its_results_file(learning):
    m = learning.module
    assert m.run_name('st_t2p2_x', 2, several=True) == 'st_t2p2_x_s2'
    assert m.run_name('st_t2p2_x', 0, several=False) == 'st_t2p2_x'
    assert m.results_tags(m.run_name('st_t2p2_x', 12, several=True)) == ['st_t2p2_x_s12', 'st_t2p2_x']
    assert m.results_tags('st_t2p2_x') == ['st_t2p2_x']
    assert m.results_tags('st_t2p2_s1_kickstart') == ['st_t2p2_s1_kickstart']  # _sK only at the end


def test_paired_comparison_against_hand_computed_figures(learning):
    def row(*games):  # (game seed, win, score ratio) -> a final row's per-game outcomes
        return dict(game_outcomes=[dict(game_seed=seed, win=win, score_ratio=ratio) for seed, win, ratio in games])

    paired = learning.module.paired_comparison
    agent = row((1, True, 3.0), (3, False, 0.5), (5, True, 4.0), (7, True, 2.0))
    kickstart = row((5, True, 2.0), (1, False, 0.8), (3, True, 1.5), (7, True, 2.0))  # matched by seed, not order
    p = paired(agent, kickstart)
    # differences 2.2, -1.0, 2.0, 0.0: mean 0.8, higher in 2; won game 1 the kickstart lost, lost game 3 it won
    assert (p['games'], p['higher_score_ratio'], p['won_where_baseline_lost'], p['lost_where_baseline_won']) == \
        (4, 2, 1, 1)
    assert p['score_ratio_difference_mean'] == pytest.approx(0.8)
    low, high = p['score_ratio_difference_90']
    assert -1.0 <= low < 0.8 < high <= 2.2  # resampled means of the four differences lie between their extremes
    assert paired(agent, agent)['score_ratio_difference_90'] == [0.0, 0.0]
    assert paired(agent, dict(games=4)) is None  # a row played before per-game outcomes were kept
    with pytest.raises(ValueError, match='different games'):
        paired(agent, row((9, True, 1.0), (1, True, 1.0), (3, True, 1.0), (5, True, 1.0)))


def test_a_second_phase_goes_on_from_each_run_and_keeps_its_kickstart(learning, tmp_path, monkeypatch):
    """--from-runs TAG: the run starts from TAG's published weights (policy.load_path), no imitation of its own, and
    keeps TAG's kickstart: its row is reused (the same weights on the same games), not played again."""
    first = learning()['runs']['kick']
    played = record_evaluations(learning.module, monkeypatch, [])
    with pytest.raises(SystemExit, match=r"no trained run with run seed \[1\] .*: \['kick \(seed 0\)'\]"):
        learning('--tag', 'second', '--from-runs', 'kick', '--seeds', '2')
    with pytest.raises(SystemExit, match=r"no results/learning_nothing.json; the tags with results: \['kick'\]"):
        monkeypatch.chdir(tmp_path)
        learning('--tag', 'second', '--from-runs', 'nothing')
    learning('--tag', 'second', '--from-runs', 'kick', '--set', 'pretrain.env_steps=0')
    with open(tmp_path / 'results' / 'learning_second.json') as f:
        result = json.load(f)
    run = result['runs']['second']
    assert result['settings']['from_runs'] == 'kick'
    assert run['from_run'] == dict(tag='kick', published=first['published'], env_steps=376)
    with open(tmp_path / 'runs' / 'second' / 'total_config.json') as f:
        assert json.load(f)['policy']['load_path'] == str(tmp_path / first['published'])
    assert [p['env_steps'] for p in run['curve']] == [0, 256, 512]  # PPO from the first step (whole rollouts of 256)
    assert played == [str(tmp_path / 'results' / 'checkpoints' / 'second.pth.tar')]  # the kickstart is not replayed
    assert (run['kickstart'], run['kickstart_published']) == (first['kickstart'], first['kickstart_published'])
    assert run['final_against_kickstart']['games'] == 2
    ours, theirs = load_checkpoint(tmp_path / 'results' / 'runs' / 'second' / 'kickstart.pth.tar'), \
        load_checkpoint(tmp_path / first['kickstart_published'])
    assert all(torch.equal(w, theirs['model'][k]) for k, w in ours['model'].items())  # the lineage's kickstart

    # final games against other bots than the source's (level 2 here, level 3 there): the source's kickstart row was
    # played on other games, so the lineage's kickstart plays these again, against this run's level-2 bots
    levels = []
    evaluate = learning.module.evaluate
    monkeypatch.setattr(learning.module, 'evaluate', lambda path, main_config=None, **kwargs: levels.append(
        (os.path.basename(path), (main_config or load_checkpoint(path)['config'])['env']['bot_level']))
        or evaluate(path, main_config=main_config, **kwargs))
    learning('--tag', 'other', '--from-runs', 'kick', '--set', 'pretrain.env_steps=0', '--set', 'env.bot_level=2')
    with open(tmp_path / 'results' / 'learning_other.json') as f:
        run = json.load(f)['runs']['other']
    assert levels == [('other.pth.tar', 2), ('other_kickstart.pth.tar', 2)]
    assert run['kickstart_published'] == os.path.join('results', 'checkpoints', 'other_kickstart.pth.tar')

    # policy.load_learn_state: the source run's full checkpoint (its committed run state, the same last iteration),
    # whose optimizer and value normalisation the new run takes over
    learning('--tag', 'third', '--from-runs', 'kick', '--set', 'pretrain.env_steps=0',
             '--set', 'policy.load_learn_state=True')
    with open(tmp_path / 'runs' / 'third' / 'total_config.json') as f:
        assert json.load(f)['policy']['load_path'] == str(tmp_path / 'results' / 'runs' / 'kick' / 'latest.pth.tar')

    # --distil-kickstart: kickstart_kl distils the lineage's kickstart, not the weights the run starts from
    with pytest.raises(SystemExit):
        learning('--tag', 'fourth', '--distil-kickstart', '--set', 'policy.learn.kickstart_kl=0.5')  # no --from-runs
    with pytest.raises(ConfigError, match='kickstart_teacher'):
        learning('--tag', 'fourth', '--from-runs', 'kick', '--distil-kickstart', '--set', 'pretrain.env_steps=0')
    learning('--tag', 'fourth', '--from-runs', 'kick', '--distil-kickstart', '--set', 'pretrain.env_steps=0',
             '--set', 'policy.learn.kickstart_kl=0.5', '--only-train')
    with open(tmp_path / 'results' / 'learning_fourth.json') as f:
        run = json.load(f)['runs']['fourth']
    teacher = str(tmp_path / 'results' / 'runs' / 'kick' / 'kickstart.pth.tar')  # the source run's
    assert run['kickstart_teacher'] == os.path.relpath(teacher, tmp_path)
    with open(tmp_path / 'runs' / 'fourth' / 'total_config.json') as f:
        assert json.load(f)['policy']['learn']['kickstart_teacher'] == teacher
    last, kickstart = load_checkpoint(tmp_path / 'results' / 'runs' / 'fourth' / 'latest.pth.tar'), \
        load_checkpoint(tmp_path / first['kickstart_published'])
    assert all(torch.equal(w, kickstart['model'][k]) for k, w in last['teacher'].items())


def test_one_run_of_several_is_trained_alone(learning, tmp_path):
    """--run K trains run K of the --seeds runs alone, with its own run seed and tag; K outside them is refused.
    Trained with --only-train, it is published all the same, and a next phase's run of that seed goes on from it."""
    with pytest.raises(SystemExit):
        learning('--seeds', '2', '--run', '2')
    result = learning('--seeds', '2', '--run', '1', '--only-train')
    assert list(result['runs']) == ['kick_s1']
    run = result['runs']['kick_s1']
    assert run['seed'] == result['settings']['seed'] + 1 and 'final' not in run
    assert os.path.isfile(tmp_path / run['published'])
    assert not (tmp_path / 'results' / 'runs' / 'kick_s0').exists()

    with pytest.raises(SystemExit, match=r"no trained run with run seed \[0\] .*: \['kick_s1 \(seed 1\)'\]"):
        learning('--tag', 'next', '--from-runs', 'kick', '--seeds', '2', '--run', '0')
    learning('--tag', 'next', '--from-runs', 'kick', '--seeds', '2', '--run', '1', '--set', 'pretrain.env_steps=0',
             '--only-train')
    with open(tmp_path / 'results' / 'learning_next.json') as f:
        assert json.load(f)['runs']['next_s1']['from_run']['tag'] == 'kick_s1'  # the source run of its own seed


def test_the_reference_rows_of_a_self_play_run_play_its_final_games(learning):
    """A self-play run's final games are against the bots (the evaluator's envs switch a policy opponent to them),
    and so are its reference rows: each stand-in on our side plays the same games."""
    result = learning('--set', 'pretrain.env_steps=0', '--set', 'env.opponent=self', '--set', 'league.all_teams=True',
                      '--env-steps', '256', references=True)
    seeds = [g['game_seed'] for g in result['runs']['kick']['final']['game_outcomes']]
    assert list(result['references']) == ['random team', 'level-1 bots', 'level-2 bots', 'level-3 bots']
    for row in result['references'].values():
        assert [g['game_seed'] for g in row['game_outcomes']] == seeds


def test_average_runs_averages_runs_of_one_lineage_and_keeps_its_kickstart(learning, tmp_path, monkeypatch,
                                                                            capsys):
    """--average-runs A B: no training; each run is the mean of the weights of A's and B's runs of its run seed,
    which went on from a common run, with A's config and A's kickstart row (the lineage's, not played again)."""
    first = learning()['runs']['kick']
    for tag in ('a', 'b'):
        learning('--tag', tag, '--from-runs', 'kick', '--set', 'pretrain.env_steps=0', '--only-train')
    learning('--tag', 'stranger', '--set', 'pretrain.env_steps=0', '--only-train')  # a run of its own
    played = record_evaluations(learning.module, monkeypatch, [])

    with pytest.raises(SystemExit, match=r"did not go on from the same run .*'stranger': None"):
        learning('--tag', 'avg', '--average-runs', 'a', 'stranger')
    capsys.readouterr()
    with pytest.raises(SystemExit):  # the average plays a's games, against level-3 bots: not level-2 ones
        learning('--tag', 'avg', '--average-runs', 'a', 'b', '--set', 'env.bot_level=2')
    assert 'plays the final games of a (against bot level 3); this config\'s are against bot level 2' in \
        capsys.readouterr().err
    with pytest.raises(SystemExit):
        learning('--tag', 'avg', '--average-runs', 'a', 'b', '--only-train')
    assert 'it cannot be given with --only-train' in capsys.readouterr().err
    with pytest.raises(SystemExit):
        learning('--tag', 'avg', '--average-runs', 'a', 'b', '--average-weights', '0.5')
    assert '1 averaging weights [0.5] for 2 checkpoints' in capsys.readouterr().err
    assert played == []

    learning('--tag', 'avg', '--average-runs', 'a', 'b', '--average-weights', '0.25', '0.75', '--vs-level', '2')
    with open(tmp_path / 'results' / 'learning_avg.json') as f:
        result = json.load(f)
    run, sources = result['runs']['avg'], {}
    for tag in ('a', 'b'):
        with open(tmp_path / 'results' / f'learning_{tag}.json') as f:
            sources[tag] = json.load(f)['runs'][tag]
    assert run['averaged'] == dict(runs=['a', 'b'], published=[sources[t]['published'] for t in 'ab'],
                                   weights=[0.25, 0.75])
    assert run['from_run'] == sources['a']['from_run'] and run['from_run']['tag'] == 'kick'
    average, a, b = (load_checkpoint(tmp_path / p) for p in (run['published'], sources['a']['published'],
                                                                 sources['b']['published']))
    for key, w in average['model'].items():
        torch.testing.assert_close(w, 0.25 * a['model'][key] + 0.75 * b['model'][key])
    assert played == [str(tmp_path / run['published'])] * 2  # its final games and against level-2 bots
    assert (run['kickstart'], run['kickstart_published']) == (first['kickstart'], first['kickstart_published'])
    assert run['final_against_kickstart']['games'] == 2 and 'vs level-2 bots' in run['final_vs']
    assert not (tmp_path / 'results' / 'learning_avg.png').exists()  # no curve: it was not trained

    # a run and a phase after its sibling: both went on from kick, a and c's parent b directly
    learning('--tag', 'c', '--from-runs', 'b', '--set', 'pretrain.env_steps=0', '--only-train')
    with open(tmp_path / 'results' / 'learning_c.json') as f:
        run = json.load(f)['runs']['c']
    assert learning.module.ancestors(run) == [sources['b']['published'], first['published']]
    learning('--tag', 'cousin', '--average-runs', 'a', 'c')
    with open(tmp_path / 'results' / 'learning_cousin.json') as f:
        assert json.load(f)['runs']['cousin']['averaged']['runs'] == ['a', 'c']


def test_selection_margin_is_the_weakest_margin_to_the_bars(learning):
    """Hand-computed: win rate 0.96 over 0.95 (+0.01), score ratio 11 over the kickstart's 10 (+0.10), 0.78 against
    level-2 bots under 0.8 (-0.02): the weakest is -0.02."""
    row = lambda win, ratio=1.0: dict(win_rate=win, score_ratio_mean=ratio)
    rows = {'final': row(0.96, 11.0), 'vs level-2 bots': row(0.78)}
    assert learning.module.selection_margin(rows, row(0.9, 10.0), 0.95, 0.8) == pytest.approx(-0.02)
    rows['vs level-2 bots'] = row(0.9)
    assert learning.module.selection_margin(rows, row(0.9, 10.0), 0.95, 0.8) == pytest.approx(0.01)
    assert learning.module.selection_margin(rows, row(0.9, 12.0), 0.95, 0.8) == pytest.approx(11 / 12 - 1)


def test_average_select_keeps_the_candidate_that_clears_the_bars_best(learning, tmp_path, monkeypatch, capsys):
    """--average-select W ...: each run plays every candidate average and the lineage's kickstart on the validation
    games (their own env seed), keeps the candidate with the largest selection_margin, and plays only that one on
    the final games; stopped half way, --resume plays only the rows it lacks."""
    learning()
    for tag in ('a', 'b'):
        learning('--tag', tag, '--from-runs', 'kick', '--set', 'pretrain.env_steps=0', '--only-train')
    for bad, message in ((['--average-weights', '0.5', '0.5'], 'give two TAGs and no --average-weights'),
                         (['1.5'], 'must be in [0, 1], got [0.0, 1.5]')):
        with pytest.raises(SystemExit):
            learning('--tag', 'sel', '--average-runs', 'a', 'b', '--average-select', '0', *bad)
        assert message in capsys.readouterr().err

    played, calls = [], []
    interrupt_at_call(learning.module, monkeypatch, 4, played, calls)
    select = ('--tag', 'sel', '--average-runs', 'a', 'b', '--average-select', '0', '1', '--validation-games', '1',
              '--vs-level', '2')
    with pytest.raises(KeyboardInterrupt):
        learning(*select)
    assert len(played) == 3  # the kickstart and candidate 0's two rows: kept for --resume
    learning(*select, '--resume')
    with open(tmp_path / 'results' / 'learning_sel.json') as f:
        result = json.load(f)
    run = result['runs']['sel']
    selection = run['selection']
    assert calls[:3] == [2000] * 3 and calls[4:6] == [2000] * 2 and calls[6:] == [1000] * 2  # validation, final
    assert result['settings']['validation_seed'] == 2000 and selection['seed'] == 2000
    assert selection['kickstart']['games'] == 1 and list(selection['candidates']) == ['0', '1']
    for rows in selection['candidates'].values():
        assert list(rows) == ['final', 'vs level-2 bots'] and all(r['games'] == 1 for r in rows.values())
    margins = {w: learning.module.selection_margin(rows, selection['kickstart'], 0.95, 0.8)
               for w, rows in selection['candidates'].items()}
    assert selection['margins'] == pytest.approx(margins)
    chosen = max(margins, key=lambda w: (margins[w], selection['candidates'][w]['final']['score_ratio_mean']))
    assert selection['chosen'] == float(chosen) and run['averaged']['weights'] == [float(chosen), 1 - float(chosen)]
    kept = load_checkpoint(tmp_path / run['averaged']['published'][0 if chosen == '1' else 1])
    average = load_checkpoint(tmp_path / run['published'])
    assert all(torch.equal(w, kept['model'][k]) for k, w in average['model'].items())
    assert played[-2:] == [str(tmp_path / run['published'])] * 2  # only the kept one plays the final games
    assert 'final' in run and 'vs level-2 bots' in run['final_vs']
    assert '--average-select on 1 validation games (env seed 2000)' in capsys.readouterr().out


def test_select_checkpoint_publishes_the_evaluation_that_clears_the_bars_best(learning, tmp_path, monkeypatch,
                                                                               capsys):
    """--select-checkpoint: the run state keeps the weights of each evaluation after the first PPO update; each plays
    the validation games (their own env seed) with the kickstart, the one with the largest selection_margin is
    published and plays the final games; stopped half way, --resume plays only the rows it lacks."""
    with pytest.raises(SystemExit):
        learning('--select-checkpoint', '--validation-games', '0')
    assert '--validation-games must be >= 1, got 0' in capsys.readouterr().err

    played, calls = [], []
    interrupt_at_call(learning.module, monkeypatch, 3, played, calls)
    select = ('--select-checkpoint', '--validation-games', '1', '--vs-level', '2', '--env-steps', '632')
    with pytest.raises(KeyboardInterrupt):
        learning(*select)
    assert len(played) == 2  # the kickstart and the first candidate's row against the config's opponents
    result = learning(*select, '--resume')
    run, folder = result['runs']['kick'], tmp_path / 'results' / 'runs' / 'kick' / 'candidates'
    kept = {str(load_checkpoint(folder / name)['envstep']): folder / name for name in sorted(os.listdir(folder))}
    assert list(kept) == ['376', '632']  # the evaluations after PPO began: not the kickstart's, at 120 env steps
    assert [p['env_steps'] for p in run['curve']] == [120, 376, 632]
    selection = run['selection']
    assert calls[:6] == [2000] * 6 and calls[6:] == [1000] * 3  # validation, then final
    assert result['settings']['validation_seed'] == 2000 and selection['seed'] == 2000
    assert list(selection['candidates']) == ['376', '632'] and selection['kickstart']['games'] == 1
    margins = {key: learning.module.selection_margin(rows, selection['kickstart'], 0.95, 0.8)
               for key, rows in selection['candidates'].items()}
    assert selection['margins'] == pytest.approx(margins)
    chosen = max(margins, key=lambda key: (margins[key], selection['candidates'][key]['final']['score_ratio_mean']))
    assert selection['chosen'] == int(chosen)
    published = load_checkpoint(tmp_path / run['published'])
    assert published['envstep'] == int(chosen)
    assert all(torch.equal(w, load_checkpoint(kept[chosen])['model'][k]) for k, w in published['model'].items())
    assert played[-3] == played[-1] == str(tmp_path / run['published'])  # the kept one plays the final games
    assert {'final', 'kickstart'} <= set(run) and 'vs level-2 bots' in run['final_vs']
    assert '--select-checkpoint on 1 validation games (env seed 2000)' in capsys.readouterr().out

    # a next phase from the full state of the last iteration goes on from what was published only if that was kept
    source = dict(run, selection=dict(selection, chosen=376))
    with pytest.raises(SystemExit, match='published its checkpoint at 376 env steps'):
        learning.module.going_on_from({'policy': {'load_learn_state': True}}, 'kick', source)
    with pytest.raises(SystemExit):
        learning('--select-checkpoint', '--average-runs', 'a', 'b')
    assert '--average-runs trains nothing: it cannot be given with --select-checkpoint' in capsys.readouterr().err


def test_run_processes_side_by_side_keep_each_others_runs(learning, tmp_path, monkeypatch):
    """`--run K --resume` processes of one tag write only their own runs: a run that another process finished while
    this one played its final games stays in the results file, and the summary counts both."""
    theirs = learning('--seeds', '2', '--run', '1')['runs']['kick_s1']
    path = tmp_path / 'results' / 'learning_kick.json'
    with open(path) as f:
        results = json.load(f)
    del results['runs']['kick_s1']  # as it was before the other process finished it
    with open(path, 'w') as f:
        json.dump(results, f)
    evaluate = learning.module.evaluate

    def the_other_process_finishes(ckpt, **kwargs):
        with open(path) as f:
            on_disk = json.load(f)
        on_disk['runs']['kick_s1'] = theirs
        with open(path, 'w') as f:
            json.dump(on_disk, f)
        monkeypatch.setattr(learning.module, 'evaluate', evaluate)
        return evaluate(ckpt, **kwargs)

    monkeypatch.setattr(learning.module, 'evaluate', the_other_process_finishes)
    result = learning('--seeds', '2', '--run', '0', '--resume')
    assert list(result['runs']) == ['kick_s0', 'kick_s1'] and result['runs']['kick_s1'] == theirs
    assert 'final' in result['runs']['kick_s0']
    assert result['summary']['min_win_rate'] == min(r['final']['win_rate'] for r in result['runs'].values())
    assert result['summary']['mean_score_ratio_mean'] == pytest.approx(
        (theirs['final']['score_ratio_mean'] + result['runs']['kick_s0']['final']['score_ratio_mean']) / 2)
