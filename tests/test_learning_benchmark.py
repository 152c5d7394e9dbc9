"""benchmarks/learning.py and its three modules on small settings: a run trained once for the module (its final
rows, another bot level's and the reference rows, all on the same final games), the report reprinted from its
results file, --resume adding and finishing rows, and --checkpoint with a zoo agent."""
import json
import logging
import os
import shutil
import sys

import cv2
import pytest
import torch

from ppo_gobigger.envs.gobigger_env import SEED_STRIDE
from ppo_gobigger.envs.teams import EAT_COUNTS
from ppo_gobigger.pipeline.learn.checkpoint import load_checkpoint
from test_training import BOTS_CONFIG, ROOT, SMALL

sys.path.insert(0, os.path.join(ROOT, 'benchmarks'))  # the benchmark scripts import each other as siblings
import learning  # noqa: E402
import learning_report  # noqa: E402
import learning_rows  # noqa: E402
import learning_runs  # noqa: E402

TINY = [item for item in SMALL if not item.startswith(('max_env_step', 'policy.eval'))]
TRAIN = ('--tag', 'tiny', '--env-steps', '256', '--eval-every', '256', '--eval-games', '2')
ZOO_GAMES = ['env.custom_cfg.frame_limit=120', 'env.evaluator_env_num=1']  # the zoo agent's games, shortened
EVALUATE = learning_rows.evaluate  # the real games, under every recording wrapper of the tests


def point_at(folder, monkeypatch) -> None:
    """The benchmark's results, run states, published weights and experiment folders under ``folder``."""
    monkeypatch.setattr(learning_runs, 'HERE', str(folder))
    for name, sub in (('RESULTS', 'results'), ('RUN_STATE', 'results/runs'), ('PUBLISHED', 'results/checkpoints'),
                      ('RUNS', 'runs')):
        monkeypatch.setattr(learning_runs, name, str(folder / sub))


def run_benchmark(monkeypatch, *args, sets=TINY, tag='tiny', config=BOTS_CONFIG):
    """learning.main() on ``config`` (the recipe's settings against the bots) with ``args`` (and --final-games 2,
    --set ``sets``); returns the results file."""
    root = logging.getLogger()  # main() sets up the root logger: put it back for the tests that follow
    monkeypatch.setattr(root, 'handlers', list(root.handlers))
    monkeypatch.setattr(root, 'level', root.level)
    monkeypatch.setattr(sys, 'argv', ['learning.py', '--config', config, *(a for s in sets for a in ('--set', s)),
                                      '--final-games', '2', *args])
    learning.main()
    with open(os.path.join(learning_runs.RESULTS, f'learning_{tag}.json')) as f:
        return json.load(f)


def record_evaluations(monkeypatch, played: list, stop_at: int = 0) -> list:
    """The benchmark's games go on as before, each checkpoint played appended to ``played``; with ``stop_at`` the
    stop_at-th evaluation is stopped as Ctrl-C stops it."""
    def recorded(path, **kwargs):
        if len(played) + 1 == stop_at:
            raise KeyboardInterrupt
        played.append(path)
        return EVALUATE(path, **kwargs)

    monkeypatch.setattr(learning_rows, 'evaluate', recorded)
    return played


@pytest.fixture(scope='module')
def trained(tmp_path_factory):
    """A run of 256 env steps (one PPO iteration), played on 2 final games, against level-2 bots, with the reference
    rows."""
    folder = tmp_path_factory.mktemp('learning')
    with pytest.MonkeyPatch.context() as monkeypatch:
        point_at(folder, monkeypatch)
        run_benchmark(monkeypatch, *TRAIN, '--vs-level', '2')
    return folder


@pytest.fixture
def copy_of(trained, tmp_path, monkeypatch):
    """The trained run's folder copied for one test that adds to it, and the benchmark pointed at the copy."""
    shutil.copytree(trained, tmp_path, dirs_exist_ok=True)
    point_at(tmp_path, monkeypatch)
    return tmp_path


def results(folder, tag='tiny'):
    with open(folder / 'results' / f'learning_{tag}.json') as f:
        return json.load(f)


