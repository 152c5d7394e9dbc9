"""Gradient parallelism: 2 gloo ranks on CPU, each running the real training loop on its half of the envs."""
import json
import os
import socket

import pytest
import torch
import torch.multiprocessing as mp

from ppo_gobigger.config import ConfigError, compile_config
from ppo_gobigger.pipeline.distributed.torchrun import Rank, rank_config
from ppo_gobigger.pipeline.learn.checkpoint import load_checkpoint
from test_training import small_config

WORLD_SIZE = 2
# 128 env steps per iteration over 2 envs; 2 epochs of 2 minibatches of 64 (32 per rank); 3 iterations
TINY = [
    'env.manager.type=base',
    'env.evaluator_env_num=1',
    'env.n_evaluator_episode=1',
    'policy.collect.n_sample=128',
    'policy.learn.batch_size=64',
    'policy.eval.evaluator.eval_freq=100000',
    'policy.learn.torch_threads=1',  # the same arithmetic in each rank and in the single process below
    'max_env_step=384',
]
# what one of the two ranks sees: its env (env 0, the same games as rank 0's), half of n_sample and of batch_size
HALF = ['env.collector_env_num=1', 'policy.collect.n_sample=64', 'policy.learn.batch_size=32', 'max_env_step=192']


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _rank(index, port, main_config, create_config, out_dir):
    """One torchrun-like rank: the environment variables torchrun sets, then the training entry."""
    os.environ.update(RANK=str(index), LOCAL_RANK=str(index), WORLD_SIZE=str(WORLD_SIZE),
                      LOCAL_WORLD_SIZE=str(WORLD_SIZE), MASTER_ADDR='127.0.0.1', MASTER_PORT=str(port))
    from ppo_gobigger import train
    policy, report = train(main_config, create_config, seed=0, progress=False)
    torch.save({'model': policy.learn_mode.state_dict()['model'], 'report': report}, os.path.join(out_dir, f'rank{index}.pt'))


def _read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


@pytest.fixture(scope='module')
def ddp_run(tmp_path_factory):
    exp_dir = tmp_path_factory.mktemp('ddp')
    main_config, create_config = small_config(exp_dir / 'exp', *TINY)
    mp.start_processes(_rank, args=(_free_port(), main_config, create_config, str(exp_dir)), nprocs=WORLD_SIZE,
                       join=True, start_method='spawn')
    ranks = [torch.load(exp_dir / f'rank{i}.pt', weights_only=True) for i in range(WORLD_SIZE)]
    return exp_dir, ranks


def test_ranks_hold_identical_parameters_after_updates(ddp_run):
    exp_dir, ranks = ddp_run
    log = _read_jsonl(exp_dir / 'exp' / 'learner.jsonl')
    assert [r['envstep'] for r in log] == [128, 256, 384]  # env steps of both ranks
    assert [r['train_iter'] for r in log] == [4, 8, 12]
    initial = load_checkpoint(str(exp_dir / 'exp' / 'ckpt' / 'iteration_0.pth.tar'))['model']
    final = load_checkpoint(str(exp_dir / 'exp' / 'ckpt' / 'iteration_12.pth.tar'))['model']
    for name, tensor in ranks[0]['model'].items():
        assert torch.equal(tensor, ranks[1]['model'][name]), name
        assert torch.equal(tensor, final[name]), name  # rank 0 wrote the checkpoint
    assert any(not torch.equal(initial[k], final[k]) for k in initial)  # the updates did change them
    assert ranks[0]['report']['collector_envstep'] == 384 and ranks[1]['report'] == {}  # rank 0 alone evaluates


def test_the_other_rank_contributes_to_every_update(ddp_run, tmp_path):
    """A single process on rank 0's half of the data ends elsewhere. Everything else is equal (env, seeds,
    minibatch size, one torch thread): without the other rank's gradients and returns, rank 0 ends exactly here."""
    from ppo_gobigger import train
    _, ranks = ddp_run
    main_config, create_config = small_config(tmp_path, *TINY, *HALF)
    policy, _ = train(main_config, create_config, seed=0, progress=False)
    alone = policy.learn_mode.state_dict()['model']
    differing = [k for k, v in alone.items() if not torch.equal(v, ranks[0]['model'][k])]
    assert len(differing) > len(alone) // 2


def test_uneven_shares_are_refused():
    main_config, create_config = small_config('unused', 'env.collector_env_num=3', 'policy.collect.n_sample=192')
    cfg, _ = compile_config(main_config, create_config)
    with pytest.raises(ConfigError, match=r'3 torchrun ranks.*collector_env_num \(3\).*batch_size \(128\)'):
        rank_config(cfg, Rank(0, 3, 0))
    with pytest.raises(ConfigError, match=r'2 torchrun ranks.*collector_env_num \(3\)'):
        rank_config(cfg, Rank(1, 2, 1))
    share = rank_config(compile_config(*small_config('unused', *TINY))[0], Rank(1, 2, 1))
    assert (share.env.collector_env_num, share.policy.collect.n_sample, share.policy.learn.batch_size) == (1, 64, 32)
