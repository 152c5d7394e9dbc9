"""End to end on small settings: real games, real DI-engine managers, real PPO updates, checkpoints and reports."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from ppo_gobigger.cli import BOTS_CONFIG  # the default's settings against the bots (its league: test_league.py)
from ppo_gobigger.config import apply_overrides, compile_config, load_config_file
from ppo_gobigger.pipeline.learn.checkpoint import CheckpointError, load_checkpoint
from ppo_gobigger.pipeline.play.evaluator import REPORT_FIELDS, selection_key

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = [
    'env.custom_cfg.frame_limit=120',  # 60 env steps per game at one decision per GoBigger step:
    'env.action_repeat=1',  # (the default's 4 is tested in test_env.py)
    'env.collector_env_num=2',
    'env.evaluator_env_num=2',
    'env.n_evaluator_episode=2',
    'policy.model.hidden_size=32',
    'policy.collect.n_sample=256',
    'policy.learn.batch_size=128',
    'policy.learn.epoch_per_collect=2',
    'policy.eval.evaluator.eval_freq=512',
    'max_env_step=1024',
    # learning on one thread: the default (every core) made an iteration's 4 updates take 0.5-8 s instead of 0.06 s
    # on the 2 shared cores of a test run (torch_threads is tested on its own below)
    'policy.learn.torch_threads=1',
]


def small_config(exp_dir, *extra):
    main_config, create_config = load_config_file(BOTS_CONFIG)
    main_config = apply_overrides(main_config, SMALL + [f'exp_name={str(exp_dir)!r}', *extra])
    return main_config, create_config


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def test_training_writes_checkpoints_and_reports(trained):
    exp_dir, report = trained
    reports = read_jsonl(exp_dir / 'evaluator.jsonl')
    assert len(reports) == 3  # before training, at 512 and at 1024 env steps
    for r in reports:
        assert tuple(r) == REPORT_FIELDS
        assert r['episode_count'] == 2 and r['envstep_count'] == 2 * 60
        assert r['win_rate'] == 2.0 - r['rank_mean']  # two teams: a game is won exactly when we rank first
        assert r['score_ratio_median'] == pytest.approx(r['score_ratio_mean'])  # the median of 2 games: their mean
    assert [r['collector_envstep'] for r in reports] == [0, 512, 1024]
    assert reports[-1] == report
    learner_log = read_jsonl(exp_dir / 'learner.jsonl')
    # every collected env step reached the learner: 4 rollouts of exactly n_sample steps
    assert [r['envstep'] for r in learner_log] == [256, 512, 768, 1024]
    # 2 epochs x 256 / 128 minibatches per iteration
    assert learner_log[-1]['train_iter'] == 4 * 2 * 2
    for key in ('policy_loss', 'value_loss', 'entropy', 'approx_kl', 'clipfrac', 'explained_variance', 'cur_lr',
                'grad_norm'):
        assert all(key in r for r in learner_log)
    ckpt = load_checkpoint(str(exp_dir / 'ckpt' / 'iteration_16.pth.tar'))
    assert ckpt['train_iter'] == 16 and ckpt['envstep'] == 1024
    assert {'model', 'optimizer', 'value_norm', 'config'} <= set(ckpt)
    assert ckpt['value_norm']['count'] == 4 * 256 * 2  # a return per player of every env step, saved
    # ckpt_best: the evaluation with the most wins, ties broken by the median score ratio (the first of equals)
    best = max(reports, key=selection_key)
    assert load_checkpoint(str(exp_dir / 'ckpt' / 'ckpt_best.pth.tar'))['train_iter'] == best['train_iter']
    assert not [f for f in os.listdir(exp_dir / 'ckpt') if f.startswith('.tmp')]
    probe = exp_dir / 'probe.txt'  # a checkpoint gets the mode of any new file, not the temporary file's 0600
    probe.write_text('')
    assert os.stat(exp_dir / 'ckpt' / 'iteration_16.pth.tar').st_mode == os.stat(probe).st_mode


def test_eval_of_the_checkpoint(trained, monkeypatch):
    from ppo_gobigger import evaluate
    from ppo_gobigger.pipeline.play.evaluator import Evaluator
    exp_dir, _ = trained
    threads_seen, real_eval = [], Evaluator.eval
    monkeypatch.setattr(Evaluator, 'eval', lambda self, *a: threads_seen.append(torch.get_num_threads()) or
                        real_eval(self, *a))  # the real evaluation, the acting threads noted
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        report = evaluate(str(exp_dir / 'ckpt' / 'iteration_16.pth.tar'), episodes=2)
        assert threads_seen == [1] and torch.get_num_threads() == 2  # policy.torch_threads, then given back
    finally:
        torch.set_num_threads(before)
    assert report['episode_count'] == 2 and report['train_iter'] == 16
    # each game's outcome, by game seed: the evaluation seed's held-out (odd) games of the evaluator envs
    games = report['games']
    assert [g['game_seed'] for g in games] == sorted(g['game_seed'] for g in games) and len(games) == 2
    assert all(g['game_seed'] % 2 == 1 for g in games)
    assert report['win_rate'] == np.mean([g['win'] for g in games])
    assert report['score_ratio_mean'] == pytest.approx(np.mean([g['score_ratio'] for g in games]))
    # the same held-out games and greedy actions: the same outcome as the training run's last evaluation
    last = read_jsonl(exp_dir / 'evaluator.jsonl')[-1]
    assert report['reward_mean'] == pytest.approx(last['reward_mean'])


def test_exported_weights_replay_the_same_games_and_hold_nothing_else(trained, tmp_path):
    """A published agent (export_weights) is the model and the config only, a third of the checkpoint's size, and
    replays the held-out games exactly as the checkpoint it came from; it cannot be resumed from."""
    from ppo_gobigger import evaluate
    from ppo_gobigger.pipeline.learn.checkpoint import export_weights
    exp_dir, _ = trained
    full = str(exp_dir / 'ckpt' / 'iteration_16.pth.tar')
    published = str(tmp_path / 'agent.pth.tar')
    export_weights(full, published)
    payload = load_checkpoint(published)
    assert set(payload) == {'format', 'train_iter', 'envstep', 'config', 'model'}
    assert os.path.getsize(published) < os.path.getsize(full) / 2
    assert evaluate(published, episodes=2)['reward_mean'] == pytest.approx(evaluate(full, episodes=2)['reward_mean'])


def test_resume_continues_the_counters(trained, tmp_path):
    from ppo_gobigger import train
    exp_dir, _ = trained
    main_config, create_config = small_config(tmp_path, 'max_env_step=1536')
    train(main_config, create_config, seed=0, resume=str(exp_dir / 'ckpt' / 'iteration_16.pth.tar'))
    learner_log = read_jsonl(tmp_path / 'learner.jsonl')
    assert [r['envstep'] for r in learner_log] == [1280, 1536]
    assert learner_log[-1]['train_iter'] == 16 + 2 * 2 * 2
    # the checkpoint was written at the evaluation of envstep 1024: the resumed run does not play it again
    evaluations = read_jsonl(tmp_path / 'evaluator.jsonl')
    assert [e['collector_envstep'] for e in evaluations] == [1536]
    assert evaluations[0]['train_iter'] == 16 + 2 * 2 * 2


def test_load_path_starts_a_new_run_from_published_weights_on_another_preset(trained, tmp_path):
    """policy.load_path: a new run (counters, optimizer and value normalisation fresh) starts from the weights of any
    checkpoint, a published weights-only one of another preset included; weights of another model are refused."""
    from ppo_gobigger import train
    from ppo_gobigger.pipeline.learn.checkpoint import export_weights
    exp_dir, _ = trained
    published = str(tmp_path / 'agent.pth.tar')
    export_weights(str(exp_dir / 'ckpt' / 'iteration_16.pth.tar'), published)
    main_config, create_config = small_config(tmp_path / 'ffa', 'env.preset="st_t3p2"', f'policy.load_path={published!r}',
                                              'max_env_step=256')
    train(main_config, create_config, seed=0, progress=False)
    first = load_checkpoint(str(tmp_path / 'ffa' / 'ckpt' / 'iteration_0.pth.tar'))  # written at the first evaluation
    assert first['train_iter'] == 0 and first['envstep'] == 0 and first['config']['env']['preset'] == 'st_t3p2'
    source = load_checkpoint(published)['model']
    assert all(torch.equal(first['model'][k], w) for k, w in source.items())
    assert first['optimizer']['state'] == {} and first['value_norm']['count'] == 0
    assert [r['envstep'] for r in read_jsonl(tmp_path / 'ffa' / 'learner.jsonl')] == [256]

    wider, _ = small_config(tmp_path / 'wide', 'policy.model.hidden_size=64', f'policy.load_path={published!r}')
    with pytest.raises(CheckpointError, match='does not fit the model'):
        train(wider, create_config, progress=False)
    assert not os.path.exists(tmp_path / 'wide' / 'ckpt')  # refused before anything was written


def _run_entry(*args):
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def _run_entries(*commands):
    """Run each entry command (a list of arguments) at the same time; their CompletedProcess-like results in order."""
    procs = [subprocess.Popen([sys.executable, *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for args in commands]
    results = []
    for proc, args in zip(procs, commands):
        stdout, stderr = proc.communicate(timeout=300)
        results.append(subprocess.CompletedProcess(args, proc.returncode, stdout, stderr))
    return results


def test_eval_entry_prints_the_report_and_rejects_bad_checkpoints(trained, tmp_path):
    exp_dir, _ = trained
    good = exp_dir / 'ckpt' / 'ckpt_best.pth.tar'
    truncated = tmp_path / 'truncated.pth.tar'
    truncated.write_bytes(good.read_bytes()[:5000])
    out, missing, cut, mismatched = _run_entries(  # four processes at once: each spends most of its time importing
        ['entry/eval_gobigger.py', '--ckpt', str(good), '--episodes', '2'],
        ['entry/eval_gobigger.py', '--ckpt', str(tmp_path / 'nope.pth.tar')],
        ['entry/eval_gobigger.py', '--ckpt', str(truncated)],
        ['entry/eval_gobigger.py', '--ckpt', str(good), '--episodes', '1', '--set', 'policy.model.hidden_size=48'])
    assert out.returncode == 0, out.stderr
    assert 'win_rate' in out.stdout and 'score_ratio_mean' in out.stdout and 'score_ratio_median' in out.stdout
    assert missing.returncode != 0 and 'not found' in missing.stderr
    assert cut.returncode != 0 and 'truncated' in cut.stderr
    assert mismatched.returncode != 0 and 'mismatched shapes' in mismatched.stderr

    foreign = tmp_path / 'foreign.pth.tar'
    torch.save({'state_dict': {}}, foreign)
    with pytest.raises(CheckpointError, match='not a ppo_gobigger checkpoint'):
        load_checkpoint(str(foreign))


def test_max_train_iter_stops_at_the_first_iteration_that_reaches_it(tmp_path):
    """max_train_iter counts gradient updates (4 an iteration here: 2 epochs of 2 minibatches): the run stops after
    the iteration that reaches it, whatever env steps are left."""
    from ppo_gobigger import train
    main_config, create_config = small_config(tmp_path / 'run', 'max_env_step=100000',
                                              'policy.eval.evaluator.eval_freq=100000', 'env.manager.type=base')
    train(main_config, create_config, seed=0, max_train_iter=6, progress=False)
    assert [(r['train_iter'], r['envstep']) for r in read_jsonl(tmp_path / 'run' / 'learner.jsonl')] == \
        [(4, 256), (8, 512)]


def test_train_entry_rejects_a_bad_key_before_starting(tmp_path):
    out = _run_entry('entry/train_gobigger.py', '--exp-name', str(tmp_path / 'x'), '--set', 'policy.learn.lr=0.1')
    assert out.returncode != 0
    assert "unknown config key 'policy.learn.lr'" in out.stderr and 'learning_rate' in out.stderr
    assert not (tmp_path / 'x').exists()


def test_training_writes_what_a_user_looks_at(trained):
    """The monitor's files from a real run: the CSV holds the evaluator's reports, the curve is a PNG, TensorBoard
    has the three groups against env steps."""
    import csv

    import cv2
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    exp_dir, _ = trained
    with open(exp_dir / 'evaluator.csv', newline='') as f:
        rows = list(csv.DictReader(f))
    reports = read_jsonl(exp_dir / 'evaluator.jsonl')
    assert [tuple(r) for r in rows] == [REPORT_FIELDS] * len(reports)
    assert [float(r['reward_mean']) for r in rows] == pytest.approx([r['reward_mean'] for r in reports])
    assert cv2.imread(str(exp_dir / 'learning_curve.png')).shape == (750, 700, 3)
    events = EventAccumulator(str(exp_dir / 'tensorboard'))
    events.Reload()
    tags = events.Tags()['scalars']
    assert {'charts/SPS', 'charts/episode_return', 'losses/policy_loss', 'losses/approx_kl', 'eval/win_rate'} <= set(tags)
    assert [e.step for e in events.Scalars('losses/policy_loss')] == [256, 512, 768, 1024]
    assert [e.step for e in events.Scalars('eval/reward_mean')] == [0, 512, 1024]


def test_torch_threads_for_learning_take_every_core_then_give_them_back(monkeypatch):
    """Learning runs on every core of the process's share (the env processes wait), or
    on policy.learn.torch_threads when set; the trainer's own thread count comes back afterwards."""
    from ppo_gobigger.pipeline import threads
    monkeypatch.setattr(threads, 'cores_per_process', lambda: 3)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threads.torch_threads(None):
            assert torch.get_num_threads() == 3
        assert torch.get_num_threads() == 1
        with threads.torch_threads(2):
            assert torch.get_num_threads() == 2
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize('manager_type', ['base', 'subprocess', 'async_subprocess'])
def test_evaluator_plays_under_every_manager_type(tmp_path, manager_type):
    """The evaluator's envs run lock-step whatever env.manager.type the run uses (async_subprocess becomes
    subprocess there), and every game of the evaluation is played."""
    from ppo_gobigger.pipeline.build import build_policy
    from ppo_gobigger.pipeline.play.env_manager import build_env_managers, close_env_manager
    from ppo_gobigger.pipeline.play.evaluator import Evaluator
    cfg, create_cfg = compile_config(*small_config(tmp_path, f'env.manager.type={manager_type!r}',
                                                   'env.custom_cfg.frame_limit=40'))
    policy, _ = build_policy(cfg, create_cfg, enable_field=['eval'])
    _, evaluator_env = build_env_managers(cfg, create_cfg, collect=False)
    try:
        evaluator_env.launch()
        report = Evaluator(evaluator_env, policy.eval_mode, 2, seed=0, progress=False).eval()
    finally:
        close_env_manager(evaluator_env)
    assert report['episode_count'] == 2 and report['envstep_count'] == 2 * 20


