"""End to end on small settings: real games, real DI-engine managers, real PPO updates, checkpoints and reports."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from ppo_gobigger.cli import BOTS_CONFIG  # the default's settings against the bots (its league: test_league.py)
from ppo_gobigger.config import ConfigError, apply_overrides, compile_config, load_config_file
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
        assert 0.0 <= r['win_rate'] <= 1.0 and 1.0 <= r['rank_mean'] <= 2.0
        assert r['score_ratio_median'] > 0.0
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
    assert ckpt['value_norm']['count'] > 0  # the statistics were updated and saved
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
    assert cv2.imread(str(exp_dir / 'learning_curve.png')) is not None
    events = EventAccumulator(str(exp_dir / 'tensorboard'))
    events.Reload()
    tags = events.Tags()['scalars']
    assert {'charts/SPS', 'charts/episode_return', 'losses/policy_loss', 'losses/approx_kl', 'eval/win_rate'} <= set(tags)
    assert [e.step for e in events.Scalars('losses/policy_loss')] == [256, 512, 768, 1024]
    assert [e.step for e in events.Scalars('eval/reward_mean')] == [0, 512, 1024]


def test_kickstart_imitates_the_bots_then_ppo_goes_on(tmp_path):
    """pretrain.env_steps > 0: whole demonstration games of level-2 bots are played and imitated before PPO; their
    env steps count; the imitation must beat chance (1/18) on its own demonstrations; with imitation_weight the
    PPO updates carry the imitation term."""
    from ppo_gobigger.pipeline.serial import train
    main_config, create_config = small_config(tmp_path / 'kick', 'pretrain.env_steps=100', 'pretrain.epochs=8',
                                              'max_env_step=400', 'policy.eval.evaluator.eval_freq=10000',
                                              'policy.learn.imitation_weight=0.5',
                                              # the beat-bots config's head; the default's directional head
                                              # imitates more slowly (accuracy 0.14 after 32 epochs here)
                                              'policy.model.actor_head="discrete"')
    train(main_config, create_config, progress=False)
    log = read_jsonl(tmp_path / 'kick' / 'learner.jsonl')
    kick = log[0]
    assert kick['kickstart'] and kick['env_steps'] == 120  # 2 envs x one whole 60-step game
    assert kick['imitation_accuracy'] > 2 / 18
    assert [r['envstep'] for r in log[1:]] == [376, 632]  # PPO iterations of 256 steps on top of the 120
    assert all(0 < r['imitation_loss'] < 2 * kick['imitation_loss'] for r in log[1:])  # the demonstrations' term
    reports = read_jsonl(tmp_path / 'kick' / 'evaluator.jsonl')
    assert [r['collector_envstep'] for r in reports] == [120, 632]
    kickstart = load_checkpoint(tmp_path / 'kick' / 'ckpt' / 'kickstart.pth.tar')  # before any PPO update
    assert (kickstart['train_iter'], kickstart['envstep']) == (0, 120)
    final = load_checkpoint(tmp_path / 'kick' / 'ckpt' / f'iteration_{log[-1]["train_iter"]}.pth.tar')
    assert any(not torch.equal(w, final['model'][k]) for k, w in kickstart['model'].items())


def test_kickstart_kl_distils_the_frozen_kickstart_and_keeps_it_across_resume(tmp_path, trained):
    """policy.learn.kickstart_kl: every PPO update adds KL(kickstart || policy) on the rollout's states at a constant
    weight; the kickstart's weights ride in every checkpoint unchanged, a resumed run distils the same teacher, and a
    checkpoint that cannot name one (a run without a kickstart) is refused."""
    from ppo_gobigger.pipeline.serial import train
    settings = ['pretrain.env_steps=100', 'pretrain.epochs=2', 'policy.eval.evaluator.eval_freq=10000',
                'policy.model.actor_head="discrete"', 'policy.learn.learning_rate=1e-2',
                'policy.learn.kickstart_kl=2.0']
    main_config, create_config = small_config(tmp_path / 'kl', *settings, 'max_env_step=632')
    train(main_config, create_config, progress=False)
    log = read_jsonl(tmp_path / 'kl' / 'learner.jsonl')[1:]  # the PPO iterations, after the kickstart's line
    assert [r['envstep'] for r in log] == [376, 632]
    assert [r['kickstart_kl_weight'] for r in log] == [2.0, 2.0]
    assert log[0]['kickstart_kl'] > 0  # the policy moved away from its teacher within the first iteration
    kickstart = load_checkpoint(tmp_path / 'kl' / 'ckpt' / 'kickstart.pth.tar')
    last = load_checkpoint(tmp_path / 'kl' / 'ckpt' / f'iteration_{log[-1]["train_iter"]}.pth.tar')
    for name, w in kickstart['model'].items():
        assert torch.equal(kickstart['teacher'][name], w) and torch.equal(last['teacher'][name], w), name
    assert any(not torch.equal(w, last['model'][k]) for k, w in kickstart['model'].items())

    # resumed from a checkpoint after PPO: the same teacher goes on
    resumed, _ = small_config(tmp_path / 'kl2', *settings, 'max_env_step=888')
    train(resumed, create_config, resume=str(tmp_path / 'kl' / 'ckpt' / f'iteration_{log[-1]["train_iter"]}.pth.tar'),
          progress=False)
    log2 = read_jsonl(tmp_path / 'kl2' / 'learner.jsonl')
    assert [r['envstep'] for r in log2] == [888] and log2[0]['kickstart_kl_weight'] == 2.0
    again = load_checkpoint(tmp_path / 'kl2' / 'ckpt' / f'iteration_{log2[-1]["train_iter"]}.pth.tar')
    assert all(torch.equal(again['teacher'][k], w) for k, w in kickstart['model'].items())

    # a PPO checkpoint of a run without a kickstart has no teacher to distil
    exp_dir, _ = trained
    scratch, _ = small_config(tmp_path / 'kl3', *[s for s in settings if 'actor_head' not in s], 'max_env_step=2048')
    with pytest.raises(CheckpointError, match='kickstart_kl=2.0 needs the kickstart'):
        train(scratch, create_config, resume=str(exp_dir / 'ckpt' / 'iteration_16.pth.tar'), progress=False)


def test_load_learn_state_carries_the_optimizer_and_value_normalisation_over(trained, tmp_path):
    """policy.load_learn_state: a new run from a full checkpoint starts with its Adam moments and value-norm
    statistics (counters fresh); published weights hold neither and are refused before anything is written."""
    from ppo_gobigger import train
    from ppo_gobigger.pipeline.learn.checkpoint import export_weights
    exp_dir, _ = trained
    full = str(exp_dir / 'ckpt' / 'iteration_16.pth.tar')
    source = load_checkpoint(full)
    main_config, create_config = small_config(tmp_path / 'on', f'policy.load_path={full!r}',
                                              'policy.load_learn_state=True', 'max_env_step=256')
    train(main_config, create_config, seed=0, progress=False)
    first = load_checkpoint(str(tmp_path / 'on' / 'ckpt' / 'iteration_0.pth.tar'))  # before any update
    assert first['train_iter'] == 0 and first['envstep'] == 0
    assert all(torch.equal(first['value_norm'][k], v) for k, v in source['value_norm'].items())
    moments = lambda ckpt: [s['exp_avg_sq'] for _, s in sorted(ckpt['optimizer']['state'].items())]  # noqa: E731
    assert len(moments(first)) == len(moments(source)) > 0
    assert all(torch.equal(a, b) for a, b in zip(moments(first), moments(source)))

    published = str(tmp_path / 'agent.pth.tar')
    export_weights(full, published)
    main_config, create_config = small_config(tmp_path / 'weights', f'policy.load_path={published!r}',
                                              'policy.load_learn_state=True')
    with pytest.raises(CheckpointError, match='holds weights only'):
        train(main_config, create_config, progress=False)
    assert not os.path.exists(tmp_path / 'weights')
    main_config, create_config = small_config(tmp_path / 'none', 'policy.load_learn_state=True')
    with pytest.raises(ConfigError, match='policy.load_path, which is not set'):
        train(main_config, create_config, progress=False)


def test_kickstart_kl_distils_the_weights_of_load_path_when_there_is_no_kickstart(trained, tmp_path):
    """policy.load_path with policy.learn.kickstart_kl and no kickstart: the loaded weights are the frozen teacher
    (in every checkpoint, unchanged) and every PPO update pays the KL to them. With lr_anneal each iteration runs at
    the share of max_env_step left before its rollout: 2/2, then 1/2 (the last iteration trains too)."""
    from ppo_gobigger import train
    from ppo_gobigger.pipeline.learn.checkpoint import export_weights
    exp_dir, _ = trained
    published = str(tmp_path / 'agent.pth.tar')
    export_weights(str(exp_dir / 'ckpt' / 'iteration_16.pth.tar'), published)
    main_config, create_config = small_config(tmp_path / 'distil', f'policy.load_path={published!r}',
                                              'policy.learn.kickstart_kl=1.0', 'policy.learn.learning_rate=1e-2',
                                              'policy.learn.lr_anneal=True', 'max_env_step=512')
    train(main_config, create_config, seed=0, progress=False)
    log = read_jsonl(tmp_path / 'distil' / 'learner.jsonl')
    assert [r['envstep'] for r in log] == [256, 512] and all(r['kickstart_kl_weight'] == 1.0 for r in log)
    assert [r['cur_lr'] for r in log] == pytest.approx([1e-2, 5e-3]) and log[-1]['update_count'] == 4
    assert log[0]['kickstart_kl'] > 0  # measured against the loaded weights, which PPO moved away from
    source = load_checkpoint(published)['model']
    last = load_checkpoint(str(tmp_path / 'distil' / 'ckpt' / f'iteration_{log[-1]["train_iter"]}.pth.tar'))
    assert all(torch.equal(last['teacher'][k], w) for k, w in source.items())
    assert any(not torch.equal(last['model'][k], w) for k, w in source.items())


def test_demonstration_games_are_written_end_to_end_into_arrays_allocated_once():
    """The kickstart keeps each finished game in place in arrays sized once for the run (pretrain._DemoStore): games
    land in the order they finish, the returned views are the same memory, and a game that does not fit is an
    error, not a silent reallocation."""
    from ppo_gobigger.pipeline.learn.pretrain import _DemoStore

    def game(first, T):
        steps = range(first, first + T)
        return dict(obs=[{'clone': np.full((2, 3), t, np.float16), 'mask': np.array([t % 2 == 0] * 2)} for t in steps],
                    action=[np.array([t, t + 1]) for t in steps], reward=[np.full(2, t, np.float32) for t in steps])

    store = _DemoStore(capacity=7)
    store.add(game(0, 3))
    store.add(game(3, 4))
    assert store.size == 7 and store.lengths == [3, 4]
    assert store.obs['clone'].dtype == np.float16 and store.obs['clone'].shape == (7, 2, 3)
    np.testing.assert_array_equal(store.obs['clone'][:, 0, 0], np.arange(7))
    np.testing.assert_array_equal(store.obs['mask'][:, 1], np.arange(7) % 2 == 0)
    np.testing.assert_array_equal(store.action[:, 1], np.arange(1, 8))
    assert torch.from_numpy(store.reward[:7]).data_ptr() == store.reward.ctypes.data  # no copy
    with pytest.raises(RuntimeError, match='does not fit: 7 of 7'):
        store.add(game(7, 1))


def test_demonstrations_stop_at_the_step_that_reaches_the_budget(tmp_path):
    """Games of every env end together (the same length): once the step that ends them reaches pretrain.env_steps,
    none starts another, whatever the order in which the envs' ends are read."""
    from ppo_gobigger.pipeline.learn.pretrain import collect_demonstrations
    cfg, create = compile_config(*small_config(tmp_path, 'env.custom_cfg.frame_limit=40', 'env.manager.type="base"',
                                               'pretrain.env_steps=40'))
    demos = collect_demonstrations(cfg, create, progress=False)  # 2 envs x one 20-step game
    assert demos['env_steps'] == 40 and len(demos['action']) == 40


def test_torch_threads_for_learning_take_every_core_then_give_them_back(monkeypatch):
    """Learning and the kickstart's imitation run on every core of the process's share (the env processes wait), or
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


def test_target_kl_stops_an_iteration_once_the_policy_has_moved_that_far(tmp_path):
    """policy.learn.target_kl: the updates of an iteration stop at the first minibatch whose approx_kl from the
    rollout's policy exceeds it; the first minibatch of each iteration (KL 0: the rollout's own policy) always steps.
    Without it an iteration makes every update (2 epochs x 2 minibatches here)."""
    from ppo_gobigger.pipeline.serial import train
    main_config, create_config = small_config(tmp_path / 'kl', 'policy.learn.target_kl=1e-4',
                                              'policy.learn.learning_rate=1e-2', 'max_env_step=512')
    train(main_config, create_config, progress=False)
    log = read_jsonl(tmp_path / 'kl' / 'learner.jsonl')
    assert len(log) == 2
    for record in log:
        assert record['kl_stopped'] == 1.0 and 1 <= record['update_count'] < 4
    assert log[-1]['train_iter'] == sum(r['update_count'] for r in log)


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
