"""--resume restores everything a run depends on: an interrupted and resumed run equals an uninterrupted one."""
import torch

from ppo_gobigger.pipeline.learn.checkpoint import load_checkpoint
from test_training import small_config

# base manager (one process, deterministic order); each rollout holds exactly one whole game per env, so that a
# checkpoint between rollouts falls between games and the resumed run plays the very games the other one plays
WHOLE_GAMES = [
    'env.manager.type=base',
    'env.custom_cfg.frame_limit=120',  # 60 env steps per game
    'policy.collect.n_sample=120',  # 2 envs x 60
    'policy.learn.batch_size=60',
    'policy.eval.evaluator.eval_freq=100000',
]


def _final_state(exp_dir, train_iter):
    return load_checkpoint(str(exp_dir / 'ckpt' / f'iteration_{train_iter}.pth.tar'))


def test_resumed_run_matches_the_uninterrupted_run(tmp_path):
    from ppo_gobigger import train
    updates = 2 * 2  # per iteration: 2 epochs x (120 / 60) minibatches
    whole, _ = small_config(tmp_path / 'whole', *WHOLE_GAMES, 'max_env_step=360')
    train(whole, seed=3)
    first, _ = small_config(tmp_path / 'first', *WHOLE_GAMES, 'max_env_step=240')
    train(first, seed=3)
    second, _ = small_config(tmp_path / 'second', *WHOLE_GAMES, 'max_env_step=360')
    train(second, seed=3, resume=str(tmp_path / 'first' / 'ckpt' / f'iteration_{2 * updates}.pth.tar'))

    expected, got = _final_state(tmp_path / 'whole', 3 * updates), _final_state(tmp_path / 'second', 3 * updates)
    assert got['envstep'] == expected['envstep'] == 360
    for name, tensor in expected['model'].items():
        assert torch.equal(tensor, got['model'][name]), name
    for name in ('mean', 'var', 'count'):
        assert torch.equal(expected['value_norm'][name], got['value_norm'][name])
    # and the resumed run did learn something after the checkpoint
    before = _final_state(tmp_path / 'first', 2 * updates)
    assert any(not torch.equal(before['model'][k], got['model'][k]) for k in before['model'])
