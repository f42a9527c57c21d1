"""Which reader a trace file needs: native YAML/JSON, native CSV, or an openb pod list."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toposolve.core.errors import InputError
from toposolve.formats.load import read_file_documents
from toposolve.formats.trace.csv import load_csv_trace
from toposolve.formats.trace.model import Trace
from toposolve.formats.trace.native import load_trace_documents

OPENB_COLUMNS = ("gpu_milli", "creation_time")


def load_trace_file(path: str | Path, **openb_options: Any) -> Trace:
    """Read ``path``; a CSV whose header has ``gpu_milli`` and ``creation_time`` is an openb
    pod list (read with ``openb_options``), any other CSV the native CSV format."""
    path = Path(path)
    if not path.exists():
        raise InputError("no such file", file=str(path))
    if path.suffix.lower() == ".csv":
        # the header's first 64 KiB say which format; decoding errors are the reader's to report
        with path.open(newline="", encoding="utf-8", errors="replace") as f:
            header = f.readline(1 << 16)
        if all(column in header for column in OPENB_COLUMNS):
            from toposolve.formats.trace.openb import openb_trace

            return openb_trace(path, **openb_options)
        if openb_options:
            raise InputError(f"options {sorted(openb_options)} apply to openb traces only",
                             file=str(path))
        return load_csv_trace(path)
    if openb_options:
        raise InputError(f"options {sorted(openb_options)} apply to openb traces only",
                         file=str(path))
    return load_trace_documents(read_file_documents(path), str(path))
