"""Run a scheduler mirror (Volcano, Kueue, KAI) under the engine contract."""

from __future__ import annotations

import time

from toposolve.core.status import SolveStatus
from toposolve.engines.common.crossing import hold_back_crossing
from toposolve.engines.contract import EngineResult
from toposolve.policy.objective import evaluate


def timed_result(problem, profile, run) -> EngineResult:
    """``run(problem)`` timed and evaluated: a greedy mirror's ``FEASIBLE`` result.

    Parameters
    ----------
    problem, profile
        The engine contract's problem and profile (its objective evaluates the plan).
    run
        The mirror: compiled problem → assignment.

    Returns
    -------
    EngineResult
        Status ``FEASIBLE``, the plan's objective value, the wall time of ``run``.
    """
    start = time.perf_counter()
    assignment = run(problem)
    elapsed = time.perf_counter() - start
    value = evaluate(problem, assignment, profile.objective, profile.comm)
    return EngineResult(assignment, SolveStatus.FEASIBLE, value, wall_time_s=elapsed)


def mirror_result(problem, profile, options, run, name: str,
                  crossing: bool = False) -> EngineResult:
    """:func:`timed_result`; eviction modes are refused (not mirrored). Without ``crossing``
    (the mirror measures constraints in their own crossing Topology's tree), jobs constrained in
    one stay pending with one line (:func:`hold_back_crossing`)."""
    if options.evict is not None:
        raise ValueError(f"engine {name!r} does not mirror preemption (use volcano or cpsat)")
    if not crossing:
        return timed_result(problem, profile,
                            lambda p: hold_back_crossing(p, name, run))
    return timed_result(problem, profile, run)