def test_a_run_is_played_against_another_level_and_beside_the_references(trained):
    result = results(trained)
    run = result['runs']['tiny']
    # before training, after its PPO iteration: 256 env steps, one rollout of 2 epochs of 2 minibatches
    assert [(p['env_steps'], p['train_iter'], p['games']) for p in run['curve']] == [(0, 0, 2), (256, 4, 2)]
    seeds = [g['game_seed'] for g in run['final']['game_outcomes']]
    # the final block, env seed 0 + 1000: the first held-out game of each of the 2 evaluator envs (seeds 1000, 1001)
    assert result['settings']['final_seed'] == learning_rows.FINAL_SEED_OFFSET
    assert sorted(seeds) == [2 * (seed * SEED_STRIDE) + 1 for seed in (1000, 1001)]
    rows = [run['final'], run['final_vs']['vs level-2 bots'], *result['references'].values()]
    assert list(result['references']) == list(learning_rows.REFERENCES)
    for row in rows:  # every row on the same games, with each game's outcome and the median beside the mean
        games = row['game_outcomes']
        assert row['games'] == 2 and [g['game_seed'] for g in games] == seeds
        ratios = sorted(g['score_ratio'] for g in games)
        assert row['score_ratio_median'] == pytest.approx((ratios[0] + ratios[1]) / 2)
        assert all(set(EAT_COUNTS) <= set(g) for g in games)
        for g in games:  # two teams: the first is the one with the higher score
            assert g['score_ratio'] == pytest.approx(g['final_score'] / g['opponent_score'])
            assert g['win'] == (g['rank'] == 1) == (g['final_score'] > g['opponent_score'])
        # the row's figures are the means of its games'
        assert row['win_rate'] == sum(g['win'] for g in games) / 2
        assert row['rank_mean'] == sum(g['rank'] for g in games) / 2
        for figure, of_a_game in (('score_ratio_mean', 'score_ratio'), ('final_score_mean', 'final_score'),
                                  ('opponent_score_mean', 'opponent_score')):
            assert row[figure] == pytest.approx(sum(g[of_a_game] for g in games) / 2)
    # one run: each summary's mean, min and max are that run's row
    for key, row in (('summary', run['final']), ('summary_vs_level2_bots', run['final_vs']['vs level-2 bots'])):
        assert result[key] == {f'{stat}_{field}': row[field] for field in learning_rows.SUMMARY_FIELDS
                               for stat in ('mean', 'min', 'max')}

    final = load_checkpoint(trained / run['published'])
    assert run['published'] == os.path.join('results', 'checkpoints', 'tiny.pth.tar')
    assert (final['envstep'], set(final)) == (256, {'format', 'train_iter', 'envstep', 'config', 'model'})
    assert os.path.isfile(trained / 'results' / 'runs' / 'tiny' / 'latest.pth.tar')  # for --resume


def test_the_report_reprints_the_tables_and_redraws_the_curves(trained, tmp_path, capsys):
    path = tmp_path / 'learning_tiny.json'
    shutil.copyfile(trained / 'results' / 'learning_tiny.json', path)
    learning_report.main([str(path), '--plot'])
    out = capsys.readouterr().out.splitlines()
    result = results(trained)
    run = result['runs']['tiny']
    named = [('tiny (seed 0, 256 env steps)', run['final']),
             ('tiny vs level-2 bots', run['final_vs']['vs level-2 bots']),
             *((f'{name} (reference)', row) for name, row in result['references'].items())]
    for name, row in named:  # each row's figures in the final table, then what its side ate in the eats table
        final_line, eats_line = [line[len(name):].split() for line in out if line.startswith(name + ' ')]
        assert final_line == [f'{row["win_rate"]:.2f}', f'{row["score_ratio_mean"]:.3f}',
                              f'{row["score_ratio_median"]:.3f}', f'{row["rank_mean"]:.2f}',
                              f'{row["final_score_mean"]:.0f}', f'{row["opponent_score_mean"]:.0f}']
        assert [float(x) for x in eats_line] == [round(sum(g[k] for g in row['game_outcomes']) / 2, 1)
                                                 for k in EAT_COUNTS]
    image = cv2.imread(str(tmp_path / 'learning_tiny.png'))
    assert image.shape == (700, 1100, 3)  # the 11 x 7 inch figure at 100 dpi
    with pytest.raises(SystemExit):
        learning_report.main([str(tmp_path / 'nothing.json')])
    assert 'no results file' in capsys.readouterr().err


