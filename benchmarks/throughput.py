"""Raw rate against training rate, in one run: `python benchmarks/throughput.py [--config PATH] [--set KEY=VALUE ...]`.

Raw rate: env_num processes (one per env, as the subprocess manager runs them), each stepping the config's GoBigger
game with the config's opponents, an env step being env.action_repeat GoBigger steps as in the env; no features, no
model, no learning. Our team plays in two ways, each its own raw rate: uniformly random actions (given on an env
step's first GoBigger step, as ours are), and the opponents' bot level (bots act on every GoBigger step). Random play
keeps few clones per player, trained and bot play many, and the game's cost grows with the clones: the report gives
the ratio to both. Worker 0 also times the features of our team (team_features) on every FEATURE_EVERY-th state,
outside its rate.

Training rate: the training loop of pipeline/serial.py without its evaluations (RolloutCollector + Learner over
the config's collector env manager): env steps / (collection + learning time). Inside it the policy forward
(inference), each env process's step (timed in the env) and the manager's calls are timed; IPC/manager overhead =
the manager's calls minus its slowest env's step (base manager: minus the sum of its envs' steps); with the envs
stepped in two halves, one half's steps overlap the other half's forward pass: only the wait for the envs is given.
With --eval-episodes N, one evaluation of N games (the evaluator of `gobigger-eval`, the config's evaluator envs,
against its bots) is timed too and compared with the raw rate of as many processes with bots on every side.
Prints a breakdown and the ratios training rate / raw rate last; writes benchmarks/results/throughput.json.
The machine is shared and noisy: only the ratio, taken in the same run, is worth comparing between runs.
"""
import argparse
import copy
import datetime
import os
import platform
import tempfile
import time
from typing import Dict, List

from ppo_gobigger.quiet import passive_openmp_waits, silence_third_party_noise

silence_third_party_noise()  # first: the imports below would print other packages' import-time notices
passive_openmp_waits()  # before torch is imported: see quiet.py

import torch
from ding.utils import ENV_REGISTRY

from ppo_gobigger.cli import BOTS_CONFIG
from ppo_gobigger.config import apply_overrides, compile_config, load_config_file
from ppo_gobigger.envs.gobigger_env import GoBiggerEnv
from ppo_gobigger.files import write_json
from ppo_gobigger.pipeline.build import build_policy, set_global_seed
from ppo_gobigger.pipeline.learn.learner import Learner
from ppo_gobigger.pipeline.play.collector import RolloutCollector
from ppo_gobigger.pipeline.play.env_manager import build_env_managers, close_env_manager, env_groups
from ppo_gobigger.pipeline.play.evaluator import Evaluator
from throughput_raw import measure_raw

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'results', 'throughput.json')
TABLE_RESULTS = os.path.join(os.path.dirname(RESULTS), 'throughput_table.json')
TABLE_MANAGERS = ('base', 'subprocess', 'async_subprocess')
TABLE_ENV_NUMS = (1, 2, 4, 8)


# ----------------------------------------------------------------------------------------------- training rate
@ENV_REGISTRY.register('gobigger_ppo_timed')
class TimedGoBiggerEnv(GoBiggerEnv):
    """GoBiggerEnv that reports the wall time of its own step in info['env_step_s'] (measured in the env)."""

    def step(self, action):
        start = time.perf_counter()
        timestep = super().step(action)
        timestep.info['env_step_s'] = time.perf_counter() - start
        return timestep


class StepTimer:
    """Wraps a manager's step (and the policy's forward): wall time of each call, env-side time, steps."""

    def __init__(self, parallel_envs: bool) -> None:
        self.parallel_envs = parallel_envs
        self.manager_s = self.env_critical_s = self.env_sum_s = self.inference_s = 0.0
        self.manager_calls = self.inference_calls = self.env_steps = 0

    def wrap_manager(self, manager) -> None:
        """Times ``send`` + ``receive`` where the manager has them (the collector's calls), else ``step``."""
        def timed(call):
            def timed_call(*args):
                start = time.perf_counter()
                timesteps = call(*args)  # send returns None
                self.manager_s += time.perf_counter() - start
                env_s = [ts.info.get('env_step_s', 0.0) for ts in (timesteps or {}).values()]
                self.env_sum_s += sum(env_s)
                self.env_critical_s += (max(env_s) if self.parallel_envs else sum(env_s)) if env_s else 0.0
                self.env_steps += len(env_s)
                self.manager_calls += timesteps is not None
                return timesteps
            return timed_call

        for name in (('send', 'receive') if hasattr(manager, 'receive') else ('step', )):
            setattr(manager, name, timed(getattr(manager, name)))

    def wrap_policy(self, collect_mode):
        """A copy of the policy's collect_mode (a namedtuple) whose forward is timed."""
        forward = collect_mode.forward

        def timed_forward(*args, **kwargs):
            start = time.perf_counter()
            output = forward(*args, **kwargs)
            self.inference_s += time.perf_counter() - start
            self.inference_calls += 1
            return output

        return collect_mode._replace(forward=timed_forward)


