"""Progress a person can follow: stage values in user units and a line every few seconds.

:class:`StageReader` turns a stage's raw value into what it means — accelerators placed per
priority (decoded from the strict-dominance weights of :mod:`toposolve.policy.objective`), jobs
placed per priority, tiers of spread, leaf domains broken — and its gap. For ``placed`` and
``placed_jobs`` the gap is taken at the highest priority where incumbent and bound differ (a
gap over the weighted sum would read ~0 % with a thousand low-priority GPUs missing).

:class:`Reporter` sends :class:`~toposolve.engines.contract.ProgressEvent` s to the run's
progress callback: one per improving solution (``kind="solution"``), one when a stage ends
(``"stage"``), and a ``"status"`` heartbeat from a background thread whenever nothing was said
for ``interval`` seconds — through model building, hints, every stage, repacking and reasons.
Each event's ``text`` is the line to show.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any

from toposolve.core.problem import Problem
from toposolve.engines.contract import Progress, ProgressEvent
from toposolve.policy.objective import (
    accelerator_resources,
    dominance_weights,
    pending_level_units,
    unit_scale,
)

INTERVAL = 4.0  # seconds without a line before the heartbeat speaks (the promise is 5)
COUNTS = {  # stages that count something (never below 0), and what they count
    "spread": "tiers of spread", "fragmentation": "leaf domains broken",
    "broken_gangs": "gangs broken", "eviction_cost": "eviction cost",
    "evicted_pods": "pods evicted", "comm": "domain crossings",
    "dp_span": "DP span steps", "pp_span": "pipeline span steps",
    "edge_floor": "leaf edge floor ×2", "span_floor": "capped edge floor ×2",
    "gpu_fragmentation": "pod-weighted unusable milli-GPUs", "node_order": "node-order sum",
}


def count_bound(stage: str, bound: float | None) -> float | None:
    """``bound`` of stage ``stage``, never below 0 for a stage that counts something (CP-SAT's
    relaxation can say less)."""
    return max(bound, 0.0) if bound is not None and stage in COUNTS else bound


class StageReader:
    """Reads raw stage values of one problem in user units."""

    def __init__(self, problem: Problem) -> None:
        self.units = pending_level_units(problem)  # the most each level can place
        self.unit_weights = dominance_weights(self.units)
        self.jobs: dict[int, int] = {}
        for j in problem.pending_jobs:
            self.jobs[problem.jobs[j].priority] = self.jobs.get(problem.jobs[j].priority, 0) + 1
        self.job_weights = dominance_weights(self.jobs)
        acc = accelerator_resources(problem)
        names = " ".join(problem.resources[r].lower() for r in acc)
        self.unit = "GPUs" if "gpu" in names else ("NPUs" if "npu" in names
                                                   else ("accelerators" if acc else "pods"))
        if acc and unit_scale(problem) == 1000:
            self.unit = f"milli-{self.unit}"

    def read(self, label: str, value: float | None, bound: float | None) -> tuple[str,
                                                                                  float | None]:
        """``(text, gap)`` of a stage's incumbent and bound (either may be None)."""
        if label == "placed":
            return _levels(self.unit_weights, self.units, value, bound, f"{self.unit} placed")
        if label == "placed_jobs":
            return _levels(self.job_weights, self.jobs, value, bound, "jobs placed")
        if label.startswith("placed[priority="):
            priority = label[len("placed[priority="):-1]
            return _plain(value, bound, f"{self.unit} placed at priority {priority}")
        return _plain(value, count_bound(label, bound), COUNTS.get(label, label))


def _gap(value: float, bound: float) -> float:
    return abs(bound - value) / max(1.0, abs(value))


def _plain(value: float | None, bound: float | None, what: str) -> tuple[str, float | None]:
    if value is None:
        return f"{what}: no solution yet", None
    text = f"{_n(value)} {what}"
    if bound is None or not math.isfinite(bound):
        return text, None
    gap = _gap(value, bound)
    return f"{text}, bound {_n(bound)}, gap {format_gap(gap)}", gap


