"""The league tool (gobigger-league): round robin, TrueSkill ratings, the files it writes. Short real games."""
import copy
import csv
import functools
import json
import os

import pytest
import trueskill

from ppo_gobigger.cli import league_main
from ppo_gobigger.config import ConfigError, compile_config
from ppo_gobigger.envs.gobigger_env import SEED_STRIDE
from ppo_gobigger.pipeline.build import build_model
from ppo_gobigger.pipeline.learn.checkpoint import CheckpointError, save_checkpoint
from ppo_gobigger.pipeline.league.ratings import (FILES, TABLE_FIELDS, checkpoint_runs, rate, rating_table,
                                                  trueskill_env)
from ppo_gobigger.pipeline.league.round_robin import (RANDOM, Participant, bot_participants, load_checkpoints,
                                                      play_league, schedule)

# 100 env steps a game, one process: a game takes well under a second
SHORT_GAMES = ['env.custom_cfg.frame_limit=200', 'env.manager.type=base']


@functools.lru_cache(maxsize=None)
def fresh_model():
    """(config, weights) of a new model of the default config (built once: its initialisation takes seconds here)."""
    cfg, _ = compile_config({})
    return cfg, build_model(cfg).state_dict()


def make_checkpoint(path, train_iter=0, envstep=0, action_repeat=1, **env):
    """A fresh model saved as a published agent is (weights, counters, config); env: other env settings."""
    cfg, weights = fresh_model()
    cfg = copy.deepcopy(cfg)
    cfg.env.action_repeat = action_repeat
    cfg.env.update(env)
    save_checkpoint(path, {'model': weights}, train_iter, envstep, cfg)
    return path


def record(fixture, participants, ranks):
    return dict(fixture=fixture, game_seed=1, participants=participants, team_ids=list(range(len(ranks))),
                ranks=ranks, final_scores=[0.0] * len(ranks))


def test_one_game_moves_the_ratings_as_trueskill_does():
    ratings = rate([record(0, ['b', 'a'], [2, 1])], ['a', 'b'])
    a, b = trueskill.rate_1vs1(trueskill.Rating(), trueskill.Rating(), env=trueskill_env())
    assert ratings['a'].mu > 25 > ratings['b'].mu
    assert (ratings['a'], ratings['b']) == (a, b)
    assert ratings['a'].sigma < 25 / 3


def test_games_are_rated_in_fixture_order():
    games = [record(0, ['a', 'b'], [1, 2]), record(1, ['b', 'c'], [1, 2]), record(2, ['a', 'c'], [2, 1])]
    assert rate(games, 'abc') == rate(games[::-1], 'abc')
    env = trueskill_env()
    a, b, c = env.create_rating(), env.create_rating(), env.create_rating()
    a, b = trueskill.rate_1vs1(a, b, env=env)
    b, c = trueskill.rate_1vs1(b, c, env=env)
    c, a = trueskill.rate_1vs1(c, a, env=env)
    assert rate(games, 'abc') == dict(a=a, b=b, c=c)


def test_the_table_counts_games_wins_and_ranks():
    participants = [Participant('a', path='a.pth.tar', envstep=100), Participant('b', bot_level=3)]
    table = rating_table(participants, [record(0, ['a', 'b'], [1, 2]), record(1, ['b', 'a'], [1, 1])])
    assert [tuple(row) for row in table] == [TABLE_FIELDS] * 2
    a = next(row for row in table if row['name'] == 'a')
    assert (a['games'], a['wins'], a['mean_rank'], a['envstep'], a['kind']) == (2, 2, 1.0, 100, 'checkpoint')
    assert a['conservative'] == pytest.approx(a['mu'] - 3 * a['sigma'])
    assert table == sorted(table, key=lambda row: -row['conservative'])