def test_ckpt_best_follows_the_win_rate_then_the_median_score_ratio(tmp_path):
    """Model selection on hand-made reports: more wins beat a higher reward_mean, the median score ratio breaks a
    tie, and an equal report is no new best (the first of equals stays)."""
    from test_ppo_unit import make_policy
    from ppo_gobigger.pipeline.learn.learner import Learner
    policy = make_policy()
    learner = Learner(policy.learn_mode, policy._learn_model, str(tmp_path), {'policy': {}})

    def report(win_rate, score_ratio_median, reward_mean):
        return dict(win_rate=win_rate, score_ratio_median=score_ratio_median, reward_mean=reward_mean)

    verdicts = [learner.save_if_best(r, envstep, {}) for envstep, r in enumerate([
        report(0.5, 1.0, -5.0),  # the first evaluation is the best so far
        report(0.25, 9.0, 50.0),  # fewer wins: a higher reward_mean and score ratio do not count
        report(0.5, 1.5, -9.0),  # as many wins, a higher median score ratio
        report(0.5, 1.5, 0.0),  # equal on both: not a new best
        report(0.75, 0.5, -20.0),  # more wins
    ])]
    assert verdicts == [True, False, True, False, True]
    best = load_checkpoint(str(tmp_path / 'ckpt' / 'ckpt_best.pth.tar'))
    assert best['envstep'] == 4 and best['best_eval'] == [0.75, 0.5]
