"""Train with DI-engine's own pipelines: `python entry/ding_gobigger.py [--pipeline serial|middleware]`."""
import sys

from ppo_gobigger.cli import ding_main

if __name__ == '__main__':
    sys.exit(ding_main())