def test_the_plot_draws_one_line_per_run_and_a_lone_checkpoint_apart():
    participants = [Participant('late', path='r/late.pth.tar', envstep=900, run='r'),
                    Participant('clone', path='clone.pth.tar', envstep=500),
                    Participant('early', path='r/early.pth.tar', envstep=100, run='r'), Participant('b', bot_level=3)]
    games = [record(0, ['late', 'early'], [1, 2]), record(1, ['clone', 'b'], [2, 1]), record(2, ['early', 'b'], [1, 2])]
    table = rating_table(participants, games)
    assert {row['name']: row['run'] for row in table} == dict(late='r', clone=None, early='r', b=None)
    runs = checkpoint_runs(table)
    assert {run: [row['name'] for row in rows] for run, rows in runs.items()} == dict(r=['early', 'late'],
                                                                                      clone=['clone'])


def test_schedule_plays_every_combination_and_rotates_the_seats():
    fixtures = schedule(participants=4, teams=3, games=3)
    assert len(fixtures) == 4 * 3
    assert fixtures[:3] == [(0, 1, 2), (1, 2, 0), (2, 0, 1)]  # each member plays every team once
    # the 4 combinations of 3 in turn, 3 games each, in which every member of the combination sits in every seat
    for block, combination in zip(range(0, 12, 3), [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)]):
        games = fixtures[block:block + 3]
        assert all(sorted(f) == list(combination) for f in games)
        assert all(sorted(f[seat] for f in games) == list(combination) for seat in range(3))


