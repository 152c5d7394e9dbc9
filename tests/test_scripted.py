"""The scripted players (envs/scripted.py): valid actions on real games, reproducible games, their variants checked,
and two tactics on hand-built states: fleeing a bigger ball and a split attack on a smaller one."""
import math
import os

import numpy as np
import pytest

from ppo_gobigger.config import ConfigError, apply_overrides, compile_config, load_config_file
from ppo_gobigger.envs import ACTION_NUM, GoBiggerEnv
from ppo_gobigger.envs.engine import create_game
from ppo_gobigger.envs.opponents import ENV_OPPONENTS, Opponents
from ppo_gobigger.envs.scripted import SCRIPTED_VARIANTS, ScriptedAgent, Tactics, check_variant, split_reach

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BORDER = (64.0, 64.0)  # st_t2p2's map


def clone(x, y, score, player, team, vx=0.0, vy=0.0):
    """A clone row of a player_state's overlap: [x, y, r, score, vx, vy, dir_x, dir_y, player_id, team_id]."""
    return [x, y, math.sqrt(score / 100 * 0.042 + 0.15), score, vx, vy, 1.0, 0.0, player, team]


def state(clones, food=(), thorns=(), can_split=True):
    return dict(rectangle=(0, 0, 40, 40), team_name=0, score=sum(c[3] for c in clones if c[8] == 0),
                can_eject=True, can_split=can_split,
                overlap=dict(food=list(food), thorns=list(thorns), spore=[], clone=list(clones)))


def make_env(**cfg):
    cfg = dict(dict(opponent='scripted', stand_in='scripted', action_repeat=1, reward='log_score', team_spirit=1.0,
                    custom_cfg={'frame_limit': 200}, is_evaluator=True), **cfg)
    return GoBiggerEnv(cfg)


def test_scripted_is_an_env_played_kind_and_a_variant_is_a_tactics():
    assert 'scripted' in ENV_OPPONENTS
    assert 'hunter' in SCRIPTED_VARIANTS and 'holdout' in SCRIPTED_VARIANTS
    assert SCRIPTED_VARIANTS['holdout'] != SCRIPTED_VARIANTS['hunter']
    assert all(isinstance(t, Tactics) for t in SCRIPTED_VARIANTS.values())


@pytest.mark.parametrize('variant', sorted(SCRIPTED_VARIANTS))
def test_every_player_gets_a_valid_action_every_step(variant):
    """On a real game, every player of every team played by scripted players gets [x, y, action_type]: a unit (or
    zero) direction and a GoBigger action type."""
    game = create_game('st_t2p2', {'frame_limit': 200})
    game.server._random.seed(3)
    _, player_states = game.reset()
    players = Opponents('scripted', sorted(player_states), scripted_variant=variant, border=BORDER)
    players.reset(3)
    done = False
    while not done:
        actions = players.act(player_states)
        assert sorted(actions) == sorted(player_states)
        for x, y, action_type in actions.values():
            assert action_type in (0, 1, 2) and np.isfinite([x, y]).all()
            assert math.hypot(x, y) == pytest.approx(1.0) or (x, y) == (0.0, 0.0)
        (_, player_states), _, done, _ = game.step(actions)
    game.close()


def test_the_same_seed_plays_the_same_game():
    """Scripted opponents and a scripted stand-in: the same seed gives the same moves and the same final scores;
    the stand-in's moves come back as action indices."""
    def play(seed):
        env = make_env()
        env.seed(seed, dynamic_seed=False)
        env.reset()
        moves, done = [], False
        while not done:
            timestep = env.step(np.zeros(2, np.int64))
            done = timestep.done
            moves.append(timestep.info['stand_in_action'].tolist())
        env.close()
        assert all(0 <= k < ACTION_NUM for m in moves for k in m)
        return timestep.info['final_score'], timestep.info['opponent_score'], moves

    first = play(7)
    assert play(7) == first
    assert len({m[0] for m in first[2]}) > 1  # the players steer


def test_a_bad_variant_raises_naming_it_and_the_allowed():
    with pytest.raises(ValueError, match=r"'sniper'.*'hunter', 'holdout'"):
        check_variant('sniper')
    with pytest.raises(ValueError, match=r"scripted_variant 'sniper'"):
        GoBiggerEnv(dict(opponent='bot', scripted_variant='sniper'))
    with pytest.raises(ValueError, match=r"'sniper'"):
        Opponents('scripted', [0, 1], scripted_variant='sniper')


def test_config_accepts_a_scripted_stand_in_and_rejects_a_bad_variant():
    main_config, create_config = load_config_file(os.path.join(ROOT, 'config', 'gobigger_ppo_config.py'))
    good = ['env.opponent=bot', 'env.stand_in=scripted', 'env.scripted_variant=holdout']
    cfg, _ = compile_config(apply_overrides(main_config, good), create_config)
    assert cfg.env.stand_in == 'scripted' and cfg.env.scripted_variant == 'holdout'
    with pytest.raises(ConfigError, match=r"'sniper'.*'hunter'"):
        compile_config(apply_overrides(main_config, ['env.scripted_variant=sniper']), create_config)


@pytest.mark.parametrize('variant', sorted(SCRIPTED_VARIANTS))
def test_it_flees_a_bigger_ball(variant):
    """A big enemy clone just right of our small ball, food on the right as bait: the move points left."""
    agent = ScriptedAgent(0, SCRIPTED_VARIANTS[variant], BORDER)
    food = [[36.0 + i, 30.0, 0.44, 100.0] for i in range(5)]
    x, y, action_type = agent.step(state([clone(30, 30, 13000, 0, 0), clone(35, 30, 40000, 2, 1)], food))
    assert action_type == 0 and x < -0.9 and abs(y) < 0.3


@pytest.mark.parametrize('variant', sorted(SCRIPTED_VARIANTS))
def test_it_split_attacks_a_small_ball_in_reach(variant):
    """A small enemy ball within split reach, our halves > 1.3x it, no other enemy near: split towards it; out of
    reach or unable to split, it does not split."""
    agent = ScriptedAgent(0, SCRIPTED_VARIANTS[variant], BORDER)
    ours, prey = clone(30, 30, 40000, 0, 0), clone(30, 36, 5000, 2, 1)
    x, y, action_type = agent.step(state([ours, prey]))
    assert action_type == 2 and y > 0.9
    assert agent.step(state([ours, prey], can_split=False))[2] != 2
    far = clone(30, 30 + 1.2 * float(split_reach(np.sqrt(200 * 0.042 + 0.15))), 5000, 2, 1)
    assert agent.step(state([ours, far]))[2] != 2
    bigger = clone(22, 30, 30000, 3, 1)  # could eat a half of ours: no split beside it
    assert agent.step(state([ours, prey, bigger]))[2] != 2
