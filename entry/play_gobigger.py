"""Play against a checkpoint, or watch two play: `python entry/play_gobigger.py --ckpt PATH` / `--watch A --vs B`."""
import sys

from ppo_gobigger.cli import play_main

if __name__ == '__main__':
    sys.exit(play_main())
