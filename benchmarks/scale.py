"""Local backend against Ray backend on this machine, in one run, and what a Ray iteration moves:
`python benchmarks/scale.py [--config PATH] [--set KEY=VALUE ...] [--iterations N]`.

Both backends run the config's collector envs (the default: 4 in subprocess managers, 4,096 env steps per
iteration) for 1 + N PPO iterations of collect + learn through the trainer's own pieces, with no evaluation:
    local  distributed/local.py LocalWorkers (RolloutCollector over one env manager) + Learner
    ray    distributed/ray_actors.py RayWorkers on a local Ray cluster of this machine's cores
           (distributed.num_workers rollout worker actors, the envs split over them) + the same Learner in the driver
Throughput = env steps / (collection + learning wall time) over the N timed iterations (the first iteration,
which carries the start-up, is left out). The two runs follow each other, so the ratio is what to read.

Per Ray iteration: the weights' size, ray.put in the driver, the slowest worker's fetch + load_state_dict; the
rollouts' size, the driver's fetch + deserialisation of all of them, and their join. From these and the Ray
run's collection rate and learning time, a projection for M worker machines like this one, each collecting
n_sample env steps per iteration, with one driver learning on all of them (see ``project``).

Prints the figures and writes benchmarks/results/scale.json.
"""
import argparse
import datetime
import os
import platform
import statistics
import tempfile
import time
from typing import Dict, List

from ppo_gobigger.quiet import passive_openmp_waits, silence_third_party_noise

silence_third_party_noise()  # first: the imports below would print other packages' import-time notices
passive_openmp_waits()  # before torch is imported: see quiet.py

import torch

from ppo_gobigger.cli import BOTS_CONFIG
from ppo_gobigger.config import apply_overrides, compile_config, load_config_file
from ppo_gobigger.files import write_json
from ppo_gobigger.pipeline.build import build_policy, set_global_seed
from ppo_gobigger.pipeline.distributed.local import LocalWorkers
from ppo_gobigger.pipeline.distributed.torchrun import Rank
from ppo_gobigger.pipeline.learn.learner import Learner
from ppo_gobigger.pipeline.play.collector import split_envs

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'results', 'scale.json')
MACHINES = (4, 16, 64)
LEARNER_SPEEDUPS = (1.0, 10.0)  # the measured CPU learner, and an assumed 10x faster one (a GPU; not measured)
TRANSFER_KEYS = ('weights_bytes', 'weights_put_s', 'weights_get_s', 'rollout_bytes', 'rollout_get_s', 'concat_s',
                 'worker_collect_s')


def run_backend(cfg, create_cfg, backend: str, iterations: int) -> Dict:
    """1 + iterations of collect + learn; per iteration: env steps, collection and learning seconds (+ Ray info)."""
    torch.set_num_threads(cfg.policy.torch_threads)
    set_global_seed(cfg.seed)
    policy, model = build_policy(cfg, create_cfg)
    env_num = cfg.env.collector_env_num
    rows: List[Dict] = []
    with tempfile.TemporaryDirectory() as exp_dir:
        learner = Learner(policy.learn_mode, model, exp_dir, cfg)
        start = time.perf_counter()
        if backend == 'ray':
            from ppo_gobigger.pipeline.distributed.ray_actors import RayWorkers
            workers = RayWorkers(cfg, create_cfg, model, lambda: learner.train_iter, [0] * env_num, exp_dir)
        else:
            workers = LocalWorkers(cfg, create_cfg, policy, split_envs(env_num, 1)[0], [0] * env_num, Rank(), exp_dir)
        try:
            collector, _ = workers.start()
            for _ in range(1 + iterations):
                before = collector.envstep
                collect_start = time.perf_counter()
                rollout = collector.collect()
                collect_s = time.perf_counter() - collect_start
                learn_start = time.perf_counter()
                learner.train(rollout, collector.envstep, collector.info())
                learn_s = time.perf_counter() - learn_start
                row = dict(env_steps=collector.envstep - before, collect_s=collect_s, learn_s=learn_s)
                if backend == 'ray':
                    row.update({k: collector.info()[k] for k in TRANSFER_KEYS})
                rows.append(row)
                if len(rows) == 1:
                    first_iteration_end = time.perf_counter()
        finally:
            workers.close()
    timed = rows[1:]
    steps = sum(r['env_steps'] for r in timed)
    wall = sum(r['collect_s'] + r['learn_s'] for r in timed)
    return dict(start_and_first_iteration_s=first_iteration_end - start, iterations=rows,
                env_steps_per_s=steps / wall, collect_s=sum(r['collect_s'] for r in timed),
                learn_s=sum(r['learn_s'] for r in timed))


