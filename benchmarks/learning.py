"""What training produces, measured: `python benchmarks/learning.py [--config PATH] [--set KEY=VALUE ...]`.

1. Trains with the config for --env-steps env steps, evaluating (greedy, held-out games) every --eval-every steps.
2. Evaluates the last checkpoint over --final-games games on a seed block no game of the run used: training games
   have even game seeds, evaluation games odd ones, and the final games take env seed ``seed + FINAL_SEED_OFFSET``,
   a block of evaluation seeds the in-training evaluations (which pick ckpt_best) never saw.
3. Reference rows on the same final games: our team's side played by a uniformly random team and by GoBigger's
   level-1 and level-2 bots (env.stand_in), against the same opponents as the trained team.

Writes benchmarks/results/learning_<tag>.json (the curve: env steps, training wall time, win_rate,
score_ratio_mean, rank_mean, reward_mean/std at each evaluation; the final and reference rows) and
learning_<tag>.png (win rate and score ratio against env steps and against training wall time), and prints the
final figures last. Training wall time is collection + learning, summed from learner.jsonl (evaluations excluded).
"""
import argparse
import copy
import datetime
import json
import logging
import os
import platform
import shutil
import time
from typing import Dict, List

from ppo_gobigger.quiet import silence_third_party_noise

silence_third_party_noise()  # first: the imports below would print other packages' import-time notices

import torch
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter
from tabulate import tabulate

from ppo_gobigger.cli import DEFAULT_CONFIG
from ppo_gobigger.config import apply_overrides, compile_config, load_config_file
from ppo_gobigger.pipeline.evaluate import evaluate
from ppo_gobigger.pipeline.monitor.learning_curve import save_figure_atomically
from ppo_gobigger.pipeline.serial import train

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, 'results')
RUNS = os.path.join(HERE, 'runs')  # experiment folders (checkpoints, logs); not committed
FINAL_SEED_OFFSET = 1000  # final games: env seed = run seed + this, see the module docstring
CURVE_FIELDS = ('win_rate', 'score_ratio_mean', 'rank_mean', 'reward_mean', 'reward_std', 'final_score_mean',
                'opponent_score_mean')
REFERENCES = {  # name -> env overrides: who plays our team's side instead of the policy
    'random team': ['env.stand_in=random'],
    'level-1 bots': ['env.stand_in=bot', 'env.stand_in_bot_level=1'],
    'level-2 bots': ['env.stand_in=bot', 'env.stand_in_bot_level=2'],
}


def read_jsonl(path: str) -> List[Dict]:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def learning_curve(exp_dir: str) -> List[Dict]:
    """One point per evaluation: env steps, training wall time up to it, and the report's figures."""
    iterations = read_jsonl(os.path.join(exp_dir, 'learner.jsonl'))
    points = []
    for report in read_jsonl(os.path.join(exp_dir, 'evaluator.jsonl')):
        envstep = report['collector_envstep']
        wall = sum(it['collect_time'] + it['learn_time'] for it in iterations if it['envstep'] <= envstep)
        points.append(dict(env_steps=envstep, train_iter=report['train_iter'], wall_time_s=wall,
                           games=report['episode_count'], **{k: report[k] for k in CURVE_FIELDS}))
    return points


def final_row(report: Dict) -> Dict:
    return dict(games=report['episode_count'], **{k: report[k] for k in CURVE_FIELDS})


def plot(points: List[Dict], final: Dict, references: Dict[str, Dict], title: str, path: str) -> None:
    """2 x 2 panels: win rate and score ratio (rows) against env steps and training wall time (columns)."""
    fig = Figure(figsize=(11, 7), layout='constrained')
    axes = fig.subplots(2, 2, sharey='row')
    styles = dict(zip(REFERENCES, (':', '-.', '--')))
    for col, (x_key, x_label) in enumerate((('env_steps', 'training env steps'),
                                            ('wall_time_s', 'training wall time (s, evaluations excluded)'))):
        x = [p[x_key] for p in points]
        for row, (field, label) in enumerate((('win_rate', 'win rate'), ('score_ratio_mean', 'score ratio'))):
            ax = axes[row, col]
            ax.plot(x, [p[field] for p in points], marker='o', markersize=4, color='tab:blue',
                    label=f'trained team ({points[-1]["games"]} games each)')
            ax.plot([x[-1]], [final[field]], marker='*', markersize=12, color='tab:red', linestyle='none',
                    label=f'final, {final["games"]} new games')
            for name, ref in references.items():
                ax.axhline(ref[field], color='grey', linestyle=styles[name], linewidth=1, label=name)
            ax.set_xlabel(x_label)
            ax.set_ylabel(label)
            ax.grid(alpha=0.3)
            if x_key == 'env_steps':
                ax.xaxis.set_major_formatter(EngFormatter(sep=''))
    axes[0, 0].set_ylim(-0.05, 1.05)
    axes[1, 0].set_ylim(bottom=0)
    axes[0, 0].legend(fontsize=8, loc='upper left')
    fig.suptitle(title, fontsize=11)
    save_figure_atomically(fig, path)


