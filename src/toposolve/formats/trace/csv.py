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

The file is read row by row (:func:`.rows.read_rows`). The first line of each *shape* (its cells
other than ``name``, ``arrival`` and ``duration``) becomes the native trace entry it stands for
and is read by the native reader, so the rules and the one-line errors are the same (they name
the line, the job and the field); later lines of that shape copy its job under their own name.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from toposolve.core.errors import InputError
from toposolve.core.instance import Job
from toposolve.formats.k8s.fields import Field
from toposolve.formats.trace.bulk import renamed
from toposolve.formats.trace.model import Trace, TraceJob, parse_duration
from toposolve.formats.trace.native import read_trace_entry
from toposolve.formats.trace.rows import gc_paused, name_problem, read_rows, shown

COLUMNS = ("name", "arrival", "duration", "replicas", "min_available", "gpu", "cpu", "memory",
           "priority_class", "queue", "topology", "tier", "partition_size", "partition_tier")
REQUIRED = ("name", "arrival", "replicas")
SHAPE = COLUMNS[3:]  # what a job of the line is, apart from its name and times

Cell = Callable[[str], str]


def _integer(text: str, line: int, column: str, source: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise InputError(f"expected an integer, got {text[:40]!r}", file=source,
                         field=f"line {line}: {column}") from None


def _entry(cell: Cell, line: int, source: str) -> dict[str, Any]:
    """The native trace entry of one line, without its times."""
    requests = {res: cell(col)
                for col, res in (("gpu", "nvidia.com/gpu"), ("cpu", "cpu"), ("memory", "memory"))
                if cell(col)}
    task: dict[str, Any] = {"name": "worker",
                            "replicas": _integer(cell("replicas"), line, "replicas", source),
                            "requests": requests}
    entry: dict[str, Any] = {"name": cell("name"), "tasks": [task]}
    for column, key in (("priority_class", "priorityClass"), ("queue", "queue")):
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


def _header(cells: list[str], source: str) -> list[str]:
    header = [c.strip() for c in cells]
    unknown = [c for c in header if c not in COLUMNS]
    if unknown:
        raise InputError(f"unknown column {unknown[0][:40]!r} (columns: {', '.join(COLUMNS)})",
                         file=source, field="header")
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise InputError(f"missing column {missing[0]!r}", file=source, field="header")
    twice = [c for k, c in enumerate(header) if c in header[:k]]
    if twice:
        raise InputError(f"column {twice[0]!r} appears twice", file=source, field="header")
    return header


class _Lines:
    """Turns the lines after the header into trace jobs (one reader call per shape)."""

    def __init__(self, header: list[str], source: str) -> None:
        self.source = source
        self.width = len(header)
        self.columns = {c: k for k, c in enumerate(header)}
        self.shapes: dict[tuple[str, ...], Job] = {}
        self.lines: dict[str, int] = {}  # job name -> its line

    def job(self, line: int, cells: list[str]) -> TraceJob:
        if any(c.strip() for c in cells[self.width:]):
            raise InputError(f"{len(cells)} cells, the header has {self.width}",
                             file=self.source, field=f"line {line}")

        def cell(column: str) -> str:
            k = self.columns.get(column)
            return cells[k].strip() if k is not None and k < len(cells) else ""

        name = cell("name")
        obj = f"Job/default/{shown(name)}"
        problem = name_problem(name)
        if problem is None and name in self.lines:
            problem = f"duplicate job name {name!r} (first on line {self.lines[name]})"
        if problem:
            raise InputError(problem, file=self.source, obj=obj, field=f"line {line}: name")
        self.lines[name] = line
        times = [self._seconds(cell(column), line, column, obj) for column in ("arrival",
                                                                              "duration")]
        shape = tuple(cell(column) for column in SHAPE)
        job = self.shapes.get(shape)
        if job is None:
            job = self.shapes[shape] = self._read(_entry(cell, line, self.source), line)
        else:
            job = renamed(job, name)
        return TraceJob(job, times[0] or 0.0, times[1])

    def _seconds(self, text: str, line: int, column: str, obj: str) -> float | None:
        if not text and column == "duration":
            return None  # runs to the end
        try:
            return parse_duration(text)
        except ValueError as exc:
            raise InputError(str(exc), file=self.source, obj=obj,
                             field=f"line {line}: {column}") from None

    def _read(self, entry: dict[str, Any], line: int) -> Job:
        try:
            (trace_job,) = read_trace_entry(Field(entry, "", self.source, "CSV line"), 0)
        except InputError as err:
            where = f"line {line}: {err.field}" if err.field else f"line {line}"
            raise InputError(err.message, file=self.source, obj=err.obj, field=where) from None
        return trace_job.job


def load_csv_trace(path: str | Path) -> Trace:
    """Read a CSV trace; InputError names the file, the line (and job) and the column."""
    source = str(path)
    rows = read_rows(path, source)
    _, cells = next(rows, (1, []))
    lines = _Lines(_header(cells, source), source)
    with gc_paused():
        return Trace([lines.job(line, cells) for line, cells in rows], source).sorted()