def measure_training(cfg, create_cfg, iterations: int, eval_episodes: int) -> Dict:
    """iterations of collect + learn, as serial.train runs them, with no evaluation in the timed part."""
    create_cfg = copy.deepcopy(create_cfg)
    create_cfg.env.type = 'gobigger_ppo_timed'
    torch.set_num_threads(cfg.policy.torch_threads)
    set_global_seed(cfg.seed)
    collector_env, evaluator_env = build_env_managers(cfg, create_cfg, evaluate=eval_episodes > 0)
    policy, model = build_policy(cfg, create_cfg)
    timer = StepTimer(parallel_envs=cfg.env.manager.type != 'base')
    collect_s, learn_s, steps, evaluation = [], [], 0, None
    try:
        with tempfile.TemporaryDirectory() as exp_dir:
            learner = Learner(policy.learn_mode, model, exp_dir, cfg)
            collector_env.seed(cfg.seed, dynamic_seed=True)
            collector_env.launch()
            timer.wrap_manager(collector_env)
            collect_mode = timer.wrap_policy(policy.collect_mode)
            collector = RolloutCollector(collector_env, collect_mode, cfg.policy.collect.n_sample)
            halves = len(env_groups(collector_env)) > 1
            for _ in range(iterations):
                rollout = collector.collect()
                start = time.perf_counter()
                learner.train(rollout, collector.envstep, collector.info())
                learn_s.append(time.perf_counter() - start)
                collect_s.append(collector.last_collect_time)
                steps += int(rollout['valid'].sum())
            if eval_episodes:
                evaluation = time_evaluation(cfg, evaluator_env, policy, eval_episodes, exp_dir)
    finally:
        close_env_manager(collector_env)
        close_env_manager(evaluator_env)
    collect_total, learn_total = sum(collect_s), sum(learn_s)
    split = {} if halves else dict(  # in halves, env steps overlap the other half's forward: no critical path
        env_step_critical_s=timer.env_critical_s, ipc_manager_s=timer.manager_s - timer.env_critical_s)
    return dict(  # env_steps_returned: every step the manager handed back while collecting
        env_steps=steps, env_steps_returned=timer.env_steps, reached_learner=steps / max(timer.env_steps, 1),
        env_steps_per_s=steps / (collect_total + learn_total), collect_s=collect_s, learn_s=learn_s,
        inference_s=timer.inference_s, inference_calls=timer.inference_calls, manager_step_s=timer.manager_s,
        manager_calls=timer.manager_calls, env_step_ms=1e3 * timer.env_sum_s / max(timer.env_steps, 1),
        collector_other_s=collect_total - timer.manager_s - timer.inference_s, evaluation=evaluation, halves=halves,
        **split)


def time_evaluation(cfg, evaluator_env, policy, episodes: int, exp_dir: str) -> Dict:
    """{seconds, env_steps, env_steps_per_s, env_num} of one evaluation of ``episodes`` games (not part of the
    training rate)."""
    evaluator_env.launch()
    evaluator = Evaluator(evaluator_env, policy.eval_mode, episodes, cfg.seed, os.path.join(exp_dir, 'eval.jsonl'))
    start = time.perf_counter()
    report = evaluator.eval(0, 0)
    seconds = time.perf_counter() - start
    return dict(seconds=seconds, env_steps=report['envstep_count'], env_steps_per_s=report['envstep_count'] / seconds,
                env_num=evaluator_env.env_num)


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')


def machine() -> Dict:
    """What the figures were measured on, and how loaded it was at the end."""
    return dict(python=platform.python_version(), torch=torch.__version__, cpus=os.cpu_count(),
                loadavg_at_end=os.getloadavg())


