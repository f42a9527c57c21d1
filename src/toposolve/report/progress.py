"""Progress a person can follow on a terminal: the lines ``toposolve solve`` prints."""

from __future__ import annotations

import math
from typing import Any

from toposolve.core.status import SolveStatus
from toposolve.engines.contract import ProgressEvent
from toposolve.engines.cpsat.solve.progress import format_gap


def cut_short_line(cut_short: list[str]) -> str | None:
    """One line saying what the time limit cut short, or None."""
    if not cut_short:
        return None
    return "time limit: cut short: " + "; ".join(cut_short)


def stages_line(status: str, stages: list[dict[str, Any]]) -> str | None:
    """The final line: the plan's status, then each stage's status and gap (``stats["stages"]``)."""
    if not stages:
        return None
    parts = []
    for record in stages:
        gap = record.get("gap")
        text = f"{record['stage']} {record['status']}"
        if record.get("kept_incumbent"):
            text += " (incumbent kept)"
        if gap is not None and record["status"] != SolveStatus.OPTIMAL:
            text += f" gap {format_gap(gap)}"
        elif gap is None and record["status"] != SolveStatus.OPTIMAL:
            text += " (no bound)"
        parts.append(text)
    return f"{status}: " + ", ".join(parts)


class LinePrinter:
    """A progress callback printing each event's line to ``stream``; improving solutions at
    most once a second (stage ends and heartbeats always)."""

    def __init__(self, stream: Any, min_gap: float = 1.0) -> None:
        self.stream = stream
        self.min_gap = min_gap
        self.last = -math.inf

    def __call__(self, event: ProgressEvent) -> None:
        if event.kind == "solution" and event.elapsed - self.last < self.min_gap:
            return
        self.last = event.elapsed
        text = (
            event.text
            or (f"{event.stage}: objective {event.incumbent:.6g} bound {event.bound:.6g} at "
                f"{event.elapsed:.2f}s")
        )
        print(text, file=self.stream, flush=True)
