"""The collector over each DI-engine env manager: every collected step reaches the learner, trajectories are
bootstrapped exactly where they are cut, and episode ends are marked. Over subprocess envs the collector and the
evaluator step two halves of the envs in turn; the evaluator plays the same games either way."""
import os

import numpy as np
import pytest
import torch

from ppo_gobigger.config import compile_config
from ppo_gobigger.pipeline.build import build_policy
from ppo_gobigger.pipeline.play.collector import RolloutCollector
from ppo_gobigger.pipeline.play import evaluator as evaluator_module
from ppo_gobigger.pipeline.play.env_manager import build_env_managers, close_env_manager, env_cores, env_groups
from test_env import TEST_ENV

GAME_STEPS = 20  # frame_limit 40 at step_mul 2


def _config(manager_type, env_num=2):
    return compile_config({
        'seed': 1,
        'env': {
            **TEST_ENV,
            'custom_cfg': {'frame_limit': 2 * GAME_STEPS},
            'collector_env_num': env_num,
            'manager': {'type': manager_type},
        },
        'policy': {'model': {'hidden_size': 16}, 'collect': {'n_sample': 64}, 'learn': {'batch_size': 32}},
    })


def _setup(manager_type, env_num=2):
    cfg, create = _config(manager_type, env_num)
    torch.manual_seed(0)
    collector_env, _ = build_env_managers(cfg, create, evaluate=False)
    policy, _ = build_policy(cfg, create)
    collector_env.seed(cfg.seed, dynamic_seed=True)
    collector_env.launch()
    return collector_env, RolloutCollector(collector_env, policy.collect_mode, cfg.policy.collect.n_sample)


@pytest.mark.parametrize('manager_type, env_num', [('base', 2), ('subprocess', 2), ('subprocess', 4),
                                                    ('async_subprocess', 2)])