def test_resume_plays_only_the_rows_it_lacks_and_keeps_a_stopped_evaluations_rows(copy_of, monkeypatch):
    """A finished run resumed with more --vs-level rows plays only those; stopped half way (Ctrl-C in the final
    games), the rows already played stay in the results file, and --resume plays the rest."""
    before = results(copy_of)['runs']['tiny']
    played = record_evaluations(monkeypatch, [], stop_at=2)
    with pytest.raises(KeyboardInterrupt):
        run_benchmark(monkeypatch, *TRAIN, '--resume', '--vs-level', '2', '--vs-level', '1', '--vs-level', '3')
    run = results(copy_of)['runs']['tiny']
    assert list(run['final_vs']) == ['vs level-2 bots', 'vs level-1 bots']  # level 3 was stopped
    played = record_evaluations(monkeypatch, [])
    run = run_benchmark(monkeypatch, *TRAIN, '--resume', '--vs-level', '2', '--vs-level', '1', '--vs-level',
                        '3')['runs']['tiny']
    assert played == [str(copy_of / 'results' / 'checkpoints' / 'tiny.pth.tar')]  # only the level-3 row
    assert list(run['final_vs']) == ['vs level-2 bots', 'vs level-1 bots', 'vs level-3 bots']
    for key in ('final', 'curve'):
        assert run[key] == before[key]


def test_a_finished_run_extended_trains_on_and_plays_its_last_checkpoint_again(copy_of, monkeypatch):
    """--resume with a larger --env-steps trains the finished run on from its kept state and plays its new last
    checkpoint."""
    played = record_evaluations(monkeypatch, [])
    extended = run_benchmark(monkeypatch, *TRAIN, '--resume', '--env-steps', '512')['runs']['tiny']
    assert played == [str(copy_of / 'results' / 'checkpoints' / 'tiny.pth.tar')]
    assert [p['env_steps'] for p in extended['curve']] == [0, 256, 512]
    assert load_checkpoint(copy_of / extended['published'])['envstep'] == 512


def test_a_run_stopped_in_its_final_games_plays_the_rest_on_another_clone(copy_of, monkeypatch):
    """A trained run stopped before its level-2 row, resumed on a clone with only what is committed (the results file
    and the run state, not the published weights nor the experiment folder): the run state's last checkpoint is
    published again, the same weights, and only the missing row is played, with no training."""
    path = copy_of / 'results' / 'learning_tiny.json'
    result = results(copy_of)
    before = result['runs']['tiny']
    del result['runs']['tiny']['final_vs']
    with open(path, 'w') as f:
        json.dump(result, f)
    published = copy_of / 'results' / 'checkpoints' / 'tiny.pth.tar'
    weights = load_checkpoint(published)['model']
    shutil.rmtree(copy_of / 'results' / 'checkpoints')
    shutil.rmtree(copy_of / 'runs')
    played = record_evaluations(monkeypatch, [])
    run = run_benchmark(monkeypatch, *TRAIN, '--resume', '--vs-level', '2')['runs']['tiny']
    assert played == [str(published)]
    assert list(run['final_vs']) == ['vs level-2 bots'] and run['curve'] == before['curve']
    again = load_checkpoint(published)
    assert again['envstep'] == 256 and all(torch.equal(again['model'][k], v) for k, v in weights.items())


def test_processes_side_by_side_keep_each_others_runs(copy_of, monkeypatch):
    """`--run K --resume` processes of one tag write only their own runs: a run another process finished while this
    one played its rows stays in the results file."""
    path = copy_of / 'results' / 'learning_tiny.json'
    result = results(copy_of)
    theirs = result['runs']['tiny']
    del result['references']['random team']  # a row this process still has to play
    with open(path, 'w') as f:
        json.dump(result, f)
    def the_other_process_finishes(ckpt, **kwargs):
        with open(path) as f:
            on_disk = json.load(f)
        on_disk['runs']['tiny_other'] = theirs
        with open(path, 'w') as f:
            json.dump(on_disk, f)
        return EVALUATE(ckpt, **kwargs)

    monkeypatch.setattr(learning_rows, 'evaluate', the_other_process_finishes)
    after = run_benchmark(monkeypatch, *TRAIN, '--resume')
    assert list(after['runs']) == ['tiny', 'tiny_other'] and after['runs']['tiny_other'] == theirs
    assert set(after['references']) == set(learning_rows.REFERENCES)


