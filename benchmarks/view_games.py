"""Greedy games of a checkpoint against the bots, played in this process through an env type that looks at every
observation: the part benchmarks/clone_cap.py and benchmarks/team_view.py share. Import it after
``silence_third_party_noise()``."""
import argparse
import os
from typing import Dict, Tuple

from ppo_gobigger.config import default_create_config
from ppo_gobigger.files import write_json
from ppo_gobigger.pipeline.evaluate import evaluate
from ppo_gobigger.pipeline.learn.checkpoint import load_checkpoint

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'results')


def add_game_args(parser: argparse.ArgumentParser) -> None:
    """--ckpt, --level, --games and --seed."""
    parser.add_argument('--ckpt', required=True, help='a checkpoint (its config and features play the games)')
    parser.add_argument('--level', type=int, default=2, help='level of the bots on the other team')
    parser.add_argument('--games', type=int, default=10)
    parser.add_argument('--seed', type=int, default=2000, help='env seed of the games (2000: the validation block)')


def play_in_process(args: argparse.Namespace, env_type: str) -> Tuple[Dict, Dict]:
    """Play args.games greedy games of args.ckpt against level-args.level bots on one env of ``env_type`` (a
    registered subclass of GoBiggerPPOEnv) in this process, so that the env's counters see every view. Returns the
    evaluator's report and the env config the games were played with (the checkpoint's own)."""
    main_config = load_checkpoint(args.ckpt)['config']
    main_config['env']['manager'] = dict(type='base')
    main_config['env']['evaluator_env_num'] = 1
    main_config['env']['bot_level'] = args.level
    create_config = default_create_config()
    create_config.env.type = env_type
    report = evaluate(args.ckpt, main_config, create_config, episodes=args.games, seed=args.seed)
    return report, main_config['env']


def report_games(kind: str, args: argparse.Namespace, report: Dict, result: Dict) -> str:
    """Print the games' line, write ``result`` (with the games' settings and outcome) to
    benchmarks/results/<kind>_<checkpoint name>_level<L>.json and return that path."""
    name = os.path.basename(args.ckpt).replace('.pth.tar', '')
    print(f"{name}: {args.games} games against level-{args.level} bots (env seed {args.seed}), "
          f"win rate {report['win_rate']:.2f}, score ratio {report['score_ratio_mean']:.2f}")
    out = os.path.join(RESULTS, f'{kind}_{name}_level{args.level}.json')
    write_json(out, dict(ckpt=args.ckpt, level=args.level, games=args.games, seed=args.seed,
                         win_rate=report['win_rate'], score_ratio=report['score_ratio_mean'], **result))
    return out