def test_every_step_reaches_the_learner(manager_type, env_num):
    trainer_cores = os.sched_getaffinity(0) if hasattr(os, 'sched_getaffinity') else None
    env, collector = _setup(manager_type, env_num)
    assert len(env_groups(env)) == (2 if (manager_type, env_num) == ('subprocess', 4) else 1)  # 4 envs: halves
    try:
        rollouts = [collector.collect() for _ in range(3)]
        envs = [p.pid for p in env._subprocesses.values()] if manager_type != 'base' else []
        if hasattr(os, 'SCHED_BATCH'):  # env processes yield to the trainer on wake-up; the trainer is unchanged
            assert [os.sched_getscheduler(pid) for pid in envs] == [os.SCHED_BATCH] * len(envs)
            assert os.sched_getscheduler(0) == os.SCHED_OTHER
        if trainer_cores is not None:  # env i on core i mod n of the trainer's cores; the trainer left as it was
            cores = sorted(trainer_cores)
            assert [os.sched_getaffinity(pid) for pid in envs] == [{cores[i % len(cores)]} for i in range(len(envs))]
            assert os.sched_getaffinity(0) == trainer_cores
    finally:
        close_env_manager(env)
    total = 0
    for rollout in rollouts:
        valid = rollout['valid']  # (T, E)
        n = int(valid.sum())
        total += n
        if manager_type == 'async_subprocess':
            assert 64 <= n <= 65  # may overshoot by the one step that drains the steps in flight
        else:
            assert n == 64
        T, E, A = rollout['value'].shape
        assert rollout['obs']['clone'].shape[:3] == (T, E, A) and rollout['logit'].shape == (T, E, A, 18)
        for e in range(E):
            length = int(valid[:, e].sum())
            assert valid[:length, e].all() and not valid[length:, e].any()  # a segment starts at t = 0
            if length == 0:
                continue
            cut, done = rollout['cut'][:length, e], rollout['done'][:length, e]
            assert cut[-1] and (cut | ~done).all()  # the segment ends cut; every game end is a cut
            for t in range(length - 1):
                if not cut[t]:  # inside a trajectory: bootstrap from the next step's own value
                    torch.testing.assert_close(rollout['next_value'][t, e], rollout['value'][t + 1, e])
            # a game lasts GAME_STEPS steps, so the ends fall where the step count says (no step lost or repeated)
    assert total == collector.envstep
    assert collector.episode_count == sum(int(r['done'][r['valid']].sum()) for r in rollouts)
    # every game is exactly GAME_STEPS long, so each env has finished as many games as its steps say (an env may
    # take more steps than another while the other's finished game is reset in the background)
    env_steps = sum(r['valid'].sum(0) for r in rollouts).tolist()  # (E,)
    assert collector.env_episodes == [steps // GAME_STEPS for steps in env_steps]


def test_a_game_cut_by_the_rollout_continues_in_the_next():
    env, collector = _setup('base')
    try:
        first, second = collector.collect(), collector.collect()
    finally:
        close_env_manager(env)
    # 32 steps per env: the second game is 12 steps in when the first rollout ends
    assert first['cut'][-1].all() and not first['done'][-1].any()
    # the first rollout's last step was bootstrapped with the critic's value of the state the next rollout starts in
    torch.testing.assert_close(first['next_value'][-1], second['value'][0])
    done_steps = [int(t) for t in np.nonzero(second['done'][:, 0].numpy())[0]]
    # that game ends 8 steps into the second rollout, and the next one GAME_STEPS later
    assert done_steps == [GAME_STEPS - 12 - 1, 2 * GAME_STEPS - 12 - 1]


def test_envs_in_their_own_processes_step_in_two_halves_of_games():
    class Envs:
        def __init__(self, env_num, can_send_ahead):
            self.env_num, self.can_send_ahead = env_num, can_send_ahead

    assert env_groups(Envs(8, True)) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert env_groups(Envs(5, True)) == [[0, 1, 2], [3, 4]]
    assert env_groups(Envs(10, True), teams_per_env=2) == [[0, 1, 2, 3, 4, 5], [6, 7, 8, 9]]  # a game's teams together
    assert env_groups(Envs(6, True), teams_per_env=2) == [list(range(6))]  # 3 games: all at once
    assert env_groups(Envs(2, True)) == [[0, 1]]  # the evaluator's 2 envs
    assert env_groups(Envs(8, False)) == [list(range(8))]  # envs in this process: all at once


def test_the_evaluator_plays_the_same_games_in_halves_and_all_at_once(monkeypatch):
    cfg, create = _config('subprocess')
    cfg.env.evaluator_env_num = 4  # halves of 2
    torch.manual_seed(0)
    policy, _ = build_policy(cfg, create, enable_field=['eval'])

    def play():
        _, env = build_env_managers(cfg, create, collect=False)
        env.launch()
        try:
            evaluator = evaluator_module.Evaluator(env, policy.eval_mode, n_episode=4, seed=7, progress=False)
            report = evaluator.eval()
            return report['envstep_count'], evaluator.games
        finally:
            close_env_manager(env)

    halves = play()
    monkeypatch.setattr(evaluator_module, 'env_groups', lambda manager: [list(range(manager.env_num))])
    assert play() == halves
    assert halves[0] == 4 * GAME_STEPS and len(halves[1]) == 4


def test_env_cores_round_robin_over_the_allowed_cores(monkeypatch):
    """A share of the run's envs (a torchrun rank's or a Ray worker's) continues the round robin where the share
    before it stopped, over the cores this process may use (taskset's)."""
    monkeypatch.setattr(os, 'sched_getaffinity', lambda pid: {5, 2, 7}, raising=False)
    assert env_cores(0, 4) == [2, 5, 7, 2]
    assert env_cores(4, 3) == [5, 7, 2]
    monkeypatch.delattr(os, 'sched_getaffinity', raising=False)
    assert env_cores(0, 2) == [None, None]
