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


def stages_line(status: str, stages: list[dict[str, Any]],
                plan_round: int | None = None) -> str | None:
    """The final line: the plan's status, then each stage's status and gap (``stats["stages"]``).

    When the exact model was refined, only the stages of the round whose plan came back
    (``plan_round``) are shown, labelled with it; without one (the warm start or a repacking
    came back), those of the last round."""
    if not stages:
        return None
    rounds = sorted({record.get("round", 0) for record in stages})
    label = ""
    if len(rounds) > 1:
        shown = plan_round if plan_round in rounds else rounds[-1]
        stages = [record for record in stages if record.get("round", 0) == shown]
        label = f"round {shown} of {len(rounds)}: "
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
    return f"{status}: {label}" + ", ".join(parts)


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
