"""Train a GoBigger team with multi-agent PPO: `python entry/train_gobigger.py [--config PATH] [--set KEY=VALUE ...]`."""
import sys

from ppo_gobigger.cli import train_main

if __name__ == '__main__':
    sys.exit(train_main())
