"""What the kickstart's demonstrations cost in memory: `python benchmarks/demo_memory.py [--config PATH] [--env-steps N]`.

Runs the kickstart's collection (pipeline/learn/pretrain.py collect_demonstrations: the config's bots play our side
for whole games on the config's collector envs) for N env steps and measures, in the trainer process:
  - stored bytes per env step: the returned tensors (observations, actions, returns) over the env steps kept;
  - peak bytes per env step: how the process's peak resident memory (ru_maxrss) grows with the demonstrations. A
    first collection of N/4 steps sets the peak of everything that does not grow with them (env manager, imports,
    buffers); the second, of N, raises it by what N - N/4 more steps cost at the peak (collection and the joining
    of the games). The env processes are not counted: they hold no demonstrations.
Projects both to 1M demonstration steps and writes benchmarks/results/demo_memory.json.
"""
import argparse
import datetime
import os
import platform
import resource

from ppo_gobigger.quiet import passive_openmp_waits, silence_third_party_noise

silence_third_party_noise()  # first: the imports below would print other packages' import-time notices
passive_openmp_waits()  # before torch is imported: see quiet.py

import torch

from ppo_gobigger.config import apply_overrides, compile_config, load_config_file
from ppo_gobigger.files import write_json
from ppo_gobigger.pipeline.build import set_global_seed
from ppo_gobigger.pipeline.learn.pretrain import collect_demonstrations

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, 'benchmarks', 'results', 'demo_memory.json')
MILLION = 1_000_000


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--config', default=os.path.join(ROOT, 'config', 'gobigger_ppo_beat_bots_config.py'),
                        help='Python file defining main_config (default: the beat-bots config, whose kickstart it is)')
    parser.add_argument('--set', action='append', default=[], metavar='KEY=VALUE', help='override a config key')
    parser.add_argument('--env-steps', type=int, default=20_000, help='demonstration env steps to collect')
    parser.add_argument('--output', default=RESULTS, help='where the JSON goes')
    args = parser.parse_args()
    if args.env_steps < 1:
        parser.error(f'--env-steps must be >= 1; got {args.env_steps}')
    os.environ.setdefault('PYGAME_HIDE_SUPPORT_PROMPT', '1')

    main_config, create_config = load_config_file(args.config)

    def config(env_steps: int):
        return compile_config(apply_overrides(main_config, args.set + [f'pretrain.env_steps={env_steps}']),
                              create_config)

    first_cfg, create_cfg = config(max(args.env_steps // 4, 1))
    cfg, _ = config(args.env_steps)
    set_global_seed(cfg.seed)
    first_kept = len(collect_demonstrations(first_cfg, create_cfg)['action'])  # freed again at once
    before = peak_rss_bytes()
    demos = collect_demonstrations(cfg, create_cfg)
    peak_growth = peak_rss_bytes() - before
    kept = len(demos['action'])
    tensors = list(demos['obs'].values()) + [demos['action'], demos['returns']]
    stored = sum(t.element_size() * t.nelement() for t in tensors)
    result = dict(
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
        settings=dict(config=os.path.relpath(args.config, ROOT), overrides=args.set, env_steps=args.env_steps,
                      preset=cfg.env.preset,
                      env_num=cfg.env.collector_env_num, bot_level=cfg.pretrain.bot_level),
        env_steps_played=demos['env_steps'],
        env_steps_kept=kept,
        stored_bytes_per_env_step=stored / kept,
        stored_bytes_by_key={k: v.element_size() * v.nelement() / kept for k, v in demos['obs'].items()},
        first_collection_env_steps_kept=first_kept,
        peak_rss_growth_bytes=peak_growth,
        peak_bytes_per_env_step=peak_growth / (kept - first_kept),
        projected_1m_steps_stored_gb=stored / kept * MILLION / 1e9,
        projected_1m_steps_peak_gb=peak_growth / (kept - first_kept) * MILLION / 1e9,
        machine=dict(python=platform.python_version(), torch=torch.__version__, cpus=os.cpu_count()),
    )
    write_json(args.output, result)
    print(f'wrote {args.output}')
    print(f'{kept:,} demonstration env steps kept ({demos["env_steps"]:,} played)')
    print(f'stored: {result["stored_bytes_per_env_step"]:,.0f} bytes per env step -> '
          f'{result["projected_1m_steps_stored_gb"]:.2f} GB for 1M steps')
    print(f'peak:   {result["peak_bytes_per_env_step"]:,.0f} bytes per env step (growth of the peak RSS from '
          f'{first_kept:,} to {kept:,} steps) -> '
          f'{result["projected_1m_steps_peak_gb"]:.2f} GB for 1M steps')


if __name__ == '__main__':
    main()
