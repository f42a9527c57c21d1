"""Greedy engine mirroring Volcano's allocate action (gang, priority, network-topology-aware).

Public pieces for notebooks: :func:`run_heuristic`, :class:`HeuristicEngine` (its
``job_gradients``, ``subjob_gradients`` and ``hypernode_scores`` explain a decision), and the
scoring functions in :mod:`toposolve.engines.heuristic.scores`.
"""

from __future__ import annotations

from ...problem import Problem
from ...profiles import Profile
from ..assignment import Assignment
from .engine import HeuristicEngine
from .scores import (
    binpack_score,
    fading_node_scores,
    lca_tier_score,
    tier_weights,
)


def run_heuristic(problem: Problem, profile: Profile | None = None) -> Assignment:
    """Place the pending queue greedily, as Volcano would (deterministic by default)."""
    return HeuristicEngine(problem, profile or Profile()).run()


__all__ = [
    "HeuristicEngine",
    "binpack_score",
    "fading_node_scores",
    "lca_tier_score",
    "run_heuristic",
    "tier_weights",
]