def _levels(weights: dict[int, int], most: dict[int, int], value: float | None,
            bound: float | None, what: str) -> tuple[str, float | None]:
    """Per-priority counts of a strict-dominance sum, and the gap at the first level where the
    bound exceeds the incumbent."""
    if value is None:
        return f"{what}: no solution yet", None
    mine = _decode(weights, most, value)
    parts = ", ".join(f"priority {p}: {_n(u)}" for p, u in mine.items())
    text = f"{_n(sum(mine.values()))} {what} ({parts})"
    if bound is None or not math.isfinite(bound):
        return text, None
    best = _decode(weights, most, math.floor(bound + 1e-6))
    for p, u in mine.items():
        if best[p] != u:
            gap = _gap(u, best[p])
            return f"{text}; priority {p} bound {_n(best[p])}, gap {format_gap(gap)}", gap
    return f"{text}; proven", 0.0


def _decode(weights: dict[int, int], most: dict[int, int], value: float) -> dict[int, int]:
    """Units per priority (highest first) of ``Σ W_p·u_p``, ``u_p ≤ most_p``: each weight exceeds
    everything below. (A loose bound decodes to every level full down to where it falls short.)"""
    rest = int(round(value))
    out = {}
    for p in sorted(weights, reverse=True):
        out[p] = max(0, min(rest // weights[p], most.get(p, 0)))
        rest -= out[p] * weights[p]
    return out


def _n(x: float) -> str:
    return f"{int(round(x)):,}" if abs(x - round(x)) < 1e-6 else f"{x:,.1f}"


def format_gap(gap: float) -> str:
    """A relative gap as a percentage, with two significant digits below 1 %."""
    return "0 %" if gap == 0 else (f"{100 * gap:.2g} %" if gap < 0.01 else f"{100 * gap:.1f} %")


class Reporter:
    """Progress events of one run (see the module docstring); a no-op without a callback."""

    def __init__(self, callback: Progress | None, reader: StageReader, t0: float,
                 interval: float = INTERVAL) -> None:
        self.callback = callback
        self.reader = reader
        self.t0 = t0
        self.interval = interval
        self.phase = "starting"
        self.stage = ""
        self.incumbent: float | None = None
        self.bound: float | None = None
        self.last = time.perf_counter()
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.thread: threading.Thread | None = None

    def __enter__(self) -> Reporter:
        if self.callback is not None:
            self.thread = threading.Thread(target=self._beat, name="toposolve-progress",
                                           daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stopped.set()
        if self.thread is not None:
            self.thread.join()

    # ---- what the run tells -----------------------------------------------------------------
    def set_phase(self, phase: str) -> None:
        """A new phase (model building, the warm start's check): said at once."""
        with self.lock:
            self.phase, self.stage, self.incumbent, self.bound = phase, "", None, None
            self._emit("status")

    def start_stage(self, label: str, incumbent: float | None = None) -> None:
        """A stage starts; ``incumbent``: its value in the plan it starts from (the warm start
        or the previous stage's), shown until the search improves on it."""
        with self.lock:
            self.phase, self.stage = f"stage {label}", label
            self.incumbent, self.bound = incumbent, None

    def solution(self, incumbent: float, bound: float) -> None:
        with self.lock:
            self.incumbent, self.bound = incumbent, count_bound(self.stage, bound)
            self._emit("solution")

    def new_bound(self, bound: float) -> None:
        with self.lock:
            self.bound = count_bound(self.stage, bound)

    def end_stage(self, label: str, status: str, value: float | None, bound: float | None) -> None:
        with self.lock:
            self.stage, self.incumbent = label, value
            self.bound = count_bound(label, bound)
            self._emit("stage", status)

    # ---- events --------------------------------------------------------------------------------
    def _beat(self) -> None:
        while not self.stopped.wait(0.25):
            with self.lock:
                if time.perf_counter() - self.last >= self.interval:
                    self._emit("status")

    def _emit(self, kind: str, status: str = "") -> None:
        if self.callback is None:
            return
        now = time.perf_counter()
        self.last = now
        elapsed = now - self.t0
        gap = None
        if self.stage:
            text, gap = self.reader.read(self.stage, self.incumbent, self.bound)
            head = f"{self.stage} {status}" if status else self.stage
            line = f"[{elapsed:6.1f}s] {head}: {text}"
        else:
            line = f"[{elapsed:6.1f}s] {self.phase}"
        nan = float("nan")
        self.callback(ProgressEvent(
            self.incumbent if self.incumbent is not None else nan,
            self.bound if self.bound is not None else nan,
            elapsed, self.stage, gap, kind, line,
        ))