def test_the_recipes_league_run_resumes_with_its_pool(tmp_path, monkeypatch):
    """The default config (a league) through the benchmark: the run state keeps the pool's snapshots beside the
    checkpoint, and a --resume in a fresh experiment folder goes on with the pool as it was."""
    from ppo_gobigger.cli import DEFAULT_CONFIG
    point_at(tmp_path, monkeypatch)
    sets = [s for s in SMALL if not s.startswith(('max_env_step', 'policy.eval'))] + ['league.snapshot_every=1',
                                                                                      'env.manager.type="base"']
    args = ('--tag', 'recipe', '--eval-every', '256', '--eval-games', '2', '--no-references')
    first = run_benchmark(monkeypatch, *args, '--env-steps', '256', sets=sets, tag='recipe', config=DEFAULT_CONFIG)
    assert first['settings']['training_opponents'] == 'league'
    kept = tmp_path / 'results' / 'runs' / 'recipe' / 'league'
    (snapshot, ) = [name for name in os.listdir(kept) if name != 'pool.json']  # one PPO iteration: one snapshot
    assert (kept / 'pool.json').is_file()
    shutil.rmtree(tmp_path / 'runs')  # another machine: only the committed run state
    run = run_benchmark(monkeypatch, *args, '--env-steps', '512', '--resume', sets=sets, tag='recipe',
                        config=DEFAULT_CONFIG)['runs']['recipe']
    assert [p['env_steps'] for p in run['curve']] == [0, 256, 512]
    with open(kept / 'pool.json') as f:
        names = [m['name'] for m in json.load(f)['members']]
    assert names[:3] == ['bot_level_2', 'bot_level_3', snapshot.split('.')[0]] and len(names) == 4
    assert load_checkpoint(kept.parent / 'latest.pth.tar')['envstep'] == 512


def test_references_are_played_beside_a_run_whose_weights_are_elsewhere(copy_of, monkeypatch):
    """A results file from another clone lists a run whose published weights are not on this machine (they are not
    committed): the reference rows are played on this process's own run."""
    path = copy_of / 'results' / 'learning_tiny.json'
    result = results(copy_of)
    result['runs'] = {'tiny_elsewhere': dict(result['runs']['tiny'], published='results/checkpoints/absent.pth.tar'),
                      **result['runs']}
    del result['references']['random team']
    with open(path, 'w') as f:
        json.dump(result, f)
    played = record_evaluations(monkeypatch, [])
    after = run_benchmark(monkeypatch, *TRAIN, '--resume')
    assert played == [str(copy_of / 'results' / 'checkpoints' / 'tiny.pth.tar')]  # the random team's row, on ours
    assert set(after['references']) == set(learning_rows.REFERENCES) and 'tiny_elsewhere' in after['runs']


def test_one_run_of_several_is_trained_alone(tmp_path, monkeypatch):
    """--run K trains and plays run K of the --seeds runs alone, with its own run seed and tag."""
    point_at(tmp_path, monkeypatch)
    result = run_benchmark(monkeypatch, *TRAIN, '--seeds', '2', '--run', '1', '--no-references')
    assert list(result['runs']) == ['tiny_s1'] and result['references'] == {}
    run = result['runs']['tiny_s1']
    assert run['seed'] == result['settings']['seed'] + 1 and run['final']['games'] == 2
    assert [p['env_steps'] for p in run['curve']] == [0, 256]
    assert os.path.isfile(tmp_path / run['published']) and not (tmp_path / 'runs' / 'tiny_s0').exists()