def project(ray_run: Dict, n_sample: int, machines: int, bandwidth_mb_s: float, learner_speedup: float) -> Dict:
    """Env steps per second of one synchronous iteration over ``machines`` worker machines like this one.

    Each machine collects n_sample env steps in the time this machine's workers took (medians of the timed Ray
    iterations), all at once. The driver then publishes the weights (ray.put, then every machine fetches them
    over the driver's link: machines x weights_bytes at bandwidth_mb_s, plus a load as measured here), fetches
    the rollouts (machines x rollout_bytes over the same link, plus deserialising and joining them, measured
    here per machine), and learns on machines x n_sample env steps at the measured seconds per env step divided
    by learner_speedup. Nothing overlaps (synchronous PPO).
    """
    timed = ray_run['iterations'][1:]

    def median(key: str) -> float:
        return statistics.median(r[key] for r in timed)

    bandwidth = bandwidth_mb_s * 1e6
    learn_s_per_step = statistics.median(r['learn_s'] / r['env_steps'] for r in timed)
    seconds = dict(
        collect=median('worker_collect_s'),
        weights=median('weights_put_s') + median('weights_get_s') + machines * median('weights_bytes') / bandwidth,
        rollouts=machines * (median('rollout_bytes') / bandwidth + median('rollout_get_s') + median('concat_s')),
        learn=machines * n_sample * learn_s_per_step / learner_speedup,
    )
    iteration_s = sum(seconds.values())
    return dict(machines=machines, learner_speedup=learner_speedup, iteration_s=iteration_s,
                env_steps_per_s=machines * n_sample / iteration_s,
                collection_bound_env_steps_per_s=machines * n_sample / seconds['collect'],
                seconds=seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--config', default=BOTS_CONFIG, help='config file (default: gobigger_ppo_vs_bots_config.py)')
    parser.add_argument('--set', action='append', default=[], metavar='KEY=VALUE', help='override a config key')
    parser.add_argument('--iterations', type=int, default=3, help='timed PPO iterations of each backend')
    parser.add_argument('--bandwidth-mb-s', type=float, default=117.0,
                        help='network bandwidth into and out of the driver for the projection (1 Gbit/s Ethernet)')
    parser.add_argument('--output', default=RESULTS, help='where the JSON goes')
    args = parser.parse_args()
    os.environ.setdefault('PYGAME_HIDE_SUPPORT_PROMPT', '1')

    main_config, create_config = load_config_file(args.config)
    main_config = apply_overrides(main_config, ['env.evaluator_env_num=1', 'env.n_evaluator_episode=1', *args.set])
    cfg, create_cfg = compile_config(main_config, create_config)
    dist = cfg.distributed
    settings = dict(
        config=os.path.relpath(args.config), overrides=args.set, preset=cfg.env.preset, opponent=cfg.env.opponent,
        env_num=cfg.env.collector_env_num, manager=cfg.env.manager.type, n_sample=cfg.policy.collect.n_sample,
        batch_size=cfg.policy.learn.batch_size, epoch_per_collect=cfg.policy.learn.epoch_per_collect,
        hidden_size=cfg.policy.model.hidden_size, iterations=args.iterations, ray_workers=dist.num_workers,
        ray_worker_cpus=dist.worker_cpus, bandwidth_mb_s=args.bandwidth_mb_s,
    )
    loadavg_at_start = os.getloadavg()
    local = run_backend(cfg, create_cfg, 'local', args.iterations)
    ray_run = run_backend(cfg, create_cfg, 'ray', args.iterations)
    ratio = ray_run['env_steps_per_s'] / local['env_steps_per_s']
    projection = [project(ray_run, cfg.policy.collect.n_sample, m, args.bandwidth_mb_s, s)
                  for s in LEARNER_SPEEDUPS for m in (1, ) + MACHINES]
    result = dict(
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
        settings=settings, local=local, ray=ray_run, ratio_ray_to_local=ratio, projection=projection,
        machine=dict(python=platform.python_version(), torch=torch.__version__, cpus=os.cpu_count(),
                     loadavg_at_start=loadavg_at_start, loadavg_at_end=os.getloadavg()),
    )
    write_json(args.output, result)
    print(f'wrote {args.output}')
    print_report(settings, local, ray_run, ratio, projection)


def print_report(settings: Dict, local: Dict, ray_run: Dict, ratio: float, projection: List[Dict]) -> None:
    print(f'\n{settings["preset"]}, {settings["env_num"]} collector envs ({settings["manager"]}), '
          f'{settings["iterations"]} timed iterations of {settings["n_sample"]} env steps; Ray: '
          f'{settings["ray_workers"]} rollout workers on a local cluster')
    for name, run in (('local', local), ('ray', ray_run)):
        print(f'{name:6} {run["env_steps_per_s"]:7.0f} env steps/s (collection {run["collect_s"]:.1f} s + learning '
              f'{run["learn_s"]:.1f} s; start-up and first iteration {run["start_and_first_iteration_s"]:.1f} s)')
    print(f'ratio ray / local: {ratio:.3f}')
    timed = ray_run['iterations'][1:]
    for key, unit, scale in (('weights_bytes', 'KB', 1e-3), ('weights_put_s', 'ms', 1e3), ('weights_get_s', 'ms', 1e3),
                             ('rollout_bytes', 'MB', 1e-6), ('rollout_get_s', 'ms', 1e3), ('concat_s', 'ms', 1e3),
                             ('worker_collect_s', 's', 1)):
        values = [r[key] * scale for r in timed]
        print(f'  per iteration {key:17} median {statistics.median(values):9.3f} {unit:3} '
              f'(min {min(values):.3f}, max {max(values):.3f})')
    print(f'\nprojection (synchronous; {settings["bandwidth_mb_s"]:.0f} MB/s to and from the driver; see project()):')
    print(f'{"machines":>8} {"learner":>8} {"env steps/s":>12} {"iteration s":>12} {"collect":>8} {"weights":>8} '
          f'{"rollouts":>9} {"learn":>8} {"collection-bound":>17}')
    for p in projection:
        s = p['seconds']
        print(f'{p["machines"]:8d} {p["learner_speedup"]:7.0f}x {p["env_steps_per_s"]:12.0f} {p["iteration_s"]:12.1f} '
              f'{s["collect"]:8.1f} {s["weights"]:8.3f} {s["rollouts"]:9.2f} {s["learn"]:8.1f} '
              f'{p["collection_bound_env_steps_per_s"]:17.0f}')


if __name__ == '__main__':
    main()