def test_level_3_bots_rank_above_a_random_team_reproducibly():
    participants = bot_participants([3]) + [Participant(RANDOM)]
    league = play_league(participants, {}, games=4, seed=3000, env_num=2, overrides=SHORT_GAMES, progress=False)
    assert [r['fixture'] for r in league.records] == [0, 1, 2, 3]
    assert [r['participants'] for r in league.records][:2] == [['bot_level_3', 'random'], ['random', 'bot_level_3']]
    # env k plays fixtures k and k + 2, its first two held-out games of env seed 3000 + k (odd: never a training game)
    assert [r['game_seed'] for r in league.records] == [2 * ((3000 + fixture % 2) * SEED_STRIDE + fixture // 2) + 1
                                                        for fixture in range(4)]
    for r in league.records:  # the bots win every game
        assert r['ranks'][r['participants'].index('bot_level_3')] == 1
    table = rating_table(league.participants, league.records)
    assert [row['name'] for row in table] == ['bot_level_3', RANDOM]
    assert table[0]['mu'] > 25 > table[1]['mu'] and table[0]['wins'] == 4
    assert rating_table(league.participants, league.records) == table

    again = play_league(participants, {}, games=4, seed=3000, env_num=2, overrides=SHORT_GAMES, progress=False)
    assert again.records == league.records
    assert rating_table(again.participants, again.records) == table


def test_the_cli_rates_a_checkpoint_and_writes_json_csv_png(tmp_path, capsys):
    ckpt = make_checkpoint(str(tmp_path / 'iteration_0.pth.tar'))
    out = tmp_path / 'league'
    argv = ['--ckpt', ckpt, '--bots', '1', '3', '--random', '--games', '1', '--out', str(out), '--no-progress']
    for item in SHORT_GAMES:
        argv += ['--set', item]
    assert league_main(argv) == 0
    printed = capsys.readouterr().out
    assert 'iteration_0' in printed and 'conservative' in printed
    assert sorted(os.listdir(out)) == sorted(FILES)
    with open(out / 'league.json') as f:
        saved = json.load(f)
    assert saved['settings']['preset'] == 'st_t2p2' and saved['settings']['games_per_combination'] == 1
    assert len(saved['games']) == 6  # 4 participants, 2 teams: 6 pairings
    names = {'iteration_0', 'bot_level_1', 'bot_level_3', RANDOM}
    assert {row['name'] for row in saved['table']} == names
    assert {n for g in saved['games'] for n in g['participants']} == names
    with open(out / 'league.csv') as f:
        rows = list(csv.DictReader(f))
    assert [r['name'] for r in rows] == [row['name'] for row in saved['table']]
    assert next(r for r in rows if r['name'] == 'iteration_0')['envstep'] == '0'
    assert next(r for r in rows if r['name'] == 'iteration_0')['run'] == ''  # given alone, not from a run folder
    with open(out / 'league.png', 'rb') as f:
        assert f.read(8) == b'\x89PNG\r\n\x1a\n'


def test_a_corrupt_checkpoint_is_an_error_naming_it(tmp_path, capsys):
    bad = tmp_path / 'iteration_7.pth.tar'
    bad.write_bytes(b'not a checkpoint')
    with pytest.raises(CheckpointError, match='iteration_7.pth.tar'):
        load_checkpoints([str(bad)])
    assert league_main(['--ckpt', str(bad), '--random', '--no-progress']) == 2
    assert f'error: cannot read checkpoint {bad}' in capsys.readouterr().err


def test_each_checkpoint_plays_at_the_decision_rate_it_was_trained_with(tmp_path):
    """A checkpoint trained with action_repeat 4 plays the same games against the bots whether the league steps
    every 4 GoBigger steps (alone) or every step (beside one trained with action_repeat 1), where it holds its
    moves between decisions."""
    ar4 = load_checkpoints([make_checkpoint(str(tmp_path / 'ar4.pth.tar'), action_repeat=4)])
    both = load_checkpoints([str(tmp_path / 'ar4.pth.tar'), make_checkpoint(str(tmp_path / 'ar1.pth.tar'))])
    bots = bot_participants([3])
    alone = play_league(ar4[0] + bots, ar4[1], games=2, seed=3000, env_num=1, overrides=SHORT_GAMES, progress=False)
    mixed = play_league(both[0][:1] + bots + both[0][1:], both[1], games=2, seed=3000, env_num=1,
                        overrides=SHORT_GAMES, progress=False)
    assert alone.settings['env']['action_repeat'] == 4 and alone.settings['decide_every'] == {'ar4': 1}
    assert mixed.settings['env']['action_repeat'] == 1 and mixed.settings['decide_every'] == {'ar4': 4, 'ar1': 1}
    assert [r['participants'] for r in mixed.records[:2]] == [['ar4', 'bot_level_3'], ['bot_level_3', 'ar4']]
    assert mixed.records[:2] == alone.records  # the first 2 fixtures: the same games, played out the same way
    with pytest.raises(ConfigError, match='env.action_repeat cannot be set'):
        play_league(ar4[0] + bots, ar4[1], games=1, seed=0, overrides=['env.action_repeat=2'], progress=False)


def test_too_few_participants_is_an_error(capsys):
    assert league_main(['--bots', '3', '--no-progress']) == 2
    assert 'needs at least 2 participants' in capsys.readouterr().err
    assert league_main(['--bots', '1', '2', '--preset', 'st_t3p2', '--no-progress']) == 2
    assert 'needs at least 3 participants' in capsys.readouterr().err


def test_a_run_folder_gives_its_checkpoints_by_env_step_without_the_best_copy(tmp_path):
    make_checkpoint(str(tmp_path / 'iteration_20.pth.tar'), train_iter=20, envstep=2000)
    make_checkpoint(str(tmp_path / 'iteration_5.pth.tar'), train_iter=5, envstep=500)
    make_checkpoint(str(tmp_path / 'ckpt_best.pth.tar'), train_iter=5, envstep=500)  # a copy of iteration_5
    participants, models = load_checkpoints([], [str(tmp_path)])
    assert [p.name for p in participants] == ['iteration_5', 'iteration_20']
    assert [p.envstep for p in participants] == [500, 2000] and set(models) == {'iteration_5', 'iteration_20'}
    other = make_checkpoint(str(tmp_path / 'other' / 'iteration_5.pth.tar'))  # the same file name, another run
    participants, _ = load_checkpoints([other], [str(tmp_path)])
    assert [p.name for p in participants] == [str(tmp_path / 'other' / 'iteration_5'), str(tmp_path / 'iteration_5'),
                                              'iteration_20']
    assert [p.run for p in participants] == [None, str(tmp_path), str(tmp_path)]  # given alone: a run of its own
