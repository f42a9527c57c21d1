"""Where the bundled profiles and instances live, and how every output file is written.

``_data/models`` and ``_data/instances`` are symlinks to the repository's ``models/`` and
``instances/`` in a checkout, and copies of them in an installed wheel, so one path works in both.
Every output file (plans, records, exports, instances, figures) is written through
:func:`replacing` or :func:`write_file`: all or nothing, a full disk never leaves half a file.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any

from toposolve.core.errors import InputError

DATA = Path(__file__).resolve().parents[1] / "_data"
MODELS_DIR = DATA / "models"
INSTANCES_DIR = DATA / "instances"
DEFAULT_INSTANCE = INSTANCES_DIR / "default.yaml"
TRACE_DIR = INSTANCES_DIR / "data"


def _new_file_mode() -> int:
    """The permissions ``open(path, "w")`` would give a new file (0o666 less the umask)."""
    umask = os.umask(0o022)  # reading the umask means setting it; put it straight back
    os.umask(umask)
    return 0o666 & ~umask


@contextmanager
def replacing(path: str | Path, mode: str = "w", **open_kwargs: Any) -> Iterator[IO[Any]]:
    """Write ``path`` all or nothing: yield a temporary file beside it, opened with ``mode``.

    On success the file is flushed, synced and moved onto ``path`` with :func:`os.replace`;
    on any error it is removed and an existing ``path`` is left as it was. A writer that
    wants a file name (matplotlib, OR-Tools) writes to the yielded file's ``name``, which
    ends in ``path``'s suffix. A target that exists and is no regular file (``/dev/null``, a
    pipe) is written directly: there is nothing to replace. ``OSError`` becomes one
    :class:`InputError` naming ``path``.

    Parameters
    ----------
    path
        The file to write; a symbolic link is followed, so the link stays a link.
    mode, **open_kwargs
        As :func:`open` (``"w"``, ``"wb"``, ``newline=""``, ...); text defaults to UTF-8.
    """
    if "b" not in mode:
        open_kwargs.setdefault("encoding", "utf-8")
    try:
        if _is_special(path):
            with open(path, mode, **open_kwargs) as out:
                yield out
            return
        target = Path(os.path.realpath(path))
        keep = stat.S_IMODE(target.stat().st_mode) if target.exists() else _new_file_mode()
        temp = tempfile.NamedTemporaryFile(mode, dir=target.parent, delete=False,
                                           prefix=f".{target.stem}.", suffix=f".tmp{target.suffix}",
                                           **open_kwargs)
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    IN_FLIGHT.add(temp.name)
    try:
        with temp:
            yield temp
            temp.flush()
            os.fsync(temp.fileno())
        os.chmod(temp.name, keep)
        os.replace(temp.name, target)
    except BaseException as exc:
        with suppress(OSError):
            os.unlink(temp.name)
        if isinstance(exc, OSError):
            raise _cannot_write(path, exc) from None
        raise
    finally:
        IN_FLIGHT.discard(temp.name)


IN_FLIGHT: set[str] = set()
"""Temporary files :func:`replacing` is writing now (removed by :func:`remove_in_flight`)."""


def remove_in_flight() -> None:
    """Remove the temporary files of writes still in progress: a process stopped by a signal
    leaves neither a partial target nor a stray temporary file."""
    for name in list(IN_FLIGHT):
        with suppress(OSError):
            os.unlink(name)
        IN_FLIGHT.discard(name)


def write_file(path: str | Path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` all or nothing, see :func:`replacing`."""
    with replacing(path, "wb" if isinstance(data, bytes) else "w") as out:
        out.write(data)


def _is_special(path: str | Path) -> bool:
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:  # missing (or unreadable: then opening it says why)
        return False


def _cannot_write(path: str | Path, exc: OSError) -> InputError:
    return InputError(f"cannot write: {exc.strerror or exc}", file=str(path))
