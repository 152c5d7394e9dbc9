"""Head to head (gobigger-eval --ckpt A --vs B): the zoo's agents on short real games."""
import os

import pytest

from ppo_gobigger.cli import eval_main
from ppo_gobigger.envs.gobigger_env import SEED_STRIDE
from ppo_gobigger.pipeline.evaluate import evaluate
from ppo_gobigger.pipeline.learn.checkpoint import load_checkpoint, save_checkpoint
from ppo_gobigger.pipeline.league.head_to_head import SIDE_FIELDS, format_head_to_head, head_to_head, side_report

ZOO = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'zoo')
SCRATCH = os.path.join(ZOO, 'st_t2p2_scratch_s0.pth.tar')
LINEAGE = os.path.join(ZOO, 'st_t2p2_lineage_s0.pth.tar')
T4P3 = os.path.join(ZOO, 'st_t4p3_league_s0.pth.tar')
SHORT_GAMES = ['env.custom_cfg.frame_limit=200', 'env.manager.type=base']  # 100 env steps a game, one process


@pytest.fixture(scope='module')
def lineage_vs_scratch():
    """The lineage agent (A) against the scratch one (B) on 2 short games, 2 envs."""
    return head_to_head(LINEAGE, SCRATCH, episodes=2, env_num=2, overrides=SHORT_GAMES)


def test_both_sides_are_reported_on_the_evaluators_games(lineage_vs_scratch):
    report = lineage_vs_scratch
    games = report['games']
    assert [g['participants'] for g in games] == [['A', 'B'], ['B', 'A']]  # A's seat rotates
    for side in ('A', 'B'):
        assert tuple(report[side]) == SIDE_FIELDS and report[side]['games'] == 2
    # two teams: the higher score ranks first; each side's figures are the means over its games
    ranks, ratios, scores = {'A': [], 'B': []}, {'A': [], 'B': []}, {'A': [], 'B': []}
    for g in games:
        a, b = (g['final_scores'][g['participants'].index(s)] for s in ('A', 'B'))
        rank_a, rank_b = (g['ranks'][g['participants'].index(s)] for s in ('A', 'B'))
        assert (rank_a, rank_b) == ((1, 2) if a > b else (2, 1))
        for side, mine, theirs, rank in (('A', a, b, rank_a), ('B', b, a, rank_b)):
            ranks[side].append(rank)
            ratios[side].append(mine / theirs)
            scores[side].append(mine)
    for side in ('A', 'B'):
        assert report[side]['win_rate'] == ranks[side].count(1) / 2
        assert report[side]['rank_mean'] == sum(ranks[side]) / 2
        assert report[side]['score_ratio_mean'] == pytest.approx(sum(ratios[side]) / 2)
        assert report[side]['final_score_mean'] == pytest.approx(sum(scores[side]) / 2)
    assert report['A']['win_rate'] + report['B']['win_rate'] == 1.0  # no tie: one side first in each game
    # the games are the ones A's evaluation against the bots plays: the same held-out game seeds, the first game of
    # each evaluator env (env seeds A's config seed 0 and 1; odd: never a training game)
    evaluation = evaluate(LINEAGE, episodes=2, overrides=SHORT_GAMES[:1] + ['env.evaluator_env_num=2'])
    assert sorted(g['game_seed'] for g in games) == [g['game_seed'] for g in evaluation['games']]
    assert sorted(g['game_seed'] for g in games) == [2 * (seed * SEED_STRIDE) + 1 for seed in (0, 1)]


def test_the_games_follow_as_custom_cfg(tmp_path):
    """A trained on 40-frame games plays 40-frame games (20 GoBigger steps: the teams barely grow)."""
    payload = load_checkpoint(SCRATCH)
    payload['config']['env']['custom_cfg'] = {'frame_limit': 40}
    short = str(tmp_path / 'short.pth.tar')
    save_checkpoint(short, {'model': payload['model']}, payload['train_iter'], payload['envstep'], payload['config'])
    report = head_to_head(short, SCRATCH, episodes=1, env_num=1, overrides=['env.manager.type=base'])
    (game, ) = report['games']
    assert max(game['final_scores']) < 1.1 * 2 * 13000  # two players of score_init 13000, 40 frames in


def test_side_report_takes_each_sides_best_team():
    records = [dict(participants=['B', 'A', 'B'], ranks=[3, 2, 1], final_scores=[10.0, 20.0, 40.0]),
               dict(participants=['A', 'B', 'B'], ranks=[1, 2, 3], final_scores=[30.0, 10.0, 5.0])]
    a, b = side_report(records, 'A'), side_report(records, 'B')
    assert a['win_rate'] == b['win_rate'] == 0.5
    assert a['score_ratio_mean'] == pytest.approx((0.5 + 3.0) / 2)
    assert b['score_ratio_median'] == pytest.approx((2.0 + 1 / 3) / 2)
    assert (a['rank_mean'], b['rank_mean']) == (1.5, 1.5)


def test_on_a_multi_team_preset_b_plays_every_other_team():
    report = head_to_head(T4P3, T4P3, episodes=1, env_num=1, overrides=SHORT_GAMES)
    (game, ) = report['games']
    assert report['preset'] == 'st_t4p3'
    assert game['participants'] == ['A', 'B', 'B', 'B']
    assert report['A']['games'] == report['B']['games'] == 1


def test_cli_prints_both_sides(capsys, lineage_vs_scratch):
    argv = ['--ckpt', LINEAGE, '--vs', SCRATCH, '--episodes', '2', '--no-progress']
    assert eval_main(argv + sum((['--set', s] for s in SHORT_GAMES), [])) == 0
    out = capsys.readouterr().out
    assert 'A (--ckpt)' in out and 'B (--vs)' in out and 'score_ratio_median' in out and SCRATCH in out
    # the report of the games asked for (--episodes, --set; A's 2 evaluator envs): the API's, greedy play being
    # deterministic
    assert format_head_to_head(lineage_vs_scratch) in out


@pytest.mark.parametrize('vs, message', [
    (T4P3, 'was trained on st_t4p3'),
    ('missing.pth.tar', 'checkpoint not found: missing.pth.tar'),
    (__file__, 'not a checkpoint'),
])
def test_user_errors_name_the_bad_value(capsys, vs, message):
    assert eval_main(['--ckpt', SCRATCH, '--vs', vs, '--episodes', '1', '--no-progress']) == 2
    assert message in capsys.readouterr().err


def test_flags_of_the_bot_evaluation_are_refused(capsys):
    assert eval_main(['--ckpt', SCRATCH, '--vs', SCRATCH, '--replay-dir', 'videos']) == 2
    assert '--replay-dir does not apply to a head to head' in capsys.readouterr().err
