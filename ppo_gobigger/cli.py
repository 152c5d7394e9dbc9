"""Command lines of entry/train_gobigger.py, entry/eval_gobigger.py, entry/league_gobigger.py,
entry/play_gobigger.py and entry/ding_gobigger.py."""
import argparse
import logging
import os
import signal
import sys
import time
from typing import List, Optional

from .quiet import passive_openmp_waits, silence_third_party_noise

CONFIG_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'config')
DEFAULT_CONFIG = os.path.join(CONFIG_DIR, 'gobigger_ppo_config.py')  # the recipe: a league from scratch
# the recipe's settings against the level-3 bots only: DI-engine's pipelines (their collector acts for one team) and
# the speed benchmarks (comparable with their history) run it
BOTS_CONFIG = os.path.join(CONFIG_DIR, 'gobigger_ppo_vs_bots_config.py')


def _setup_output() -> None:
    """Our log lines on stderr, and none of other packages' import-time notices before them; torch's threads
    waiting passively (it is imported later)."""
    silence_third_party_noise()
    passive_openmp_waits()
    logging.basicConfig(level=logging.INFO, format='%(asctime)s %(levelname)s %(message)s', datefmt='%H:%M:%S')


def _fail(message: str) -> int:
    print(f'error: {message}', file=sys.stderr)
    return 2


def _add_progress_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        '--no-progress', dest='progress', action='store_const', const=False, default=None,
        help='no progress bar (default: a bar when the output is a terminal; the log lines are written either way)'
    )


def train_main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description='Train a GoBigger team with multi-agent PPO.')
    parser.add_argument('--config', default=DEFAULT_CONFIG, help='Python file defining main_config (and create_config)')
    parser.add_argument('--seed', type=int, default=None, help='seed of the run (default: the config\'s)')
    parser.add_argument('--exp-name', default=None, help='experiment folder (default: the config\'s exp_name)')
    parser.add_argument('--max-env-step', type=int, default=None, help='stop after this many env steps')
    parser.add_argument(
        '--set', action='append', default=[], metavar='KEY=VALUE',
        help='override a config key by its dotted path, e.g. --set policy.learn.batch_size=512 (repeatable)'
    )
    parser.add_argument('--resume', default=None, metavar='CKPT', help='continue from this checkpoint')
    parser.add_argument(
        '--backend', default=None, metavar='NAME',
        help="'local' (the default; one process, or one per rank under torchrun) or 'ray' (rollout workers are Ray "
        'actors); same as --set distributed.backend=NAME'
    )
    parser.add_argument('--num-workers', type=int, default=None, metavar='N',
                        help='Ray rollout workers; same as --set distributed.num_workers=N')
    parser.add_argument(
        '--ray-address', default=None, metavar='ADDRESS',
        help="Ray cluster to join ('auto' or HEAD_IP:6379; default: start a local one); "
        'same as --set distributed.address=ADDRESS'
    )
    _add_progress_flag(parser)
    args = parser.parse_args(argv)
    _setup_output()

    from .config import ConfigError, apply_overrides, compile_config, load_config_file
    from .pipeline.learn.checkpoint import CheckpointError
    from .pipeline.interrupt import TrainingInterrupted
    from .policy.gobigger_ppo import NonFiniteLossError
    try:
        main_config, create_config = load_config_file(args.config)
        main_config = apply_overrides(main_config, args.set)
        if args.exp_name is not None:
            main_config['exp_name'] = args.exp_name
        for key, value in (('backend', args.backend), ('num_workers', args.num_workers),
                           ('address', args.ray_address)):
            if value is not None:
                main_config.setdefault('distributed', {})[key] = value
        compile_config(main_config, create_config)  # fail on a bad config before any process starts
        from .pipeline.serial import train
        _, report = train(main_config, create_config, seed=args.seed, max_env_step=args.max_env_step,
                          resume=args.resume, progress=args.progress)
    except (ConfigError, CheckpointError) as e:
        return _fail(str(e))
    except TrainingInterrupted as e:
        for signum in (signal.SIGINT, signal.SIGTERM):  # the stop is done: a late repeat of its signal changes nothing
            signal.signal(signum, signal.SIG_IGN)
        if e.checkpoint is None:  # a torchrun rank other than 0 (rank 0 writes it)
            print(f'{e.signal_name}: training stopped.', file=sys.stderr)
        else:
            print(f'{e.signal_name}: training stopped. Checkpoint: {e.checkpoint}\n'
                  f'resume with: --resume {e.checkpoint}', file=sys.stderr)
        return e.exit_code
    except NonFiniteLossError as e:
        print(f'error: {e}', file=sys.stderr)
        return 1
    if report:  # under torchrun, rank 0 alone evaluates
        print(f'final evaluation: reward_mean {report["reward_mean"]:.3f} win_rate {report["win_rate"]:.2f} '
              f'score_ratio_mean {report["score_ratio_mean"]:.3f}')
    return 0


