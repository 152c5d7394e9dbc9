"""Opponents played by policies (env.opponent 'self' and 'league'): the env's every-team mode, the pool's draws,
self-play on every team's steps, a league run whose pool grows and survives a resume."""
import json

import numpy as np
import pytest

from ppo_gobigger.config import ConfigError, compile_config
from ppo_gobigger.envs import OBS_SHAPES, GoBiggerEnv
from ppo_gobigger.pipeline.build import build_model
from ppo_gobigger.pipeline.learn.checkpoint import CheckpointError, load_checkpoint
from ppo_gobigger.pipeline.league.pool import LeaguePool
from test_training import read_jsonl, small_config

LEAGUE = dict(bot_levels=[1, 2, 3], snapshot_every=2, self_play=0.2)


def play(env, actions):
    """Rewards (T, G, A) and the final info of a whole game, ``actions(t)`` giving each step's action."""
    env.reset()
    rewards, t = [], 0
    while True:
        timestep = env.step(actions(t))
        rewards.append(timestep.reward)
        t += 1
        if timestep.done:
            return np.stack(rewards), timestep.info


@pytest.mark.parametrize('preset', ['st_t2p2', 'st_t3p2'])
def test_every_team_mode_gives_an_entry_per_team_ours_first(preset):
    env = GoBiggerEnv(dict(preset=preset, opponent='self', team_id=1, action_repeat=1, custom_cfg={'frame_limit': 40}))
    G, A = {'st_t2p2': (2, 2), 'st_t3p2': (3, 2)}[preset]
    env.seed(0)
    obs = env.reset()
    assert {k: v.shape for k, v in obs.items()} == {k: (G, A) + shape for k, shape in OBS_SHAPES.items()}
    assert env.action_space.shape == (G, A) and env.reward_space.shape == (G, A)
    rng = np.random.default_rng(0)
    rewards, info = play(env, lambda t: rng.integers(18, size=(G, A)))
    assert rewards.shape == (20, G, A)
    teams = info['teams']
    assert [team['team_id'] for team in teams] == [1] + [t for t in range(G) if t != 1]  # ours first
    assert teams[0]['rank'] == info['rank'] and teams[0]['final_score'] == info['final_score']
    assert sorted(team['rank'] for team in teams) == list(range(1, G + 1))  # no ties in practice
    counters = env._game.server.eats.values()  # every player's, so the teams' counts add up to the game's
    assert sum(team['ate_food'] for team in teams) == sum(c['food'] for c in counters) > 0
    assert sum(team['eaten'] for team in teams) == sum(c['eaten'] for c in counters)
    for g, team in enumerate(teams):  # each team's rewards sum to its own return
        assert rewards[:, g].mean(axis=1).sum() == pytest.approx(team['eval_episode_return'], rel=1e-5)


def test_a_team_with_a_bot_level_is_played_by_the_bots():
    """Row 1 handed to level-3 bots: whatever actions the caller gives for it, the game is the one in which the
    env's own level-3 bot opponents play that team."""
    def game(opponent, team1):
        env = GoBiggerEnv(dict(opponent=opponent, action_repeat=1, custom_cfg={'frame_limit': 60}))
        env.seed(5)
        ours = np.random.default_rng(1)
        if opponent == 'bot':
            return play(env, lambda t: ours.integers(18, size=2))[1]['final_score']
        return play(env, lambda t: {'action': np.stack([ours.integers(18, size=2), team1(t)]),
                                    'bot_level': np.array([0, 3])})[1]['final_score']

    other = np.random.default_rng(9)
    assert game('league', lambda t: np.zeros(2, int)) == game('league', lambda t: other.integers(18, size=2)) \
        == game('bot', None)


