"""Trace CSV files read row by row, and the name rule of trace jobs.

Both CSV readers (the native CSV trace and openb pod lists) stream their file through
:func:`read_rows`: a cell beyond ``MAX_CSV_CELL``, text that is not UTF-8 or more than
``MAX_TRACE_JOBS`` rows is a one-line :class:`InputError` naming the file (and the line).
"""

from __future__ import annotations

import csv
import gc
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from toposolve.core.errors import InputError
from toposolve.core.label_levels import LABEL_NAME
from toposolve.core.limits import MAX_CSV_CELL, MAX_NAME_LENGTH, MAX_TRACE_JOBS

_NAME = re.compile(LABEL_NAME)


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a trace job, or None.

    A name is 1 to ``MAX_NAME_LENGTH`` letters, digits, ``-``, ``_`` or ``.``, a letter or digit
    at both ends (Kubernetes' name characters, upper case and ``_`` tolerated).
    """
    if not name:
        return "a name must not be empty"
    if len(name) > MAX_NAME_LENGTH:
        return f"a name of {len(name):,} characters, longer than the limit {MAX_NAME_LENGTH}"
    if not _NAME.fullmatch(name):
        return (f"name {name[:60]!r}: a name has letters, digits, '-', '_' or '.', "
                "a letter or digit at both ends")
    return None


def shown(name: str) -> str:
    """``name`` as an error message shows it: one line (escaped if need be), 60 characters."""
    return (name if name.isprintable() else repr(name)[1:-1])[:60]


def read_rows(path: str | Path, source: str) -> Iterator[tuple[int, list[str]]]:
    """The non-blank records of a CSV file, header first, each with the line it starts on.

    Parameters
    ----------
    path, source
        The file, and its name in messages.

    Yields
    ------
    tuple of int and list of str
        The record's first line number (1 for the header) and its cells.

    Raises
    ------
    InputError
        Unreadable file, not UTF-8, a malformed record, or more than ``MAX_TRACE_JOBS`` rows.
    """
    line = 1
    try:
        # a record takes at least one line: counting lines bounds the rows before parsing any
        if _lines_beyond(Path(path), MAX_TRACE_JOBS + 1):
            raise InputError(f"more than {MAX_TRACE_JOBS:,} rows (the limit)", file=source)
        # bytes that are no UTF-8 become lone surrogates, found below with their line
        with Path(path).open(newline="", encoding="utf-8-sig", errors="surrogateescape") as f:
            reader = csv.reader(f)
            while True:
                try:
                    cells = next(reader, None)
                except csv.Error as exc:
                    raise InputError(_csv_problem(exc), file=source, field=f"line {line}") from None
                if cells is None:
                    return
                if cells and not all(c.isascii() for c in cells) and _undecodable(cells):
                    raise InputError("not UTF-8 text", file=source, field=f"line {line}")
                if cells:
                    yield line, cells
                line = reader.line_num + 1
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=source) from None


def _lines_beyond(path: Path, limit: int) -> bool:
    """Whether the file has more than ``limit`` lines (read until it is known)."""
    lines, last = 0, b"\n"
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
            if lines > limit:
                return True
    return lines + (last != b"\n") > limit  # an unterminated last line counts too


def _undecodable(cells: list[str]) -> bool:
    try:
        "".join(cells).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _csv_problem(exc: csv.Error) -> str:
    if "field limit" in str(exc):
        return f"a cell longer than {MAX_CSV_CELL:,} characters (the limit)"
    return f"malformed CSV ({exc})"


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a reader builds many small acyclic objects.

    Its full collections walk the growing heap again and again: half the time of reading a
    200,000-line trace.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
