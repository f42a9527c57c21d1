"""Run a scheduler mirror (Kueue, KAI) under the engine contract."""

from __future__ import annotations

import time

from toposolve.core.status import SolveStatus
from toposolve.engines.contract import EngineResult
from toposolve.policy.objective import evaluate


def mirror_result(problem, profile, options, run, name: str) -> EngineResult:
    """``run(problem)`` timed and evaluated; eviction modes are refused (not mirrored)."""
    if options.evict is not None:
        raise ValueError(f"engine {name!r} does not mirror preemption (use volcano or cpsat)")
    start = time.perf_counter()
    assignment = run(problem)
    elapsed = time.perf_counter() - start
    return EngineResult(assignment, SolveStatus.FEASIBLE, evaluate(problem, assignment, profile.objective), wall_time_s=elapsed)