def test_a_zoo_agent_plays_the_final_games_beside_the_reference_rows(tmp_path, monkeypatch, capsys):
    """--checkpoint NAME=PATH, no training: a self-play agent of the zoo plays its own config's games (shortened by
    --set) against the bots, as the reference rows do, on the same games; a second agent is compared with it."""
    point_at(tmp_path, monkeypatch)
    agent = os.path.join(ROOT, 'zoo', 'st_t2p2_selfplay_s0.pth.tar')
    result = run_benchmark(monkeypatch, '--checkpoint', f'selfplay={agent}', '--checkpoint', f'again={agent}',
                           '--tag', 'zoo', sets=ZOO_GAMES, tag='zoo')
    row = result['checkpoints']['selfplay']
    assert result['settings']['preset'] == row['preset'] == 'st_t2p2'
    assert result['settings']['opponents'] == 'bot level 3' and result['runs'] == {}
    seeds = [g['game_seed'] for g in row['game_outcomes']]
    # env seed 0 + 1000 on its one evaluator env: that env's first two held-out games
    assert sorted(seeds) == [2 * (1000 * SEED_STRIDE + k) + 1 for k in (0, 1)] and row['checkpoint'] == agent
    ratios = [g['score_ratio'] for g in row['game_outcomes']]
    assert row['score_ratio_median'] == pytest.approx(sum(ratios) / 2) and row['games'] == 2
    assert list(result['references']) == list(learning_rows.REFERENCES)
    assert all([g['game_seed'] for g in r['game_outcomes']] == seeds for r in result['references'].values())
    # the same weights, greedy, on the same games: the same outcome game by game
    assert result['checkpoints']['again']['game_outcomes'] == row['game_outcomes']
    assert result['checkpoints']['again']['against_first']['score_ratio_difference_mean'] == 0.0
    assert 'selfplay (st_t2p2_selfplay_s0.pth.tar)' in capsys.readouterr().out


@pytest.mark.parametrize('args, message', [
    ([], 'nothing to measure'),
    (['--env-steps', '100'], 'give --eval-every too'),
    (['--checkpoint', 'agent'], "--checkpoint takes NAME=PATH, got 'agent'"),
    (['--checkpoint', 'agent=nowhere.pth.tar'], '--checkpoint agent: no file nowhere.pth.tar'),
    (['--env-steps', '100', '--eval-every', '50', '--vs-level', '7'], '--vs-level must be one of'),
    (['--env-steps', '100', '--eval-every', '50', '--seeds', '2', '--run', '2'], '--run must be one of'),
    (['--checkpoint', f'two={os.path.join(ROOT, "zoo", "st_t2p2_scratch_s0.pth.tar")}', '--checkpoint',
      f'four={os.path.join(ROOT, "zoo", "st_t4p3_league_s0.pth.tar")}'], 'plays st_t4p3, the other rows st_t2p2'),
])
def test_bad_options_are_refused_with_what_is_allowed(args, message, tmp_path, monkeypatch, capsys):
    point_at(tmp_path, monkeypatch)
    with pytest.raises(SystemExit) as refused:
        run_benchmark(monkeypatch, *args)
    assert message in capsys.readouterr().err + str(refused.value)
    assert not os.path.exists(tmp_path / 'results')  # refused before anything ran


def test_paired_comparison_against_hand_computed_figures():
    def row(*games):  # (game seed, win, score ratio) -> a final row's per-game outcomes
        return dict(game_outcomes=[dict(game_seed=seed, win=win, score_ratio=ratio) for seed, win, ratio in games])

    paired = learning_rows.paired_comparison
    agent = row((1, True, 3.0), (3, False, 0.5), (5, True, 4.0), (7, True, 2.0))
    other = row((5, True, 2.0), (1, False, 0.8), (3, True, 1.5), (7, True, 2.0))  # matched by seed, not order
    p = paired(agent, other)
    # differences 2.2, -1.0, 2.0, 0.0: mean 0.8, higher in 2; won game 1 the other lost, lost game 3 it won
    assert (p['games'], p['higher_score_ratio'], p['won_where_baseline_lost'], p['lost_where_baseline_won']) == \
        (4, 2, 1, 1)
    assert p['score_ratio_difference_mean'] == pytest.approx(0.8)
    # a resample's mean is one of the 256 equally likely means of 4 draws of the differences; their 5% quantile is
    # -0.25 (one -1 and three 0s: 4.3% of the means are lower, 7.4% lower or equal) and their 95% quantile 2.05
    # (one 2.2 and three 2s: 94.1% lower, 95.7% lower or equal); 10,000 resamples find both
    assert p['score_ratio_difference_90'] == pytest.approx([-0.25, 2.05])
    assert paired(agent, agent)['score_ratio_difference_90'] == [0.0, 0.0]
    assert paired(agent, dict(games=4)) is None  # a row played without per-game outcomes
    with pytest.raises(ValueError, match='different games'):
        paired(agent, row((9, True, 1.0), (1, True, 1.0), (3, True, 1.0), (5, True, 1.0)))


