"""The flat CSV trace: one gang per line, one task of identical pods.

Header (columns in any order; only ``name``, ``arrival`` and ``replicas`` are required)::

    name,arrival,duration,replicas,min_available,gpu,cpu,memory,priority_class,queue,
    topology,tier,partition_size,partition_tier

* ``arrival``, ``duration``: seconds or with a unit (``2h``); empty duration = runs to the end.
* ``gpu``, ``cpu``, ``memory``: per-pod requests as Kubernetes quantities (``8``, ``500m``,
  ``64Gi``); ``gpu`` is ``nvidia.com/gpu``.
* ``topology``: ``hard`` or ``soft`` (empty: none), at tier ``tier`` (the job's
  ``highestTierAllowed``).
* ``partition_size``: pods per partition; the partitions are hard at ``partition_tier``.

Each line becomes the native trace entry it stands for and is read by the native reader, so the
rules (and the one-line errors, which name the job and the field) are the same.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from toposolve.core.errors import InputError
from toposolve.formats.native.reader import API_VERSION
from toposolve.formats.trace.model import Trace
from toposolve.formats.trace.native import KIND as TRACE_KIND
from toposolve.formats.trace.native import load_trace_documents

COLUMNS = ("name", "arrival", "duration", "replicas", "min_available", "gpu", "cpu", "memory",
           "priority_class", "queue", "topology", "tier", "partition_size", "partition_tier")
REQUIRED = ("name", "arrival", "replicas")


def _integer(text: str, line: int, column: str, source: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise InputError(f"expected an integer, got {text!r}", file=source,
                         field=f"line {line}: {column}") from None


def _entry(row: dict[str, str], line: int, source: str) -> dict[str, Any]:
    def cell(column: str) -> str:
        return (row.get(column) or "").strip()

    requests = {res: cell(col)
                for col, res in (("gpu", "nvidia.com/gpu"), ("cpu", "cpu"), ("memory", "memory"))
                if cell(col)}
    task: dict[str, Any] = {"name": "worker",
                            "replicas": _integer(cell("replicas"), line, "replicas", source),
                            "requests": requests}
    entry: dict[str, Any] = {"name": cell("name"), "arrival": cell("arrival"), "tasks": [task]}
    for column, key in (("duration", "duration"), ("priority_class", "priorityClass"),
                        ("queue", "queue")):
        if cell(column):
            entry[key] = cell(column)
    if cell("min_available"):
        entry["minAvailable"] = _integer(cell("min_available"), line, "min_available", source)
    if cell("topology"):
        spec: dict[str, Any] = {"mode": cell("topology")}
        if cell("tier"):
            spec["highestTierAllowed"] = _integer(cell("tier"), line, "tier", source)
        entry["networkTopology"] = spec
    if cell("partition_size"):
        partition: dict[str, Any] = {
            "partitionSize": _integer(cell("partition_size"), line, "partition_size", source)}
        if cell("partition_tier"):
            tier = _integer(cell("partition_tier"), line, "partition_tier", source)
            partition["networkTopology"] = {"mode": "hard", "highestTierAllowed": tier}
        task["partition"] = partition
    return entry


def load_csv_trace(path: str | Path) -> Trace:
    """Read a CSV trace; InputError names the line (or the job) and the column."""
    source = str(path)
    try:
        with Path(path).open(newline="") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            unknown = [c for c in header if c not in COLUMNS]
            if unknown:
                raise InputError(f"unknown column {unknown[0]!r} (columns: {', '.join(COLUMNS)})",
                                 file=source, field="header")
            missing = [c for c in REQUIRED if c not in header]
            if missing:
                raise InputError(f"missing column {missing[0]!r}", file=source, field="header")
            entries = [_entry(row, line, source) for line, row in enumerate(reader, start=2)]
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=source) from None
    return load_trace_documents([{"apiVersion": API_VERSION, "kind": TRACE_KIND, "jobs": entries}],
                                source)
