"""Target 2's recipe for one run seed: `python benchmarks/past_teacher.py --run K [--prefix TAG] [--dry-run]`.

PPO past its teacher (issue 12's target 2: >= 0.95 wins against the level-3 bots, a mean score ratio above the
seed's own kickstart on the same final games, >= 0.8 wins against the level-2 bots), as the README's results give it:
five benchmarks/learning.py runs, each on what the one before published, at width 128 (policy.model.hidden_size):

1. self-play: the kickstart (level-2 bots imitated for 36,000 env steps), then self-play without distillation to
   360,000 env steps (`log_score` with team spirit 0.5, lr 1e-3, every team's steps learnt from);
2. the falling-weight phase: 108,000 env steps against the level-3 bots from the self-play agent, its learner
   carried over, distilling the kickstart at a weight falling from 0.2 to 0 over 72,000 env steps; its final rows;
3. the level-2 phase: 108,000 env steps against the level-2 bots from the same self-play agent, learner carried over;
4. the same phase 432,000 env steps on (540,000 in all);
5. the average of the falling-weight and the level-2 phases' weights, the falling-weight phase's share chosen among
   0.65 and 0.8 on 50 validation games, then the final rows against the level-3 and the level-2 bots.

Each step is the command docs/results.md gives, with --resume: run the same command again after a stop and it goes
on where the steps stopped (a finished step does not train again). Tags are PREFIX, PREFIX_vs_bots_carry_distil_fall,
PREFIX_vs_level2_carry, PREFIX_vs_level2_carry_long and PREFIX_carry_long_average_select (the results:
benchmarks/results/learning_<tag>.json); the default PREFIX is the published one, whose run seeds 0-2 are committed,
so give a prefix of your own to train the recipe afresh. One run seed took 200-211 min of collection and learning on
this project's 2 cores, and about 50 min of validation and final games. Ctrl-C (or kill -INT of the learning.py
process) stops the step that is running with its state saved, and this script with it. benchmarks/past_teacher_curve.py
draws the steps' curves.
"""
import argparse
import os
import shlex
import signal
import subprocess
import sys
from typing import List, NamedTuple, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
LEARNING = os.path.join(HERE, 'learning.py')
PUBLISHED_PREFIX = 'st_t2p2_kickstart_selfplay_nokl_h128'
PRESET = 'st_t2p2'
SEEDS = 3
CANDIDATES = ('0.65', '0.8')  # the falling-weight phase's share in the average

WIDTH = 'policy.model.hidden_size=128'  # the published weights' shape: the average must be built at this width too
WIDE = ['policy.model.actor_head=directional', WIDTH]
PPO = ['env.reward=log_score', 'env.team_spirit=0.5', 'policy.learn.learning_rate=1e-3', 'policy.learn.target_kl=None']
CARRIED = ['policy.load_learn_state=True']  # a phase goes on with the optimizer and value normalisation of its source


class Step(NamedTuple):
    name: str
    tag: str
    argv: List[str]  # benchmarks/learning.py's arguments


def prefix_problem(prefix: str) -> Optional[str]:
    """What is wrong with a tags' prefix, or None: it starts with the preset and holds only letters, digits and _."""
    if prefix.startswith(f'{PRESET}_') and prefix.replace('_', '').isalnum():
        return None
    return f'--prefix must start with {PRESET}_ and hold only letters, digits and _, got {prefix!r}'


def sets(*overrides: str) -> List[str]:
    return [arg for item in overrides for arg in ('--set', item)]


