"""Raw rate against training rate, in one run: `python benchmarks/throughput.py [--config PATH] [--set KEY=VALUE ...]
[--eval-episodes N] [--overlap]`; the default config (the league) unless given --config.

Raw rate: env_num processes (one per env, as the subprocess manager runs them), each stepping the config's GoBigger
game with the config's opponents (opponents the trainer plays with policies, 'self' and 'league', are bots of
env.bot_level), an env step being env.action_repeat GoBigger steps as in the env; no features, no model, no learning.
Our team plays in two ways, each its own raw rate: uniformly random actions (given on an env step's first GoBigger
step, as ours are), and bots of env.bot_level (bots act on every GoBigger step): with bots on every team the raw
rate is the game's own. Worker 0 also times the features of our team (team_features) on every FEATURE_EVERY-th
state, outside its rate.

Training rate: the training loop of pipeline/serial.py without its evaluations (RolloutCollector + Learner over
the config's collector env manager; with a league, its pool and the trainer's play of the other teams, as
LocalWorkers assembles them): env steps / (collection + learning time). Inside it the policy forward (inference),
each env process's step (timed in the env) and the manager's calls are timed; with the envs stepped in two halves,
one half's steps overlap the other half's forward pass: only the wait for the envs is given. The CPU time of the
env processes and of the trainer is read between phases (throughput_meters.py): CPU per env step of each part, and
the ceiling that CPU puts on the rate (cores / CPU per env step). --overlap also times iteration k learning in a
thread while iteration k + 1 collects (lag 1), against the serial loop. With --eval-episodes N, one evaluation of
N games (the evaluator of `gobigger-eval`, the config's evaluator envs, against its bots) is timed too and compared
with the raw rate of as many processes with bots on every side. Prints a breakdown and the ratios last; writes
benchmarks/results/throughput.json. The machine is shared and noisy: only the ratio, taken in the same run, is
worth comparing between runs.
"""
import argparse
import copy
import datetime
import os
import platform
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List

from ppo_gobigger.quiet import passive_openmp_waits, silence_third_party_noise

silence_third_party_noise()  # first: the imports below would print other packages' import-time notices
passive_openmp_waits()  # before torch is imported: see quiet.py

import torch

from ppo_gobigger.cli import DEFAULT_CONFIG
from ppo_gobigger.config import apply_overrides, compile_config, load_config_file
from ppo_gobigger.envs.game import team_num
from ppo_gobigger.envs.opponents import POLICY_OPPONENTS
from ppo_gobigger.files import write_json
from ppo_gobigger.pipeline.build import build_model, build_policy, set_global_seed
from ppo_gobigger.pipeline.league.pool import LeaguePool
from ppo_gobigger.pipeline.league.team_play import TeamPlay
from ppo_gobigger.pipeline.learn.learner import Learner
from ppo_gobigger.pipeline.play.collector import RolloutCollector
from ppo_gobigger.pipeline.play.env_manager import build_env_managers, close_env_manager, env_groups
from ppo_gobigger.pipeline.play.evaluator import Evaluator
from throughput_meters import CpuMeter, StepTimer
from throughput_raw import measure_raw

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'results', 'throughput.json')
TABLE_RESULTS = os.path.join(os.path.dirname(RESULTS), 'throughput_table.json')
TABLE_MANAGERS = ('base', 'subprocess', 'async_subprocess')
TABLE_ENV_NUMS = (1, 2, 4, 8)


