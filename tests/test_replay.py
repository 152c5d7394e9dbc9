"""Replays: gobigger-eval --replay-dir writes a playable mp4 of every evaluated game, with as
many frames as GoBigger's playback settings say; the console scripts are installed."""
import os
import subprocess
import sys

import cv2
import gobigger.configs
import pytest
from ding.utils import deep_merge_dicts

from ppo_gobigger.config import compile_config
from ppo_gobigger.pipeline.build import build_policy
from ppo_gobigger.pipeline.evaluate import even_split_env_num
from ppo_gobigger.pipeline.learn.checkpoint import save_checkpoint

CUSTOM = {'frame_limit': 80}  # 40 env steps a game
BIN = os.path.dirname(sys.executable)  # the console scripts sit next to the venv's python


def expected_video(cfg):
    """(frames, fps, height) of a game's video, from GoBigger's settings: a frame every fps // save_fps frames."""
    game = deep_merge_dicts(getattr(gobigger.configs, cfg.env.preset), cfg.env.custom_cfg)
    video = game['playback_settings']['by_video']
    return game['frame_limit'] // (game['fps'] // video['save_fps']), video['save_fps'], video['save_resolution']


def read_video(path):
    capture = cv2.VideoCapture(str(path))
    fps, frames = capture.get(cv2.CAP_PROP_FPS), []
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        frames.append(frame)
    capture.release()
    return frames, fps


@pytest.fixture(scope='module')
def checkpoint(tmp_path_factory):
    """An untrained team's checkpoint (the video shows whatever it plays) on short games."""
    folder = tmp_path_factory.mktemp('ckpt')
    cfg, create = compile_config({
        'exp_name': str(folder),
        'env': {'custom_cfg': CUSTOM, 'evaluator_env_num': 2, 'n_evaluator_episode': 2},
        'policy': {'model': {'hidden_size': 16}},
    })
    policy, _ = build_policy(cfg, create, enable_field=['learn'])
    path = folder / 'iteration_0.pth.tar'
    save_checkpoint(str(path), policy.learn_mode.state_dict(), 0, 0, cfg)
    return path, cfg


def test_eval_cli_saves_a_playable_video_of_each_game(checkpoint, tmp_path):
    ckpt, cfg = checkpoint
    out = subprocess.run(
        [os.path.join(BIN, 'gobigger-eval'), '--ckpt', str(ckpt), '--episodes', '2', '--replay-dir', str(tmp_path)],
        capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    videos = sorted(tmp_path.glob('*.mp4'))
    assert len(videos) == 2  # one per evaluated game, none for the games the envs start afterwards
    assert sorted(line.split('replay: ')[1] for line in out.stdout.splitlines() if line.startswith('replay: ')) \
        == [str(v) for v in videos]
    frames, fps, height = expected_video(cfg)
    for video in videos:
        assert video.name.startswith(f'{cfg.env.preset}_seed') and video.name.endswith('-all.mp4')
        read, read_fps = read_video(video)
        assert len(read) == frames and read_fps == fps
        assert read[0].shape[0] == height and read[0].std() > 0  # a drawn picture, not a blank frame


@pytest.mark.parametrize('episodes, env_num, expected', [(4, 2, 2), (3, 2, 1), (1, 2, 1), (6, 4, 3), (8, 8, 8)])
def test_replay_games_are_split_evenly_over_the_envs(episodes, env_num, expected):
    assert even_split_env_num(episodes, env_num) == expected


def test_console_scripts():
    for script, option in (('gobigger-train', '--no-progress'), ('gobigger-eval', '--replay-dir')):
        out = subprocess.run([os.path.join(BIN, script), '--help'], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and option in out.stdout