def test_a_run_name_carries_its_run_seed():
    assert learning_runs.run_name('st_t2p2_x', 2, several=True) == 'st_t2p2_x_s2'
    assert learning_runs.run_name('st_t2p2_x', 0, several=False) == 'st_t2p2_x'


def test_resumed_processes_keep_every_reference_row_they_play(tmp_path, monkeypatch):
    """`--run K --resume` processes of one tag merge the file's rows into theirs at each save; the rows a process
    plays after a save must still reach the file (play_references adds to the dict it was handed)."""
    point_at(tmp_path, monkeypatch)
    path = str(tmp_path / 'learning_merge.json')
    with open(path, 'w') as f:  # another process's run and reference row
        json.dump(dict(runs={'t_s0': {'seed': 0}}, references={'random team': {'win_rate': 0.0}}, checkpoints={}), f)
    result = dict(runs={'t_s1': {'seed': 1}}, references={}, checkpoints={})
    save = learning.ResultsFile(path, ['t_s1'], result).save
    references = result['references']  # what play_references holds while it plays row after row
    for name in ('level-1 bots', 'level-2 bots'):
        references[name] = {'win_rate': 0.85}
        save()
    with open(path) as f:
        saved = json.load(f)
    assert list(saved['runs']) == ['t_s0', 't_s1']
    assert set(saved['references']) == {'random team', 'level-1 bots', 'level-2 bots'}


def test_a_stale_copy_of_a_row_does_not_undo_what_another_process_added(tmp_path, monkeypatch):
    """Two `--checkpoint ... --resume` processes of one tag read the same row; B adds its level-2 row and saves.
    A's next save keeps B's row (A had not changed its copy) and hands it to A, whose loop then skips it; the rows a
    process did change win."""
    point_at(tmp_path, monkeypatch)
    path = str(tmp_path / 'learning_stale.json')
    start = dict(runs={}, references={}, checkpoints={'x': {'win_rate': 0.9, 'final_vs': {}},
                                                        'y': {'win_rate': 0.8, 'final_vs': {}}})
    with open(path, 'w') as f:
        json.dump(start, f)
    a, b = learning.as_json(start), learning.as_json(start)  # each process's copy, read at its start
    file_a, file_b = learning.ResultsFile(path, [], a), learning.ResultsFile(path, [], b)
    b['checkpoints']['x']['final_vs']['vs_level2'] = {'win_rate': 0.93}
    file_b.save()
    a['checkpoints']['y']['final_vs']['vs_level2'] = {'win_rate': 0.7}
    file_a.save()
    with open(path) as f:
        saved = json.load(f)
    assert saved['checkpoints']['x']['final_vs'] == {'vs_level2': {'win_rate': 0.93}}
    assert saved['checkpoints']['y']['final_vs'] == {'vs_level2': {'win_rate': 0.7}}
    assert a['checkpoints']['x']['final_vs'] == {'vs_level2': {'win_rate': 0.93}}  # A will not play it again
    b['checkpoints']['y']['win_rate'] = 0.75  # B replays y: its changed copy wins over A's
    file_b.save()
    with open(path) as f:
        assert json.load(f)['checkpoints']['y'] == {'win_rate': 0.75, 'final_vs': {}}


def test_a_results_file_names_the_opponents_its_final_games_play():
    """League and self-play runs are evaluated against bots; bot, random and scripted opponents against themselves."""
    env = dict(bot_level=2, scripted_variant='holdout')
    assert learning_rows.opponents_of({'env': dict(env, opponent='league')}) == 'bot level 2'
    assert learning_rows.opponents_of({'env': dict(env, opponent='random')}) == 'random'
    assert learning_rows.opponents_of({'env': dict(env, opponent='scripted')}) == 'scripted holdout'
