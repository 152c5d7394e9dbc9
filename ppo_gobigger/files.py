"""Files written whole or not at all.

Every writer fills a temporary file in the target's folder and renames it over the target (os.replace is atomic on one
filesystem), so a reader (a run resuming after a crash, a viewer refreshing a figure, a second benchmark process) sees
the old file or the new one, never half of either. Checkpoints, figures, league pools and benchmark results all go
through ``replaced_atomically``.
"""
import json
import os
import tempfile
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional


def _new_file_mode() -> int:
    """The mode open() gives a new file here: 0o666 less the process umask (which can only be read by setting it)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


FILE_MODE = _new_file_mode()  # read once, at import


@contextmanager
def replaced_atomically(path: str) -> Iterator[str]:
    """Yield a temporary path beside ``path`` (same folder, created if missing, same extension) to write to.

    When the block ends normally the temporary file is renamed over ``path``; when it raises, it is removed and
    ``path`` is left as it was. The file gets the usual permissions (umask), not mkstemp's 0600.
    """
    folder, name = os.path.split(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix='.tmp_', suffix=f'_{name}')  # ends like path: savefig reads it
    os.close(fd)
    try:
        os.chmod(tmp, FILE_MODE)
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def write_json(path: str, data: Any, indent: int = 2, default: Optional[Callable[[Any], Any]] = None) -> None:
    """``json.dump`` of ``data`` to ``path``, atomically (see ``replaced_atomically``)."""
    with replaced_atomically(path) as tmp:
        with open(tmp, 'w') as f:
            json.dump(data, f, indent=indent, default=default)