def breakdown_rows(raw: Dict, train: Dict) -> List[tuple]:
    """(component, value, unit, note) rows of the printed table."""
    steps = train['env_steps']
    wall_s = sum(train['collect_s']) + sum(train['learn_s'])
    env_raw_ms = raw['game_step_ms'] + raw['opponents_step_ms']

    def share(seconds: float) -> str:
        return f'{seconds / wall_s:6.1%} of training wall'

    rows = [
        ('game step', raw['game_step_ms'], 'ms/step', f'{raw["game_step_ms"] / env_raw_ms:6.1%} of raw env step'),
        ('bots (opponents)', raw['opponents_step_ms'], 'ms/step',
         f'{raw["opponents_step_ms"] / env_raw_ms:6.1%} of raw env step'),
        ('features (our team)', raw['features_step_ms'], 'ms/step', f'{raw["features_step_ms"] / env_raw_ms:6.1%} '
         'on top of raw env step'),
        ('env step in training', train['env_step_ms'], 'ms/step', 'measured inside the env processes'),
    ]
    parts = ([('waiting for the envs (halves)', train['manager_step_s'])] if train['halves'] else
             [('IPC / manager', train['ipc_manager_s']), ('envs (critical path)', train['env_step_critical_s'])])
    parts += [('inference (forward)', train['inference_s']), ('collector bookkeeping', train['collector_other_s']),
              ('learning', sum(train['learn_s']))]
    rows += [(name, 1e3 * seconds / steps, 'ms/step', share(seconds)) for name, seconds in parts]
    if train['evaluation'] is not None:
        rows.append(('evaluation (one)', train['evaluation']['seconds'], 's', 'excluded from the training rate'))
    else:
        rows.append(('evaluation', float('nan'), '', 'excluded (not timed; --eval-episodes N times one)'))
    return rows


def print_report(settings: Dict, raw: Dict, raw_bots: Dict, train: Dict, ratios: Dict) -> None:
    print(f'\n{settings["preset"]}, {settings["env_num"]} envs, {settings["manager"]} manager, '
          f'{settings["iterations"]} iterations of {settings["n_sample"]} steps, raw {settings["raw_seconds"]:.0f} s')
    print(f'{"component":29} {"value":>9} {"unit":8} note  (game/bots/features: wall ms in one raw process, '
          f'inflated when processes outnumber cores; shares are what to read)')
    for name, value, unit, note in breakdown_rows(raw, train):
        print(f'{name:29} {value:9.3f} {unit:8} {note}')
    print(f'raw rate       {raw["env_steps_per_s"]:8.0f} env steps/s ({settings["env_num"]} processes, game + bots, '
          f'our team random)')
    print(f'raw rate       {raw_bots["env_steps_per_s"]:8.0f} env steps/s ({settings["env_num"]} processes, game + bots, '
          f'our team bots)')
    print(f'training rate  {train["env_steps_per_s"]:8.0f} env steps/s (collection {sum(train["collect_s"]):.1f} s '
          f'+ learning {sum(train["learn_s"]):.1f} s)')
    print(f'env steps that reached the learner: {train["env_steps"]} of {train["env_steps_returned"]} '
          f'({train["reached_learner"]:.2%})')
    evaluation = train['evaluation']
    if evaluation is not None:
        print(f'evaluation     {evaluation["env_steps_per_s"]:8.0f} env steps/s ({evaluation["env_num"]} envs, '
              f'{evaluation["env_steps"]} env steps); raw with bots on every side '
              f'{ratios["eval_raw_env_steps_per_s"]:.0f}: ratio {ratios["evaluation_to_raw_bots"]:.3f}')
    print(f'ratio training / raw (our team bots):   {ratios["training_to_raw_bots"]:.3f}')
    print(f'ratio training / raw (our team random): {ratios["training_to_raw"]:.3f}')


