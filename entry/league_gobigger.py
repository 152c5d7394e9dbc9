"""Rate checkpoints and the bots by TrueSkill: `python entry/league_gobigger.py --run-dir exp/NAME/ckpt --random`."""
import sys

from ppo_gobigger.cli import league_main

if __name__ == '__main__':
    sys.exit(league_main())