# ----------------------------------------------------------------------------------------------- training rate
def measure_training(cfg, create_cfg, iterations: int, eval_episodes: int, overlap: bool = False) -> Dict:
    """iterations of collect + learn, as serial.train runs them (the league's pool and its per-team play included),
    with no evaluation in the timed part; the CPU time of each part beside the wall time.

    ``overlap``: iteration k learns in a thread while iteration k + 1 collects, as a lag-1 learner would (timing
    only: the collector's policy shares the learner's weights here); the rate is then the steady state's, env steps
    of collections 2..n over the wall from the end of the first collection to the end of the last."""
    create_cfg = copy.deepcopy(create_cfg)
    create_cfg.env.type = 'gobigger_ppo_timed'
    torch.set_num_threads(cfg.policy.torch_threads)
    set_global_seed(cfg.seed)
    collector_env, evaluator_env = build_env_managers(cfg, create_cfg, evaluate=eval_episodes > 0)
    policy, model = build_policy(cfg, create_cfg)
    timer = StepTimer(parallel_envs=cfg.env.manager.type != 'base')
    cpu = CpuMeter()
    collect_s, learn_s, steps, evaluation = [], [], 0, None
    try:
        with tempfile.TemporaryDirectory() as exp_dir:
            learner = Learner(policy.learn_mode, model, exp_dir, cfg)
            league = None
            if cfg.env.opponent == 'league':
                league = LeaguePool(os.path.join(exp_dir, 'league'), cfg.league, lambda: build_model(cfg), cfg.seed)
            collector_env.seed(cfg.seed, dynamic_seed=True)
            collector_env.launch()
            cpu.find_envs()
            timer.wrap_manager(collector_env)
            collect_mode = timer.wrap_policy(policy.collect_mode)
            envs, teams_per_env = collector_env, 1
            if cfg.env.opponent in POLICY_OPPONENTS:  # as LocalWorkers.start: the trainer plays the other teams
                envs = TeamPlay(collector_env, collect_mode, team_num(cfg.env), league)
                teams_per_env = envs.teams_per_env
            collector = RolloutCollector(envs, collect_mode, cfg.policy.collect.n_sample, teams_per_env)
            halves = len(env_groups(collector_env)) > 1

            def learn(rollout, envstep: int, info: Dict) -> float:
                start = time.perf_counter()
                learner.train(rollout, envstep, info)
                if league is not None:
                    league.on_iteration(model, learner.train_iter, envstep, cfg)
                return time.perf_counter() - start

            pending, collected_at = None, []
            with ThreadPoolExecutor(1) as learn_thread:
                for _ in range(iterations):
                    with cpu.phase('collect'):
                        rollout = collector.collect()
                    collected_at.append(time.perf_counter())
                    collect_s.append(collector.last_collect_time)
                    if overlap:
                        if pending is not None:
                            learn_s.append(pending.result())
                        pending = learn_thread.submit(learn, rollout, collector.envstep, collector.info())
                    else:
                        with cpu.phase('learn'):
                            learn_s.append(learn(rollout, collector.envstep, collector.info()))
                if pending is not None:
                    learn_s.append(pending.result())
            steps = collector.envstep  # game steps (our team's), whatever the teams learnt from
            if eval_episodes:
                evaluation = time_evaluation(cfg, evaluator_env, policy, eval_episodes, exp_dir)
    finally:
        close_env_manager(collector_env)
        close_env_manager(evaluator_env)
    collect_total, learn_total = sum(collect_s), sum(learn_s)
    rate = steps / (collect_total + learn_total)
    if overlap:
        rate = steps * (iterations - 1) / iterations / (collected_at[-1] - collected_at[0])
    split = {} if halves else dict(  # in halves, env steps overlap the other half's forward: no critical path
        env_step_critical_s=timer.env_critical_s, ipc_manager_s=timer.manager_s - timer.env_critical_s)
    learning_cpu = cpu.seconds['main'].get('learn', 0.0)  # with overlap, in the collection's (collector_other)
    cpu_s = dict(envs=cpu.seconds['envs']['collect'] + cpu.seconds['envs'].get('learn', 0.0),
                 inference=timer.inference_cpu_s,
                 collector_other=cpu.seconds['main']['collect'] - timer.inference_cpu_s,
                 learning=learning_cpu)
    return dict(  # env_steps_returned: every team step the manager handed back while collecting
        env_steps=steps, env_steps_returned=timer.env_steps, reached_learner=steps / max(timer.env_steps, 1),
        env_steps_per_s=rate, overlap=overlap, collect_s=collect_s, learn_s=learn_s,
        inference_s=timer.inference_s, inference_calls=timer.inference_calls, manager_step_s=timer.manager_s,
        manager_calls=timer.manager_calls, env_step_ms=1e3 * timer.env_sum_s / max(timer.env_steps, 1),
        collector_other_s=collect_total - timer.manager_s - timer.inference_s, evaluation=evaluation, halves=halves,
        cpu_s=cpu_s, cpu_ms_per_step={k: 1e3 * v / steps for k, v in cpu_s.items()}, **split)


def time_evaluation(cfg, evaluator_env, policy, episodes: int, exp_dir: str) -> Dict:
    """{seconds, env_steps, env_steps_per_s, env_num, cpu_ms_per_step} of one evaluation of ``episodes`` games (not
    part of the training rate); the CPU is the trainer's and every env process's (the collector's sit idle)."""
    evaluator_env.launch()
    evaluator = Evaluator(evaluator_env, policy.eval_mode, episodes, cfg.seed, os.path.join(exp_dir, 'eval.jsonl'))
    cpu = CpuMeter()
    cpu.find_envs()
    start = time.perf_counter()
    with cpu.phase('evaluate'):
        report = evaluator.eval(0, 0)
    seconds = time.perf_counter() - start
    steps = report['envstep_count']
    cpu_ms = {who: 1e3 * cpu.seconds[who]['evaluate'] / steps for who in ('envs', 'main')}
    return dict(seconds=seconds, env_steps=steps, env_steps_per_s=steps / seconds, env_num=evaluator_env.env_num,
                cpu_ms_per_step=cpu_ms)


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')


def machine() -> Dict:
    """What the figures were measured on, and how loaded it was at the end."""
    return dict(python=platform.python_version(), torch=torch.__version__, cpus=os.cpu_count(),
                loadavg_at_end=os.getloadavg())


