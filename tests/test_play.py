"""gobigger-play: a person's input drives a player, checkpoints play the rest; headless (SDL's dummy video driver),
short real games with the zoo's agents."""
import math
import os

import numpy as np
import pygame
import pytest

from ppo_gobigger.cli import play_main
from ppo_gobigger.pipeline.arena.play import play
from ppo_gobigger.pipeline.arena.window import SCREEN

ZOO = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'zoo')
SCRATCH = os.path.join(ZOO, 'st_t2p2_scratch_s0.pth.tar')
LINEAGE = os.path.join(ZOO, 'st_t2p2_lineage_s0.pth.tar')
T4P3 = os.path.join(ZOO, 'st_t4p3_league_s0.pth.tar')


@pytest.fixture(autouse=True)
def headless(monkeypatch):
    monkeypatch.setenv('SDL_VIDEODRIVER', 'dummy')


def not_blank(path):
    """The frame holds a picture: many colours, no colour covering nearly all of it."""
    pixels = pygame.surfarray.array3d(pygame.image.load(path)).reshape(-1, 3)  # (W * H, 3)
    colours, counts = np.unique(pixels, axis=0, return_counts=True)
    return pixels.shape[0] == SCREEN * SCREEN and len(colours) > 20 and counts.max() < 0.95 * pixels.shape[0]


def own_balls(game):
    """(x, y, r) of the person's clone balls, from its own view."""
    return [c[:3] for c in game.player_states[game.human_id]['overlap']['clone'] if int(c[8]) == game.human_id]


def test_the_mouse_steers_and_w_splits_the_persons_player(tmp_path):
    seen = {}

    def script(game):
        if game.steps == 0:  # point from the window's centre (the player) towards the map's centre
            (x, y, _), = own_balls(game)
            width, height = game.global_state['border']
            dx, dy = width / 2 - x, height / 2 - y
            norm = math.hypot(dx, dy)
            seen['start'] = math.hypot(dx, dy)
            pointer = (SCREEN / 2 + SCREEN / 4 * dx / norm, SCREEN / 2 + SCREEN / 4 * dy / norm)
            pygame.event.post(pygame.event.Event(pygame.MOUSEMOTION, pos=pointer, rel=(0, 0), buttons=(0, 0, 0)))
        if game.steps == 30:
            seen['balls_before_split'] = len(own_balls(game))
            x, y = np.mean([b[:2] for b in own_balls(game)], axis=0)
            width, height = game.global_state['border']
            seen['after'] = math.hypot(width / 2 - x, height / 2 - y)
            pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_w, mod=0, unicode='w', scancode=26))
        if game.steps == 31:
            seen['balls_after_split'] = len(own_balls(game))

    shot = str(tmp_path / 'frame.png')
    result = play(SCRATCH, human_id=1, seed=3, frame_limit=80, speed=0, screenshot=shot, before_step=script)
    assert result['steps'] == 40 and not result['closed']
    assert seen['after'] < seen['start'] - 2  # it went where the mouse pointed
    assert seen['balls_before_split'] == 1 and seen['balls_after_split'] == 2  # the one ball split in two
    assert [r['played_by'] for r in sorted(result['standings'], key=lambda r: r['team'])] == ['A + you', 'A']
    assert not_blank(shot)


def test_escape_ends_the_game():
    def script(game):
        if game.steps == 3:
            pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_ESCAPE, mod=0, unicode='', scancode=41))

    result = play(SCRATCH, vs=LINEAGE, seed=0, frame_limit=200, speed=0, before_step=script)
    assert result['closed'] and result['steps'] == 3
    assert sorted(r['played_by'] for r in result['standings']) == ['A + you', 'B']


def test_watch_two_checkpoints_from_the_command_line(tmp_path, capsys):
    shot = str(tmp_path / 'watch.png')
    argv = ['--watch', SCRATCH, '--vs', LINEAGE, '--frame-limit', '40', '--speed', '0', '--seed', '1',
            '--screenshot', shot]
    assert play_main(argv) == 0
    out = capsys.readouterr().out
    assert 'game seed 1, 20 steps' in out and '(A)' in out and '(B)' in out and 'you' not in out
    assert not_blank(shot)


@pytest.mark.parametrize('argv, message', [
    (['--ckpt', SCRATCH, '--vs', T4P3], 'must share a preset'),
    (['--ckpt', SCRATCH, '--player', '4'], 'player 4 is not a player of st_t2p2: ids 0..3'),
    (['--watch', 'missing.pth.tar'], 'checkpoint not found: missing.pth.tar'),
])
def test_user_errors_name_the_bad_value(capsys, argv, message):
    assert play_main(argv + ['--frame-limit', '20', '--speed', '0']) == 2
    assert message in capsys.readouterr().err


def test_no_display_is_a_clear_error(monkeypatch, capsys):
    for key in ('DISPLAY', 'WAYLAND_DISPLAY', 'SDL_VIDEODRIVER'):
        monkeypatch.delenv(key, raising=False)
    assert play_main(['--ckpt', SCRATCH]) == 2
    assert 'SDL_VIDEODRIVER=dummy' in capsys.readouterr().err
