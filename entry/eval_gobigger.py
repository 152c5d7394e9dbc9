"""Evaluate a checkpoint against the bots: `python entry/eval_gobigger.py --ckpt PATH [--episodes N]`."""
import sys

from ppo_gobigger.cli import eval_main

if __name__ == '__main__':
    sys.exit(eval_main())