def breakdown_rows(raw: Dict, raw_bots: Dict, train: Dict) -> List[tuple]:
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
    cpu = train['cpu_ms_per_step']
    rows += [(f'CPU: {name}', cpu[key], 'core-ms', note) for name, key, note in (
        ('env processes', 'envs', f'raw game + bots, bots everywhere: {raw_bots["cpu_ms_per_step"]:.3f}; our '
         f'features: {raw_bots["features_cpu_ms_per_step"]:.3f}'),
        ('inference (forward)', 'inference', ''), ('collector bookkeeping', 'collector_other', 'IPC, league play'),
        ('learning', 'learning', ''))]
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
    for name, value, unit, note in breakdown_rows(raw, raw_bots, train):
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
        cpu = evaluation['cpu_ms_per_step']
        print(f'evaluation CPU per env step: env processes {cpu["envs"]:.3f} + trainer {cpu["main"]:.3f} core-ms '
              f'against the raw {ratios["eval_raw_cpu_ms_per_step"]:.3f}: the cores cap evaluation / raw at '
              f'{ratios["evaluation_to_raw_cpu_ceiling"]:.3f}')
    cores, cpu_ms = ratios['cores'], sum(train['cpu_ms_per_step'].values())
    print(f'CPU per env step {cpu_ms:.3f} core-ms: on {cores} cores the ceiling is {ratios["cpu_ceiling_env_steps_per_s"]:.0f} '
          f'env steps/s, the run reached {ratios["training_to_cpu_ceiling"]:.3f} of it; the raw rate\'s own CPU '
          f'({raw_bots["cpu_ms_per_step"]:.3f} core-ms) gives {ratios["raw_cpu_ceiling_env_steps_per_s"]:.0f}')
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
    parser.add_argument('--config', default=DEFAULT_CONFIG, help='config file (default: gobigger_ppo_config.py)')
    parser.add_argument('--set', action='append', default=[], metavar='KEY=VALUE', help='override a config key')
    parser.add_argument('--env-num', type=int, default=None, help='collector envs (default: the config\'s)')
    parser.add_argument('--manager', choices=('base', 'subprocess', 'async_subprocess'), default=None,
                        help='env manager of the training run (default: the config\'s)')
    parser.add_argument('--iterations', type=int, default=5, help='PPO iterations of the training run')
    parser.add_argument('--raw-seconds', type=float, default=30.0, help='wall time of each raw env process')
    parser.add_argument('--eval-episodes', type=int, default=0, help='also time one evaluation of N games')
    parser.add_argument('--output', default=RESULTS, help='where the JSON goes')
    parser.add_argument('--overlap', action='store_true',
                        help='also time learning beside collection (lag 1, one learner thread) against the serial loop')
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
    # the most env steps/s the cores could give at the CPU each part took per env step, if nothing ever waited
    cores = len(os.sched_getaffinity(0))
    ratios.update(cores=cores, cpu_ceiling_env_steps_per_s=1e3 * cores / sum(train['cpu_ms_per_step'].values()),
                  raw_cpu_ceiling_env_steps_per_s=1e3 * cores / raw_bots['cpu_ms_per_step'])
    ratios['training_to_cpu_ceiling'] = train['env_steps_per_s'] / ratios['cpu_ceiling_env_steps_per_s']
    overlapped = None
    if args.overlap:  # the learner in a thread of one torch thread, beside the collector's own
        cfg_lag, create_lag = compile_config(
            apply_overrides(main_config, overrides + ['policy.learn.torch_threads=1']), create_config)
        overlapped = measure_training(cfg_lag, create_lag, args.iterations, 0, overlap=True)
        ratios['overlap_to_serial'] = overlapped['env_steps_per_s'] / train['env_steps_per_s']
    raw_eval = None
    if train['evaluation'] is not None:  # as many processes as the evaluator's envs, bots on every side
        evaluation = train['evaluation']
        raw_eval = (raw_bots if evaluation['env_num'] == env_num else
                    measure_raw(cfg.env, evaluation['env_num'], args.raw_seconds, cfg.seed, our_side='bots'))
        ratios.update(eval_raw_env_steps_per_s=raw_eval['env_steps_per_s'],
                      evaluation_to_raw_bots=evaluation['env_steps_per_s'] / raw_eval['env_steps_per_s'],
                      eval_raw_cpu_ms_per_step=raw_eval['cpu_ms_per_step'],
                      # both saturating the cores, the rates would stand as the inverse CPU per env step
                      evaluation_to_raw_cpu_ceiling=raw_eval['cpu_ms_per_step'] / sum(evaluation['cpu_ms_per_step'].values()))
    result = dict(date=now(), settings=settings, raw=raw, raw_our_team_bots=raw_bots, raw_evaluation=raw_eval,
                  training=train, training_overlapped=overlapped, ratio_training_to_raw=ratios['training_to_raw'], ratios=ratios, machine=machine())
    write_json(args.output, result)
    print(f'wrote {args.output}')
    print_report(settings, raw, raw_bots, train, ratios)
    if overlapped is not None:
        print(f'learning beside collection (lag 1, one learner thread): {overlapped["env_steps_per_s"]:.0f} env steps/s '
              f'in the steady state, {ratios["overlap_to_serial"]:.3f} of the serial loop\'s')


if __name__ == '__main__':
    main()