def evaluate_checkpoints(args, final_seed: int, tag: str) -> None:
    """Each checkpoint (with the config it was trained with) over the final games; writes learning_<tag>.json."""
    rows = {}
    for item in args.checkpoint:
        name, path = item.split('=', 1)
        rows[name] = dict(checkpoint=path, **final_row(evaluate(path, episodes=args.final_games, seed=final_seed)))
        print(f'{name}: {rows[name]}', flush=True)
    result = dict(date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
                  settings=dict(final_games=args.final_games, final_seed=final_seed), checkpoints=rows)
    os.makedirs(RESULTS, exist_ok=True)
    path = os.path.join(RESULTS, f'learning_{tag}.json')
    with open(path, 'w') as f:
        json.dump(result, f, indent=2)
    print(f'wrote {path}')
    print(tabulate([(name, f'{r["win_rate"]:.2f}', f'{r["score_ratio_mean"]:.3f}', f'{r["rank_mean"]:.2f}')
                    for name, r in rows.items()], headers=('checkpoint', 'win rate', 'score ratio', 'rank')))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--config', default=DEFAULT_CONFIG, help='Python file defining main_config')
    parser.add_argument('--set', action='append', default=[], metavar='KEY=VALUE', help='override a config key')
    parser.add_argument('--env-steps', type=int, help='training env steps (required unless --checkpoint)')
    parser.add_argument('--eval-every', type=int, help='env steps between evaluations (required unless --checkpoint)')
    parser.add_argument('--eval-games', type=int, default=8, help='games per evaluation during training')
    parser.add_argument('--final-games', type=int, default=50, help='games of the final evaluation')
    parser.add_argument('--no-references', action='store_true', help='skip the reference rows')
    parser.add_argument('--tag', default=None, help='results name (default: the preset)')
    parser.add_argument('--checkpoint', action='append', default=[], metavar='NAME=PATH',
                        help='no training: evaluate these checkpoints on the final games (for ablation rows)')
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format='%(asctime)s %(levelname)s %(message)s', datefmt='%H:%M:%S')
    os.environ.setdefault('PYGAME_HIDE_SUPPORT_PROMPT', '1')

    main_config, create_config = load_config_file(args.config)
    probe, _ = compile_config(apply_overrides(main_config, args.set), create_config)
    tag = args.tag or probe.env.preset
    if args.checkpoint:
        evaluate_checkpoints(args, probe.seed + FINAL_SEED_OFFSET, tag)
        return
    if args.env_steps is None or args.eval_every is None:
        parser.error('--env-steps and --eval-every are required to train')
    exp_dir = os.path.join(RUNS, f'learning_{tag}')
    shutil.rmtree(exp_dir, ignore_errors=True)  # a fresh run: its logs are the curve
    overrides = list(args.set) + [
        f'exp_name={exp_dir!r}', f'max_env_step={args.env_steps}',
        f'policy.eval.evaluator.eval_freq={args.eval_every}', f'env.n_evaluator_episode={args.eval_games}',
    ]
    main_config = apply_overrides(main_config, overrides)
    cfg, _ = compile_config(main_config, create_config)

    start = time.time()
    train(main_config, create_config, progress=False)
    total_s = time.time() - start
    points = learning_curve(exp_dir)
    last_ckpt = os.path.join(exp_dir, 'ckpt', f'iteration_{points[-1]["train_iter"]}.pth.tar')
    final_seed = cfg.seed + FINAL_SEED_OFFSET
    final = final_row(evaluate(last_ckpt, main_config, create_config, episodes=args.final_games, seed=final_seed))
    references = {} if args.no_references else {
        name: final_row(evaluate(last_ckpt, main_config, create_config, episodes=args.final_games, seed=final_seed,
                                 overrides=ref))
        for name, ref in REFERENCES.items()
    }

    opponents = f'{cfg.env.opponent}' + (f' level {cfg.env.bot_level}' if cfg.env.opponent == 'bot' else '')
    result = dict(
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
        settings=dict(config=os.path.relpath(args.config), overrides=args.set, preset=cfg.env.preset,
                      opponents=opponents, env_steps=args.env_steps, eval_every=args.eval_every,
                      eval_games=args.eval_games, final_games=args.final_games, final_seed=final_seed,
                      greedy=not cfg.policy.eval.sample, seed=cfg.seed),
        curve=points, final=final, references=references, total_wall_time_s=total_s,
        machine=dict(python=platform.python_version(), torch=torch.__version__, cpus=os.cpu_count()),
    )
    os.makedirs(RESULTS, exist_ok=True)
    json_path = os.path.join(RESULTS, f'learning_{tag}.json')
    png_path = os.path.join(RESULTS, f'learning_{tag}.png')
    with open(json_path, 'w') as f:
        json.dump(result, f, indent=2)
    plot(points, final, references, f'{cfg.env.preset} vs {opponents}: {tag}', png_path)

    print(tabulate([(p['env_steps'], f'{p["wall_time_s"]:.0f}', p['games'], f'{p["win_rate"]:.2f}',
                     f'{p["score_ratio_mean"]:.3f}', f'{p["rank_mean"]:.2f}',
                     f'{p["reward_mean"]:.2f} ± {p["reward_std"]:.2f}') for p in points],
                   headers=('env steps', 'train s', 'games', 'win rate', 'score ratio', 'rank', 'reward')))
    print(f'wrote {json_path} and {png_path}; whole run {total_s / 60:.1f} min')
    rows = [('trained team (last checkpoint)', final)] + list(references.items())
    print(f'\nfinal: {args.final_games} games on held-out seeds (env seed {final_seed}), {cfg.env.preset} vs '
          f'{opponents}, {"greedy" if not cfg.policy.eval.sample else "sampled"} actions')
    print(tabulate([(name, f'{r["win_rate"]:.2f}', f'{r["score_ratio_mean"]:.3f}', f'{r["rank_mean"]:.2f}',
                     f'{r["final_score_mean"]:.0f}', f'{r["opponent_score_mean"]:.0f}') for name, r in rows],
                   headers=('our side', 'win rate', 'score ratio', 'rank', 'our score', 'best other')))


if __name__ == '__main__':
    main()
