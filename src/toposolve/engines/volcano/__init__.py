"""Greedy engine mirroring Volcano's allocate action (gang, priority, network-topology-aware).

Public pieces for notebooks: :func:`run_heuristic`, :class:`HeuristicEngine` (its
``job_gradients``, ``subjob_gradients`` and ``hypernode_scores`` explain a decision), and the
scoring functions in :mod:`toposolve.engines.volcano.scores`.
"""

from __future__ import annotations

from toposolve.core.assignment import Assignment
from toposolve.core.errors import require_type
from toposolve.core.problem import Problem
from toposolve.engines.common.crossing import hold_back_crossing
from toposolve.engines.common.mirror import timed_result
from toposolve.engines.common.two_levels import within_two_levels
from toposolve.engines.contract import EngineResult, SolveOptions
from toposolve.engines.volcano.engine import HeuristicEngine
from toposolve.engines.volcano.evict import run_preemption
from toposolve.engines.volcano.scores import (
    binpack_score,
    fading_node_scores,
    lca_tier_score,
    tier_weights,
)
from toposolve.policy.profiles import Profile
from toposolve.policy.rules import EvictMode


def run_heuristic(problem: Problem, profile: Profile | None = None,
                  evict: EvictMode | None = None) -> Assignment:
    """Place the pending queue greedily, as Volcano would (deterministic by default).

    With ``evict``, the gang-aware preempt and/or reclaim action then runs for the jobs left
    pending (:func:`toposolve.engines.volcano.evict.run_preemption`): evictions go to
    ``assignment.evicted`` and the preemptors' pods are nominated bindings. A gang tree deeper
    than Volcano's two levels is placed by its stricter two-level stand-in
    (:func:`toposolve.engines.common.two_levels.within_two_levels`).

    Parameters
    ----------
    problem
        The compiled instance.
    profile
        Plugin arguments and tie-breaking (default: the default profile).
    evict
        ``"preempt"``, ``"reclaim"``, ``"both"`` or None (no eviction).

    Returns
    -------
    Assignment
        Pods per group and node, evictions, pending reasons and the engine's statistics; a job
        constrained in a crossing Topology's tree stays pending
        (:func:`~toposolve.engines.common.crossing.hold_back_crossing`).
    """
    require_type(problem, Problem, "problem")

    def run(compiled: Problem) -> Assignment:
        engine = HeuristicEngine(within_two_levels(compiled), profile or Profile())
        assignment = engine.run()
        if evict is not None:
            outcome = run_preemption(engine, evict)
            assignment.stats["eviction"] = {**outcome.stats(), "mode": evict}
        return assignment

    return hold_back_crossing(problem, "volcano", run)


def solve(problem: Problem, profile: Profile, options: SolveOptions,
          hint: Assignment | None = None) -> EngineResult:
    """The engine contract (:mod:`toposolve.engines.contract`): :func:`run_heuristic` with the
    options' eviction mode. Volcano takes no warm start, so ``hint`` is ignored; the run is
    deterministic and fast, so the time limit is not consulted."""
    return timed_result(problem, profile, lambda p: run_heuristic(p, profile, evict=options.evict))


__all__ = [
    "HeuristicEngine",
    "binpack_score",
    "fading_node_scores",
    "lca_tier_score",
    "run_heuristic",
    "run_preemption",
    "solve",
    "tier_weights",
]
