"""A workload trace: gangs that arrive at given times and run for given durations.

A :class:`Trace` is a list of :class:`TraceJob` sorted by arrival (ties keep the file's order).
Each job is an ordinary :class:`~toposolve.core.instance.Job` (tasks, partitions, SubGroups,
network topology, priority, queue) with no running pods; its ``creation_index`` is its position
in the trace, so engines order equal-priority jobs by arrival as Volcano orders them by creation
time. Readers live in :mod:`.native_trace` (YAML/JSON), :mod:`.csv_trace` (flat CSV) and
:mod:`.openb` (the Alibaba openb trace); :mod:`.synthetic` draws one.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from toposolve.core.instance import Job, PriorityClass, Queue

_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|h|d)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


def parse_duration(value: object) -> float:
    """Seconds of ``value``: a number of seconds, or text such as ``"90"``, ``"10s"``, ``"2h"``.

    Raises ValueError for anything else (negative, NaN, infinite, unknown unit).
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a duration, got {value!r}")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str) and (m := _DURATION.match(value)):
        seconds = float(m[1]) * _UNIT_SECONDS[m[2]]
    else:
        raise ValueError(
            f"expected a duration (seconds, or a number with ms/s/m/h/d), got {value!r}")
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"expected a finite duration ≥ 0, got {value!r}")
    return seconds


@dataclass
class TraceJob:
    """One gang of the trace: when it arrives and how long it runs once started."""

    job: Job
    arrival: float  # seconds from the trace's start
    duration: float | None  # seconds of running; None = runs until the replay ends

    @property
    def key(self) -> str:
        return self.job.key


@dataclass
class Trace:
    """Jobs in arrival order, where they came from, and the queues and priority classes the
    trace declares (added to the cluster's; the cluster's own definitions win)."""

    jobs: list[TraceJob] = field(default_factory=list)
    source: str = "<trace>"
    queues: list[Queue] = field(default_factory=list)
    priority_classes: list[PriorityClass] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.jobs)

    def sorted(self) -> Trace:
        """The jobs ordered by arrival (stable), each job's creation index = its position."""
        ordered = sorted(self.jobs, key=lambda tj: tj.arrival)  # stable: ties keep file order
        for position, tj in enumerate(ordered):
            tj.job.creation_index = position
        return Trace(ordered, self.source, self.queues, self.priority_classes)

    def check_unique(self) -> None:
        """Raise InputError naming the first duplicated job key."""
        from toposolve.core.errors import InputError

        seen: set[str] = set()
        for tj in self.jobs:
            if tj.key in seen:
                raise InputError(f"duplicate job {tj.key!r}", file=self.source, obj=f"Job/{tj.key}",
                                 field="name")
            seen.add(tj.key)