def eval_main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description='Evaluate a checkpoint against the bots, or against another '
                                     'checkpoint (--vs).')
    parser.add_argument('--ckpt', required=True, help='checkpoint file (iteration_N.pth.tar or ckpt_best.pth.tar)')
    parser.add_argument(
        '--vs', default=None, metavar='CKPT',
        help="head to head: CKPT's team (every other team on a multi-team preset) instead of the bots, on --ckpt's "
        'evaluation games; reports both sides'
    )
    parser.add_argument('--episodes', type=int, default=None, help='games to play (default: the config\'s)')
    parser.add_argument('--config', default=None, help='config file (default: the config stored in the checkpoint)')
    parser.add_argument('--seed', type=int, default=None, help='evaluation seed (default: the config\'s)')
    parser.add_argument('--set', action='append', default=[], metavar='KEY=VALUE', help='override a config key')
    parser.add_argument(
        '--replay-dir', default=None, metavar='DIR',
        help='save a video (mp4) of every evaluated game in DIR, named <preset>_seed<game seed>-all.mp4'
    )
    _add_progress_flag(parser)
    args = parser.parse_args(argv)
    _setup_output()

    from .config import ConfigError, load_config_file
    from .pipeline.learn.checkpoint import CheckpointError
    if args.vs is not None:
        return _head_to_head(args)
    from .pipeline.evaluate import evaluate
    from .pipeline.play.evaluator import format_report
    try:
        main_config, create_config = load_config_file(args.config) if args.config else (None, None)
        start = time.time()
        report = evaluate(args.ckpt, main_config, create_config, episodes=args.episodes, seed=args.seed,
                          overrides=args.set, replay_dir=args.replay_dir, progress=args.progress)
    except (ConfigError, CheckpointError) as e:
        return _fail(str(e))
    print(format_report(report))
    for video in _videos_since(args.replay_dir, start):
        print(f'replay: {video}')
    return 0


def _head_to_head(args: argparse.Namespace) -> int:
    from .config import ConfigError
    from .pipeline.learn.checkpoint import CheckpointError
    from .pipeline.league.head_to_head import format_head_to_head, head_to_head
    for flag, value in (('--config', args.config), ('--replay-dir', args.replay_dir)):
        if value is not None:
            return _fail(f'{flag} does not apply to a head to head (--vs): each checkpoint plays with the config it '
                         'was trained with; change the games with --set')
    try:
        report = head_to_head(args.ckpt, args.vs, episodes=args.episodes, seed=args.seed, overrides=args.set,
                              progress=args.progress)
    except (ConfigError, CheckpointError) as e:
        return _fail(str(e))
    print(format_head_to_head(report))
    return 0


