"""Soak: a long run of the default config with its resources sampled every minute.

    python benchmarks/soak.py --minutes 60

Starts `entry/train_gobigger.py` (default config, an env-step budget it will not reach) in its own process
group, samples every `--interval` seconds the resident memory (trainer alone and with its env processes), open
file descriptors and child process count, and stops the run with SIGTERM at the end (which must leave a
checkpoint and no process behind). Writes benchmarks/results/soak.json after every sample, so a cut-short soak
still leaves its data, and prints the growth figures last.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time

from ppo_gobigger.files import write_json

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, 'benchmarks', 'results', 'soak.json')


def _children(pid: int):
    out = []
    for entry in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open(f'/proc/{entry}/stat') as f:
                fields = f.read().rsplit(')', 1)[1].split()
            if int(fields[1]) == pid:  # field 4 of stat: the parent pid
                out.append(int(entry))
        except (OSError, IndexError, ValueError):
            pass
    return out


def _rss_mb(pid: int) -> float:
    with open(f'/proc/{pid}/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) / 1024
    return 0.0


def _sample(pid: int, start: float, exp_dir: str) -> dict:
    children = _children(pid)
    evaluations = 0
    report = os.path.join(exp_dir, 'evaluator.jsonl')
    if os.path.exists(report):
        with open(report) as f:
            evaluations = sum(1 for _ in f)
    envstep = 0
    log = os.path.join(exp_dir, 'learner.jsonl')
    if os.path.exists(log):
        with open(log) as f:
            lines = f.readlines()
        if lines:
            envstep = json.loads(lines[-1])['envstep']
    return {
        'minute': round((time.time() - start) / 60, 2),
        'trainer_rss_mb': round(_rss_mb(pid), 1),
        'total_rss_mb': round(_rss_mb(pid) + sum(_rss_mb(c) for c in children), 1),
        'open_fds': len(os.listdir(f'/proc/{pid}/fd')),
        'child_processes': len(children),
        'evaluations': evaluations,
        'envstep': envstep,
    }


def _growth(samples, key):
    """Growth of ``key`` from the first sample after the first evaluation to the last sample, in percent."""
    after = [s for s in samples if s['evaluations'] >= 2]  # the evaluation before training counts as the first
    if len(after) < 2:
        return None
    return round(100.0 * (after[-1][key] - after[0][key]) / after[0][key], 2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--minutes', type=float, default=60.0)
    parser.add_argument('--interval', type=float, default=60.0, help='seconds between samples')
    parser.add_argument('--exp-name', default='/tmp/ppo_gobigger_soak')
    args = parser.parse_args()

    cmd = [sys.executable, 'entry/train_gobigger.py', '--exp-name', args.exp_name, '--no-progress',
           '--max-env-step', '100000000']
    log = open(args.exp_name.rstrip('/') + '.log', 'w')
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    start = time.time()
    result = {'command': ' '.join(cmd), 'interval_s': args.interval, 'samples': []}
    try:
        while time.time() - start < args.minutes * 60 and proc.poll() is None:
            time.sleep(min(args.interval, max(0.0, args.minutes * 60 - (time.time() - start))))
            if proc.poll() is not None:
                break
            result['samples'].append(_sample(proc.pid, start, args.exp_name))
            for key in ('trainer_rss_mb', 'total_rss_mb', 'open_fds'):
                result[f'{key}_growth_pct_after_first_eval'] = _growth(result['samples'], key)
            write_json(RESULTS, result, indent=1)
            print(json.dumps(result['samples'][-1]), flush=True)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        stop = time.time()
        proc.wait(timeout=60)
        result['stop'] = {
            'exit_code': proc.returncode,
            'seconds_to_stop': round(time.time() - stop, 1),
            'processes_left': len(_children(proc.pid)),
        }
        write_json(RESULTS, result, indent=1)
    samples = result['samples']
    print(f'samples: {len(samples)} over {samples[-1]["minute"] if samples else 0} min, '
          f'env steps {samples[-1]["envstep"] if samples else 0}')
    for key in ('trainer_rss_mb', 'total_rss_mb', 'open_fds'):
        print(f'{key}: first {samples[0][key] if samples else None} last {samples[-1][key] if samples else None} '
              f'growth after the first evaluation {result.get(f"{key}_growth_pct_after_first_eval")}%')
    print(f'stop: {result["stop"]}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