def test_a_held_team_plays_as_between_the_decisions_of_action_repeat():
    """A team that decides once and holds for 3 steps at action_repeat 1 plays the game that action_repeat 4 plays:
    the league plays each policy at its own decision rate this way."""
    def game(action_repeat, step):
        env = GoBiggerEnv(dict(opponent='league', action_repeat=action_repeat, custom_cfg={'frame_limit': 80}))
        env.seed(3)
        teams = play(env, step)[1]['teams']  # the returns differ in float32 rounding only (summed per env step)
        return [{k: v for k, v in team.items() if k != 'eval_episode_return'} for team in teams]

    def every_4th(t):  # decides (random moves) on GoBigger steps 0, 4, 8, ...; team 1 played by level-2 bots
        return {'action': moves[t // 4] if t % 4 == 0 else np.zeros((2, 2), int), 'bot_level': np.array([0, 2]),
                'hold': np.array([t % 4 != 0, False])}

    moves = np.random.default_rng(4).integers(18, size=(10, 2, 2))
    repeated = game(4, lambda t: {'action': moves[t], 'bot_level': np.array([0, 2])})
    held = game(1, every_4th)
    assert held == repeated
    assert held != game(1, lambda t: {'action': moves[t // 4], 'bot_level': np.array([0, 2])})  # re-given moves


def test_every_team_mode_rejects_bad_actions_and_a_stand_in():
    env = GoBiggerEnv(dict(opponent='league', action_repeat=1, custom_cfg={'frame_limit': 40}))
    env.seed(0)
    env.reset()
    with pytest.raises(ValueError, match=r'shape \(2, 2\)'):
        env.step(np.zeros(2, int))
    with pytest.raises(ValueError, match='bot_level must be 2 values'):
        env.step({'action': np.zeros((2, 2), int), 'bot_level': np.array([0, 4])})
    with pytest.raises(ValueError, match="keys 'action', 'bot_level' and 'hold'"):
        env.step({'actions': np.zeros((2, 2), int)})
    with pytest.raises(ValueError, match='hold must be 2 bools'):
        env.step({'action': np.zeros((2, 2), int), 'hold': np.array([0, 1])})
    with pytest.raises(ValueError, match='stand_in'):
        GoBiggerEnv(dict(opponent='self', stand_in='bot'))
    # evaluation games are played against the fixed bots, whatever the training opponents
    assert [c['opponent'] for c in GoBiggerEnv.create_evaluator_env_cfg(
        dict(GoBiggerEnv.default_config(), opponent='league', evaluator_env_num=2))] == ['bot', 'bot']


def test_league_config_is_checked(tmp_path):
    for extra, message in (
        (['league.self_play=2'], 'self_play'),
        (['league.bot_levels=[0]'], 'bot_levels'),
        (['env.opponent=\'self\'', 'distributed.backend=\'ray\''], 'backend'),
    ):
        main_config, create_config = small_config(tmp_path, *extra)
        with pytest.raises(ConfigError, match=message):
            compile_config(main_config, create_config)


def _pool(tmp_path, **league):
    cfg, _ = compile_config(*small_config(tmp_path))
    return LeaguePool(str(tmp_path / 'league'), dict(LEAGUE, **league), lambda: build_model(cfg), seed=0)


def test_pool_draws_as_documented(tmp_path):
    pool = _pool(tmp_path, self_play=0.25)
    level1, level2, level3 = pool.members
    level1.games, level1.wins = 8, 8  # we always beat it: p = 9/10
    level2.games, level2.wins = 8, 4  # p = 5/10
    level3.games, level3.wins = 8, 0  # it always beats us: p = 1/10
    raw = np.array([0.1, 0.5, 0.9])**2
    np.testing.assert_allclose(pool.weights(), raw / raw.sum())
    draws = [m.name if m else 'self' for m in pool.draw(20_000, env_id=0)]
    counts = {name: draws.count(name) / len(draws) for name in set(draws)}
    expected = dict(zip(['bot_level_1', 'bot_level_2', 'bot_level_3'], 0.75 * raw / raw.sum()), self=0.25)
    for name, share in expected.items():
        assert counts[name] == pytest.approx(share, abs=0.01)
    # the same seed draws the same opponents
    assert [m.name if m else None for m in _pool(tmp_path / 'a').draw(50, env_id=3)] == \
        [m.name if m else None for m in _pool(tmp_path / 'b').draw(50, env_id=3)]


def test_a_draw_depends_on_its_env_and_game_not_on_the_order_of_the_others(tmp_path):
    """The draw for (env, game) comes from its own generator, sees the snapshots taken before the rollout of the
    game before it, and counts the results of the games two back: the same whichever envs drew or ended first."""
    names = lambda drawn: [m.name if m else 'self' for m in drawn]  # noqa: E731
    a, b = _pool(tmp_path / 'a', self_play=0.3), _pool(tmp_path / 'b', self_play=0.3)
    first = {i: names(a.draw(4, env_id=i)) for i in (0, 1, 2)}
    assert {i: names(b.draw(4, env_id=i)) for i in (2, 0, 1)} == first
    assert first[0] != first[1] or first[1] != first[2]  # each env its own draws
    level1, level2, level3 = a.members
    a.record(0, [level3], [True])  # env 0's game 0
    a.record(1, [level1], [False])
    assert (level3.games, level1.games) == (0, 0) and a.games_ended == {0: 1, 1: 1}
    a.draw(1, env_id=0)  # game 1: the results of game 0 not counted yet (env 2's game 0 may still be playing)
    assert (level3.games, level1.games) == (0, 0)
    a.record(0, [level2], [True])
    a.draw(1, env_id=0)  # game 2 counts every game 0
    assert (level1.games, level1.wins, level3.games, level3.wins, level2.games) == (1, 0, 1, 1, 0)
    assert a.pending == [(1, ['bot_level_2'], [True])]
    # a snapshot taken after iteration k is drawn from game k + 1 on (game k may already be drawn)
    only = _pool(tmp_path / 'c', self_play=0.0, bot_levels=[1])
    only.iterations = 3
    snapshot = only.add_snapshot(build_model(compile_config(*small_config(tmp_path))[0]), 24, 768, {})
    assert snapshot.first_game == 4
    only.games_ended = {0: 3, 1: 4}
    assert {m.name for _ in range(20) for m in only.draw(5, env_id=0)} == {'bot_level_1'}
    assert 'snapshot_24' in names(only.draw(50, env_id=1))
    # the state carries it all: a restored pool draws as the original
    again = _pool(tmp_path / 'd', self_play=0.3)
    again.restore(a.state(), a.folder)
    assert names(again.draw(6, env_id=0)) == names(a.draw(6, env_id=0))


def test_self_play_learns_from_every_team(tmp_path):
    from ppo_gobigger import train
    main_config, create_config = small_config(
        tmp_path, "env.opponent='self'", 'env.manager.type=base', 'max_env_step=512',
        'policy.eval.evaluator.eval_freq=512'
    )
    train(main_config, create_config, seed=0, progress=False)
    log = read_jsonl(tmp_path / 'learner.jsonl')
    # env steps are counted as ever (2 rollouts of n_sample = 256), but each gives 2 teams x 256 samples:
    # 2 epochs x 512 / 128 minibatches per iteration, twice what one team's steps give
    assert [r['envstep'] for r in log] == [256, 512]
    assert [r['train_iter'] for r in log] == [8, 16]
    assert [r['episode_count'] for r in log] == [4, 8]  # games, not teams: 60 env steps a game, 2 envs
    reports = read_jsonl(tmp_path / 'evaluator.jsonl')
    assert [r['collector_envstep'] for r in reports] == [0, 512]
    assert all(r['episode_count'] == 2 and r['opponent_score_mean'] > 0 for r in reports)  # against the bots


def test_a_league_learns_from_every_team_only_in_its_self_play_games(tmp_path):
    """Every team learnt from in a league: a game whose other team the draw gave to the current weights shows the
    collector both teams (ids 2i, 2i + 1) from its first step to its last; a game against a member shows team 0 only,
    and only those games are counted against the members."""
    from ppo_gobigger.pipeline.league.team_play import TeamPlay
    from ppo_gobigger.pipeline.play.env_manager import build_env_managers, close_env_manager
    main_config, create_config = small_config(
        tmp_path, "env.opponent='league'", 'env.manager.type=base',
        'env.custom_cfg.frame_limit=40'
    )
    cfg, create_cfg = compile_config(main_config, create_config)
    manager, _ = build_env_managers(cfg, create_cfg, evaluate=False)
    manager.seed(0)
    manager.launch()
    pool = _pool(tmp_path, bot_levels=[3], self_play=0.5)
    play = TeamPlay(manager, None, teams=2, pool=pool)  # no policy: no opponent is ours here
    rng = np.random.default_rng(0)
    shown = {0: [], 1: []}  # env -> the ids shown at each step of its current game
    games = {'self-play': 0, 'member': 0}
    try:
        while sum(games.values()) < 8:
            ready = play.ready_obs
            for i in shown:
                shown[i].append(sorted(j for j in ready if j // 2 == i))
            timesteps = play.step({j: rng.integers(18, size=2) for j in ready})
            assert sorted(timesteps) == sorted(ready)
            for i, ids in shown.items():
                if not timesteps[2 * i].done:
                    continue
                assert ids in ([[2 * i]] * 20, [[2 * i, 2 * i + 1]] * 20)  # 20 env steps, the same teams throughout
                if len(ids[0]) == 2:
                    games['self-play'] += 1
                    theirs = timesteps[2 * i + 1]
                    assert theirs.done and theirs.info['rank'] != timesteps[2 * i].info['rank']  # its own outcome
                else:
                    games['member'] += 1
                shown[i] = []
        ready = play.ready_obs
        wrong = {j: np.zeros(2, int) for j in ready if j != 1} if 1 in ready else {**ready, 1: np.zeros(2, int)}
        with pytest.raises(RuntimeError, match='learning teams'):  # env 0's team 1 left out, or given in a member game
            play.step({j: np.zeros(2, int) for j in wrong})
    finally:
        close_env_manager(manager)
    assert games['self-play'] > 0 and games['member'] > 0
    counted_later = sum(name is not None for _, names, _ in pool.pending for name in names)  # the last two games
    assert pool.members[0].games + counted_later == games['member']


@pytest.mark.parametrize('manager', ['env.manager.type=base', 'env.collector_env_num=4'])  # 4 subprocess envs: halves
def test_a_league_with_all_teams_trains_on_its_self_play_games_every_team(tmp_path, manager):
    from ppo_gobigger import train
    main_config, create_config = small_config(
        tmp_path, "env.opponent='league'", 'league.bot_levels=[3]', 'league.self_play=0.5',
        'league.snapshot_every=100', manager, 'max_env_step=512'
    )
    train(main_config, create_config, seed=0, progress=False)
    log = read_jsonl(tmp_path / 'learner.jsonl')
    assert [r['envstep'] for r in log] == [256, 512]  # env steps and games counted as ever
    assert [r['episode_count'] for r in log] == [4, 8]
    # 2 epochs of minibatches of 128 over our 256 samples and the other team's in the self-play games
    assert all(4 <= r['update_count'] <= 8 for r in log) and sum(r['update_count'] for r in log) > 8
    with open(tmp_path / 'league' / 'pool.json') as f:
        members = json.load(f)['members']
    assert [m['name'] for m in members] == ['bot_level_3'] and members[0]['games'] > 0


def test_league_pool_grows_is_sampled_and_survives_a_resume(tmp_path):
    from ppo_gobigger import train
    extra = ("env.opponent='league'", 'league.snapshot_every=2', 'league.bot_levels=[1, 2, 3]', 'league.self_play=0.2',
             'env.manager.type=base',
             'policy.eval.evaluator.eval_freq=512')
    first, create_config = small_config(tmp_path / 'first', *extra, 'max_env_step=1024')
    train(first, create_config, seed=0, progress=False)
    with open(tmp_path / 'first' / 'league' / 'pool.json') as f:
        pool = json.load(f)
    assert pool['iterations'] == 4
    names = [m['name'] for m in pool['members']]
    assert names[:3] == ['bot_level_1', 'bot_level_2', 'bot_level_3']
    # every 2nd iteration, as weights only, named by the updates so far (more in the iterations with self-play games:
    # every team's steps are learnt from there)
    updates = [r['train_iter'] for r in read_jsonl(tmp_path / 'first' / 'learner.jsonl')]
    assert names[3:] == [f'snapshot_{updates[1]}', f'snapshot_{updates[3]}'] and updates[1] == 8
    snapshot = load_checkpoint(str(tmp_path / 'first' / 'league' / 'snapshot_8.pth.tar'))
    assert set(snapshot) == {'format', 'train_iter', 'envstep', 'config', 'model'} and snapshot['envstep'] == 512
    # 1024 env steps = 16 games of 60-64 steps... each drew its opponent: self (not counted) or a member
    games = sum(m['games'] for m in pool['members'])
    assert 8 <= games <= 16

    # resume from the checkpoint at 512 env steps in another folder: the pool as it was then, snapshots copied
    ckpt = tmp_path / 'first' / 'ckpt' / 'iteration_8.pth.tar'
    saved = load_checkpoint(str(ckpt))['league']
    assert saved['iterations'] == 2 and [m['name'] for m in saved['members']][3:] == ['snapshot_8']
    second, _ = small_config(tmp_path / 'second', *extra, 'max_env_step=1024')
    train(second, create_config, seed=0, resume=str(ckpt), progress=False)
    with open(tmp_path / 'second' / 'league' / 'pool.json') as f:
        resumed = json.load(f)
    assert resumed['iterations'] == 4 and [m['name'] for m in resumed['members']][3:] == names[3:]
    assert sum(m['games'] for m in resumed['members']) >= sum(m['games'] for m in saved['members'])

    # a pool member that no longer loads is an error naming it
    with open(tmp_path / 'second' / 'league' / 'snapshot_8.pth.tar', 'wb') as f:
        f.write(b'not a checkpoint')
    pool = _pool(tmp_path / 'third')
    with pytest.raises(CheckpointError, match='snapshot_8'):
        pool.restore(load_checkpoint(str(tmp_path / 'second' / 'ckpt' / f'iteration_{updates[3]}.pth.tar'))['league'],
                     str(tmp_path / 'second' / 'league'))