def run_table(main_config, create_config, overrides: List[str], args) -> None:
    """The table of docs/throughput.md: ratio training / raw for each env manager x env count, raw measured once per count."""
    rows = []
    for env_num in TABLE_ENV_NUMS:
        cfg, _ = compile_config(apply_overrides(main_config, overrides + [f'env.collector_env_num={env_num}']),
                                create_config)
        raw = measure_raw(cfg.env, env_num, args.raw_seconds, cfg.seed)
        for manager in TABLE_MANAGERS:
            cell = overrides + [f'env.collector_env_num={env_num}', f'env.manager.type={manager}']
            cfg, create_cfg = compile_config(apply_overrides(main_config, cell), create_config)
            train = measure_training(cfg, create_cfg, args.iterations, 0)
            ratio = train['env_steps_per_s'] / raw['env_steps_per_s']
            rows.append(dict(manager=manager, env_num=env_num, raw_steps_per_s=raw['env_steps_per_s'],
                             training_steps_per_s=train['env_steps_per_s'], ratio=ratio,
                             collect_s=sum(train['collect_s']), learn_s=sum(train['learn_s']),
                             reached_learner=train['reached_learner']))
            print(f'{manager:17} {env_num} envs: raw {raw["env_steps_per_s"]:6.0f}  training '
                  f'{train["env_steps_per_s"]:5.0f} env steps/s  ratio {ratio:.3f}', flush=True)
    result = dict(date=now(), settings=dict(config=os.path.relpath(args.config), overrides=overrides,
                                            iterations=args.iterations, raw_seconds=args.raw_seconds),
                  rows=rows, machine=machine())
    write_json(TABLE_RESULTS, result)
    print(f'wrote {TABLE_RESULTS}\n')
    print('| env manager | ' + ' | '.join(f'{n} env{"s" if n > 1 else ""}' for n in TABLE_ENV_NUMS) + ' |')
    print('|' + ' --- |' * (len(TABLE_ENV_NUMS) + 1))
    for manager in TABLE_MANAGERS:
        cells = [next(r for r in rows if r['manager'] == manager and r['env_num'] == n) for n in TABLE_ENV_NUMS]
        print(f'| {manager} | ' + ' | '.join(f'{c["ratio"]:.2f} ({c["training_steps_per_s"]:.0f}/'
                                             f'{c["raw_steps_per_s"]:.0f})' for c in cells) + ' |')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--config', default=BOTS_CONFIG, help='config file (default: gobigger_ppo_vs_bots_config.py)')
    parser.add_argument('--set', action='append', default=[], metavar='KEY=VALUE', help='override a config key')
    parser.add_argument('--env-num', type=int, default=None, help='collector envs (default: the config\'s)')
    parser.add_argument('--manager', choices=('base', 'subprocess', 'async_subprocess'), default=None,
                        help='env manager of the training run (default: the config\'s)')
    parser.add_argument('--iterations', type=int, default=5, help='PPO iterations of the training run')
    parser.add_argument('--raw-seconds', type=float, default=30.0, help='wall time of each raw env process')
    parser.add_argument('--eval-episodes', type=int, default=0, help='also time one evaluation of N games')
    parser.add_argument('--output', default=RESULTS, help='where the JSON goes')
    parser.add_argument('--table', action='store_true',
                        help=f'measure every env manager x env count {TABLE_ENV_NUMS} instead; writes {TABLE_RESULTS}')
    args = parser.parse_args()

    main_config, create_config = load_config_file(args.config)
    if args.table:
        run_table(main_config, create_config, list(args.set), args)
        return
    overrides = list(args.set)
    if args.env_num is not None:
        overrides.append(f'env.collector_env_num={args.env_num}')
    if args.manager is not None:
        overrides.append(f'env.manager.type={args.manager}')
    cfg, create_cfg = compile_config(apply_overrides(main_config, overrides), create_config)
    env_num = cfg.env.collector_env_num
    settings = dict(config=os.path.relpath(args.config), overrides=overrides, preset=cfg.env.preset,
                    opponent=cfg.env.opponent, bot_level=cfg.env.bot_level, env_num=env_num,
                    manager=cfg.env.manager.type, iterations=args.iterations, n_sample=cfg.policy.collect.n_sample,
                    raw_seconds=args.raw_seconds, eval_episodes=args.eval_episodes)

    raw = measure_raw(cfg.env, env_num, args.raw_seconds, cfg.seed)
    raw_bots = measure_raw(cfg.env, env_num, args.raw_seconds, cfg.seed, our_side='bots')
    train = measure_training(cfg, create_cfg, args.iterations, args.eval_episodes)
    ratios = dict(training_to_raw=train['env_steps_per_s'] / raw['env_steps_per_s'],
                  training_to_raw_bots=train['env_steps_per_s'] / raw_bots['env_steps_per_s'])
    raw_eval = None
    if train['evaluation'] is not None:  # as many processes as the evaluator's envs, bots on every side
        evaluation = train['evaluation']
        raw_eval = (raw_bots if evaluation['env_num'] == env_num else
                    measure_raw(cfg.env, evaluation['env_num'], args.raw_seconds, cfg.seed, our_side='bots'))
        ratios.update(eval_raw_env_steps_per_s=raw_eval['env_steps_per_s'],
                      evaluation_to_raw_bots=evaluation['env_steps_per_s'] / raw_eval['env_steps_per_s'])
    result = dict(date=now(), settings=settings, raw=raw, raw_our_team_bots=raw_bots, raw_evaluation=raw_eval,
                  training=train, ratio_training_to_raw=ratios['training_to_raw'], ratios=ratios, machine=machine())
    write_json(args.output, result)
    print(f'wrote {args.output}')
    print_report(settings, raw, raw_bots, train, ratios)


if __name__ == '__main__':
    main()