def league_main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        description='Rate checkpoints, the bots and a random team by TrueSkill from a round robin of held-out games.'
    )
    parser.add_argument('--ckpt', nargs='+', default=[], metavar='PATH', help='checkpoint files to rate')
    parser.add_argument(
        '--run-dir', action='append', default=[], metavar='DIR',
        help='rate every checkpoint (*.pth.tar) in DIR, e.g. exp/NAME/ckpt or exp/NAME/league (repeatable)'
    )
    parser.add_argument('--bots', nargs='*', type=int, default=[1, 2, 3], metavar='LEVEL',
                        help='bot levels that take part (default: 1 2 3; none: --bots with no level)')
    parser.add_argument('--random', action='store_true', help='a team playing uniformly random actions takes part')
    parser.add_argument('--games', type=int, default=4, help='games per combination of participants (default: 4)')
    parser.add_argument('--seed', type=int, default=3000,
                        help='seed of the games (default: 3000, apart from the training and benchmark seeds)')
    parser.add_argument('--preset', default=None,
                        help='GoBigger preset of the games (default: the first checkpoint\'s, else st_t2p2)')
    parser.add_argument('--env-num', type=int, default=2, help='envs playing the games at once (default: 2)')
    parser.add_argument(
        '--set', action='append', default=[], metavar='KEY=VALUE',
        help='override a key of the games\' config, e.g. --set env.custom_cfg.frame_limit=600 (repeatable)'
    )
    parser.add_argument('--out', default='league', metavar='DIR',
                        help='folder for league.json, league.csv and league.png (default: league/)')
    _add_progress_flag(parser)
    args = parser.parse_args(argv)
    _setup_output()

    from .config import ConfigError
    from .pipeline.learn.checkpoint import CheckpointError
    from .pipeline.league.ratings import format_table, rating_table, write_league
    from .pipeline.league.round_robin import RANDOM, Participant, bot_participants, load_checkpoints, play_league
    try:
        participants, models = load_checkpoints(args.ckpt, args.run_dir)
        participants += bot_participants(args.bots) + ([Participant(RANDOM)] if args.random else [])
        league = play_league(participants, models, args.games, args.seed, preset=args.preset, env_num=args.env_num,
                             overrides=args.set, progress=args.progress)
    except (ConfigError, CheckpointError) as e:
        return _fail(str(e))
    table = rating_table(league.participants, league.records)
    paths = write_league(args.out, league, table)
    print(format_table(table))
    for path in paths:
        print(f'wrote {path}')
    return 0


def play_main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        description="Play GoBigger in a window with a checkpoint's policy playing every other player (--ckpt), or "
        "watch checkpoints' teams play (--watch). The mouse steers, Q ejects, W splits, Esc quits."
    )
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument('--ckpt', metavar='A', help="you play one player; A's policy plays your teammates and, without "
                     '--vs, the other teams')
    who.add_argument('--watch', metavar='A', help="watch A's team (team 0) play")
    parser.add_argument('--vs', metavar='B', default=None,
                        help="B's policy plays every team but A's (with --watch) or yours (with --ckpt)")
    parser.add_argument('--player', type=int, default=0, metavar='ID', help='the player id you control (default 0)')
    parser.add_argument('--seed', type=int, default=None, help='seed of the game (default: a random one)')
    parser.add_argument('--frame-limit', type=int, default=None, metavar='FRAMES',
                        help="length of the game in frames, 20 a second (default: the preset's)")
    parser.add_argument('--speed', type=float, default=1.0,
                        help='game time per real time (default 1: real time; 0: as fast as it runs)')
    parser.add_argument('--screenshot', default=None, metavar='PNG', help="save the game's last frame there")
    args = parser.parse_args(argv)
    _setup_output()

    from .config import ConfigError
    from .pipeline.learn.checkpoint import CheckpointError
    from .pipeline.arena.play import format_standings, play
    from .pipeline.arena.window import DisplayError
    if args.speed < 0 or (args.frame_limit is not None and args.frame_limit < 1):
        return _fail(f'--speed must be >= 0 and --frame-limit >= 1; got {args.speed} and {args.frame_limit}')
    try:
        result = play(args.watch or args.ckpt, vs=args.vs, watch=args.watch is not None, human_id=args.player,
                      seed=args.seed, frame_limit=args.frame_limit, speed=args.speed, screenshot=args.screenshot)
    except (ConfigError, CheckpointError, DisplayError) as e:
        return _fail(str(e))
    print(format_standings(result))
    if args.screenshot:
        print(f'screenshot: {args.screenshot}')
    return 0