def recipe(run: int, prefix: str = PUBLISHED_PREFIX) -> List[Step]:
    """The five benchmarks/learning.py commands of run seed `run`, in order."""
    common = ['--config', 'config/gobigger_ppo_kickstart_config.py']
    per_run = ['--seeds', str(SEEDS), '--run', str(run)]
    phase = [*WIDE, 'pretrain.env_steps=0', *PPO, *CARRIED]  # the kickstart is the source's: none of its own

    def trained(env_steps: int) -> List[str]:
        return ['--env-steps', str(env_steps), '--eval-every', '36000', '--eval-games', '8', '--final-games', '100',
                '--no-references']

    selfplay, fall = prefix, f'{prefix}_vs_bots_carry_distil_fall'
    level2, level2_long = f'{prefix}_vs_level2_carry', f'{prefix}_vs_level2_carry_long'
    average = f'{prefix}_carry_long_average_select'
    return [
        Step('self-play', selfplay, [
            *common, '--tag', selfplay,
            *sets(*WIDE, *PPO, 'policy.learn.kickstart_kl=0.0', 'env.opponent=self', 'league.all_teams=True'),
            *per_run, *trained(360_000), '--only-train', '--resume']),
        Step('the falling-weight phase', fall, [
            *common, '--tag', fall, '--from-runs', selfplay, '--distil-kickstart',
            *sets(*phase, 'policy.learn.kickstart_kl=0.2', 'policy.learn.kickstart_kl_env_steps=72000'),
            *per_run, *trained(108_000), '--vs-level', '2', '--resume']),
        Step('the level-2 phase', level2, [
            *common, '--tag', level2, '--from-runs', selfplay, *sets(*phase, 'env.bot_level=2'),
            *per_run, *trained(108_000), '--only-train', '--resume']),
        Step('the level-2 phase, 432,000 env steps on', level2_long, [
            *common, '--tag', level2_long, '--from-runs', level2, *sets(*phase, 'env.bot_level=2'),
            *per_run, *trained(432_000), '--vs-level', '3', '--only-train', '--resume']),
        Step('the average, its weight chosen on validation games', average, [
            *common, '--tag', average, '--average-runs', fall, level2_long, *sets(WIDTH),
            '--average-select', *CANDIDATES, '--validation-games', '50', *per_run, '--final-games', '100',
            '--no-references', '--vs-level', '2', '--resume']),
    ]


def run_to_the_end(command: List[str], cwd: str) -> int:
    """Run a step and wait for it, through a Ctrl-C too: the step saves its state on SIGINT and exits 130."""
    child = subprocess.Popen(command, cwd=cwd)
    # a function, not SIG_IGN, so that the step (a new program) starts with the default handling of SIGINT
    previous = signal.signal(signal.SIGINT, lambda signum, frame: None)
    try:
        return child.wait()
    finally:
        signal.signal(signal.SIGINT, previous)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--run', type=int, required=True, metavar='K',
                        help=f'the run seed (0 to {SEEDS - 1}): the seed of the kickstart, self-play and phases')
    parser.add_argument('--prefix', default=PUBLISHED_PREFIX,
                        help=f'the tags\' prefix (default: the published runs, {PUBLISHED_PREFIX}); it starts with '
                             f'the preset, {PRESET}_')
    parser.add_argument('--dry-run', action='store_true', help='print the commands and run none')
    args = parser.parse_args()
    if not 0 <= args.run < SEEDS:
        parser.error(f'--run must be a run seed from 0 to {SEEDS - 1}, got {args.run}')
    if prefix_problem(args.prefix):
        parser.error(prefix_problem(args.prefix))

    steps = recipe(args.run, args.prefix)
    root = os.path.dirname(HERE)
    for number, step in enumerate(steps, 1):
        command = [sys.executable, os.path.relpath(LEARNING, root), *step.argv]
        print(f'# step {number} of {len(steps)}: {step.name} ({step.tag}, run seed {args.run})', flush=True)
        print(shlex.join(command), flush=True)
        if args.dry_run:
            continue
        code = run_to_the_end(command, root)
        if code != 0:  # a stop (SIGINT: 130) or a failure: the same command goes on from here
            print(f'# step {number} ({step.name}) ended with exit status {code}; run the same command again to go '
                  f'on from it', file=sys.stderr, flush=True)
            raise SystemExit(code)


if __name__ == '__main__':
    main()
