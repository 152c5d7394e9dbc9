"""One PPO iteration's learning, timed: `python benchmarks/learn_step.py [--config PATH] [--set KEY=VALUE ...]
[--checkpoint PATH] [--threads 2,1] [--repeats N]`.

1. One rollout of policy.collect.n_sample env steps from the real collector, by default of the self-play recipe
   (env.opponent=self: every team's steps are learnt from) played with the weights of
   --checkpoint (zoo/st_t2p2_selfplay_s0.pth.tar): trained players split, and the encoder's cost grows with the
   clones in view, so a rollout of random play would flatter the learner.
2. The learner's PPO iteration on it (the policy's learn mode, as Learner.train runs it, inside
   ``torch_threads``) once for each --threads setting, alternated A/B/A/B for --repeats rounds in this one
   process; every call starts from the checkpoint's weights, a fresh optimizer and value normalisation, and the
   same minibatch order.

Prints the median seconds of each setting and its ratio to the first (the machine is shared and noisy: compare
ratios taken in the same run, not seconds); writes benchmarks/results/learn_step.json.
"""
import argparse
import copy
import datetime
import os
import platform
import statistics
import tempfile
import time
from typing import Dict, List

from ppo_gobigger.quiet import silence_third_party_noise

silence_third_party_noise()  # first: the imports below would print other packages' import-time notices

import torch

from ppo_gobigger.cli import BOTS_CONFIG
from ppo_gobigger.config import apply_overrides, compile_config, load_config_file
from ppo_gobigger.files import write_json
from ppo_gobigger.pipeline.distributed.torchrun import rank_config, rank_from_env
from ppo_gobigger.pipeline.threads import cores_per_process, torch_threads
from ppo_gobigger.pipeline.serial import TrainingRun

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, 'benchmarks', 'results', 'learn_step.json')
CHECKPOINT = os.path.join(ROOT, 'zoo', 'st_t2p2_selfplay_s0.pth.tar')
RECIPE = ["env.opponent='self'"]  # self-play, every team's steps learnt from, before the user's --set


def collect_rollout(cfg, create_cfg):
    """(policy, rollout): the run's policy after one collection of policy.collect.n_sample env steps."""
    rank = rank_from_env()
    with torch_threads(cfg.policy.torch_threads):  # as train() acts (TrainingRun leaves the threads to its caller)
        run = TrainingRun(cfg, rank_config(cfg, rank), create_cfg, rank, resume=None, progress=False)
        try:
            run.start()
            start = time.time()
            rollout = run.collect()
            print(f'collected {cfg.policy.collect.n_sample} env steps in {time.time() - start:.1f}s', flush=True)
        finally:
            run.close()
    return run.policy, rollout


def rollout_summary(rollout) -> Dict:
    """Team samples and the clones per player that the encoder sees."""
    valid = rollout['valid']  # (T, E)
    clones = rollout['obs']['clone_mask'].bool().sum(-1)[valid]  # (S, A)
    return dict(team_samples=int(valid.sum()), players_per_team=int(clones.shape[-1]),
                clones_per_player_mean=float(clones.float().mean()),
                clones_per_player_max_share=float((clones == rollout['obs']['clone_mask'].shape[-1]).float().mean()))


def time_learning(learn_mode, rollout, threads: List[int], repeats: int) -> Dict[str, List[float]]:
    """Seconds of one learn-mode call per setting and round, alternated; each from the same starting state."""
    start_state = copy.deepcopy(learn_mode.state_dict())  # weights, an empty optimizer, value-norm statistics
    seconds: Dict[str, List[float]] = {str(n): [] for n in threads}
    for _ in range(repeats):
        for n in threads:
            learn_mode.load_state_dict(copy.deepcopy(start_state))
            torch.manual_seed(0)  # the same minibatch order
            with torch_threads(n):
                start = time.perf_counter()
                stats = learn_mode.forward(rollout)
                seconds[str(n)].append(time.perf_counter() - start)
            print(f'threads {n}: {seconds[str(n)][-1]:.2f}s ({stats["update_count"]} updates)', flush=True)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--config', default=BOTS_CONFIG, help='config file (default: gobigger_ppo_vs_bots_config.py)')
    parser.add_argument('--set', action='append', default=[], metavar='KEY=VALUE',
                        help=f'override a config key (after {" ".join(RECIPE)})')
    parser.add_argument('--checkpoint', default=CHECKPOINT, help='weights that play the rollout and start learning')
    cores = cores_per_process()
    parser.add_argument('--threads', default=','.join(str(n) for n in sorted({cores, 1}, reverse=True)),
                        help='comma-separated torch thread counts to compare, the first is the reference '
                             '(default: this process\'s cores, then 1)')
    parser.add_argument('--repeats', type=int, default=3, help='rounds of the A/B alternation')
    parser.add_argument('--output', default=RESULTS, help='where the JSON goes')
    args = parser.parse_args()
    threads = [int(n) for n in args.threads.split(',')]

    main_config, create_config = load_config_file(args.config)
    with tempfile.TemporaryDirectory() as exp_dir:
        overrides = [*RECIPE, *args.set, f'policy.load_path={args.checkpoint!r}', f'exp_name={exp_dir!r}']
        cfg, create_cfg = compile_config(apply_overrides(main_config, overrides), create_config)
        policy, rollout = collect_rollout(cfg, create_cfg)
    seconds = time_learning(policy.learn_mode, rollout, threads, args.repeats)

    reference = seconds[str(threads[0])]
    rows = {n: dict(seconds=s, median_s=statistics.median(s),
                    ratio_to_first=statistics.median(a / b for a, b in zip(s, reference)))
            for n, s in seconds.items()}
    result = dict(date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
                  config=os.path.relpath(args.config), overrides=[*RECIPE, *args.set],
                  checkpoint=os.path.relpath(args.checkpoint), n_sample=cfg.policy.collect.n_sample,
                  epoch_per_collect=cfg.policy.learn.epoch_per_collect, batch_size=cfg.policy.learn.batch_size,
                  rollout=rollout_summary(rollout), threads=rows,
                  machine=dict(platform=platform.platform(), cores=cores, torch=torch.__version__,
                               load_average=os.getloadavg()))
    write_json(args.output, result)
    print(f'wrote {args.output}')
    for n, row in rows.items():
        print(f'threads {n}: median {row["median_s"]:.2f}s, ratio to threads {threads[0]}: {row["ratio_to_first"]:.3f}')


if __name__ == '__main__':
    main()