def ding_main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        description="Train our env and policy with DI-engine's own pipelines: 'serial' is "
        "ding.entry.serial_pipeline_onpolicy, 'middleware' DI-engine 0.5's ding.framework task "
        '(pipeline/ding_pipelines.py says what each does differently; gobigger-train stays the default). '
        "A config of DI-engine's stock PPO (policy type 'ppo': config/ding_mappo_config.py, ding_ppo_config.py) "
        'trains that on our env instead (pipeline/ding_baseline.py).'
    )
    parser.add_argument('--pipeline', choices=('serial', 'middleware'), default='serial',
                        help="DI-engine's pipeline (default: serial)")
    parser.add_argument('--config', default=BOTS_CONFIG,
                        help='Python file defining main_config (and create_config); default: '
                        'config/gobigger_ppo_vs_bots_config.py')
    parser.add_argument('--seed', type=int, default=0, help='seed of the run (default 0)')
    parser.add_argument('--max-env-step', type=int, default=None,
                        help="stop after this many env steps (default: the config's max_env_step)")
    parser.add_argument('--set', action='append', default=[], metavar='KEY=VALUE',
                        help='override a config key by its dotted path (repeatable)')
    parser.add_argument('--resume', action='store_true',
                        help="DI-engine's stock PPO (a config of policy type 'ppo', e.g. config/ding_mappo_config.py): "
                        "go on from the latest checkpoint in the config's exp_name/ckpt")
    args = parser.parse_args(argv)
    if args.pipeline == 'middleware':  # before anything imports protobuf (see pipeline/ding_pipelines.py)
        os.environ.setdefault('PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION', 'python')
    _setup_output()

    from .config import ConfigError, apply_overrides, compile_config, load_config_file
    try:
        main_config, create_config = load_config_file(args.config)
        from .pipeline.ding_baseline import is_stock
        if is_stock(create_config):
            return _ding_stock(args, main_config, create_config)
        if args.resume:
            return _fail(f"--resume is for DI-engine's stock PPO (policy type 'ppo'); {args.config} runs ours: "
                         'resume it with gobigger-train --resume CKPT')
        main_config = apply_overrides(main_config, args.set)
        cfg, _ = compile_config(main_config, create_config)  # ours checks every key; DI-engine's ignores typos
    except ConfigError as e:
        return _fail(str(e))
    from .envs.opponents import POLICY_OPPONENTS
    if cfg.env.opponent in POLICY_OPPONENTS:
        return _fail(f"env.opponent {cfg.env.opponent!r}: DI-engine's pipelines collect one action per env, so their "
                     "games are against the bots (env.opponent 'bot'); self-play and the league run with "
                     'gobigger-train')
    max_env_step = args.max_env_step if args.max_env_step is not None else cfg.max_env_step or int(1e10)
    from .pipeline.ding_pipelines import middleware_pipeline, serial_onpolicy
    if args.pipeline == 'serial':
        serial_onpolicy(main_config, create_config, seed=args.seed, max_env_step=max_env_step)
    else:
        outputs = middleware_pipeline(main_config, create_config, seed=args.seed, max_env_step=max_env_step)
        print('total_loss by iteration: ' + ' '.join(f'{o["total_loss"]:.4g}' for o in outputs))
    print(f'checkpoints: {os.path.join(cfg.exp_name, "ckpt")}')
    return 0


def _ding_stock(args: argparse.Namespace, main_config, create_config) -> int:
    """gobigger-ding with a config of DI-engine's stock PPO: its serial_pipeline_onpolicy, as it is."""
    from .config import ConfigError
    from .pipeline.ding_baseline import apply_stock_overrides, stock_configs, train_stock
    if args.pipeline != 'serial':
        return _fail(f"--pipeline {args.pipeline}: {args.config} is DI-engine's stock PPO, run by its serial pipeline "
                     '(--pipeline serial)')
    try:
        main_config = apply_stock_overrides(main_config, args.set)
        cfg, _ = stock_configs(main_config, create_config)  # DI-engine's own compile_config ignores typos
    except ConfigError as e:
        return _fail(str(e))
    max_env_step = args.max_env_step if args.max_env_step is not None else cfg.get('max_env_step') or int(1e10)
    checkpoint = train_stock(main_config, create_config, seed=args.seed, max_env_step=max_env_step,
                             resume=args.resume)
    print(f'checkpoints: {os.path.join(cfg.exp_name, "ckpt")} (latest: {checkpoint})')
    return 0


def _videos_since(folder: Optional[str], start: float) -> List[str]:
    """The mp4 files written in ``folder`` since ``start`` (a rerun overwrites the same games' files)."""
    if folder is None or not os.path.isdir(folder):
        return []
    paths = sorted(os.path.join(folder, name) for name in os.listdir(folder) if name.endswith('.mp4'))
    return [p for p in paths if os.path.getmtime(p) >= start]
