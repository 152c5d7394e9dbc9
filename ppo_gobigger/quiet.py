"""Other packages' import-time notices, silenced one by one, so that our own log lines are the first a user reads.

Each filter names the message it drops and where it comes from; anything else those packages say still shows.
    gym 0.25      "Gym has been unmaintained since 2022 ..." (printed to stderr by `import gym`, from gym_notices)
    treevalue     FutureWarning "`torch.utils._pytree._register_pytree_node` is deprecated" (at its import)
    DI-engine     root-logger warnings at the import of ding submodules: "... please install numba first"
                  (ding/utils/segment_tree.py), "Please install pyecharts first ..." (ding/utils/memory_helper.py),
                  "not found transformer ..." (ding/model/template/language_transformer.py)
    numexpr       INFO "NumExpr defaulting to N threads." (numexpr/utils.py, imported by DI-engine's dependencies)
    pygame        "Hello from the pygame community" on stdout when GoBigger imports it (pygame's own switch)
The entry points (cli.py, config_reference.py, benchmarks/) call ``silence_third_party_noise()`` before anything
imports those packages; env processes forked later inherit it, and Ray actor processes run it first
(pipeline/distributed/ray_common.py).

The entry points that learn also call ``passive_openmp_waits()`` there, for the same reason: torch's OpenMP runtime
reads its settings once, when torch is imported.
"""
import logging
import os
import re
import sys
import warnings

TREEVALUE_WARNING = r'`torch\.utils\._pytree\._register_pytree_node` is deprecated'
DING_WARNINGS = re.compile(
    r'If you want to use numba to speed up segment tree, please install numba first'
    r"|Please install pyecharts first, you can install it by running 'pip install pyecharts'"
    r'|not found transformer, please install it using: pip install transformers'
)
NUMEXPR_INFO = re.compile(r'NumExpr defaulting to \d+ threads\.')

_silenced = False


class _DropMessages(logging.Filter):
    """Drops the records of one logger whose whole message matches ``pattern``."""

    def __init__(self, pattern: 're.Pattern') -> None:
        super().__init__()
        self._pattern = pattern

    def filter(self, record: logging.LogRecord) -> bool:
        return not self._pattern.fullmatch(record.getMessage())


def silence_third_party_noise() -> None:
    """Install the filters of the module docstring (once; later calls do nothing)."""
    global _silenced
    if _silenced:
        return
    _silenced = True
    os.environ.setdefault('PYGAME_HIDE_SUPPORT_PROMPT', '1')
    warnings.filterwarnings('ignore', message=TREEVALUE_WARNING, category=FutureWarning, module=r'treevalue\.')
    logging.getLogger().addFilter(_DropMessages(DING_WARNINGS))  # ding logs them on the root logger
    logging.getLogger('numexpr.utils').addFilter(_DropMessages(NUMEXPR_INFO))
    _drop_gym_notice()


def passive_openmp_waits() -> None:
    """OMP_WAIT_POLICY=PASSIVE unless already set; only a call before ``import torch`` takes effect.

    torch's threads spin at the end of every parallel region by default. On cores shared with other processes (the
    env processes, other runs: a 2-core machine) a spinning thread holds the core its partner needs: a PPO
    iteration of the default config learnt on 2 threads in 33-44 s against 10-11 s with passive waits (8-10 s on
    one thread), load average ~10, and the same losses bit for bit (the thread count, not the waiting, decides
    how the work is split)."""
    os.environ.setdefault('OMP_WAIT_POLICY', 'PASSIVE')


def _drop_gym_notice() -> None:
    """`import gym` prints gym_notices' notice for its version; take out that one notice before gym is imported."""
    if 'gym' in sys.modules:
        return
    try:
        from importlib.metadata import version

        from gym_notices import notices
        gym_version = version('gym')
    except Exception:  # no gym or no gym_notices installed: nothing will be printed
        return
    if 'Gym has been unmaintained' in notices.notices.get(gym_version, ''):
        del notices.notices[gym_version]
