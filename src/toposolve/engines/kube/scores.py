"""kube-scheduler's placement scores as the workload cycle uses them (``docs/kube-fidelity.md``).

PlacementBinPacking's strategy (``MostAllocated`` by default, ``LeastAllocated`` or
``RequestedToCapacityRatio``) and PodGroupPodsCount, as configured by a
:class:`~toposolve.core.kube_scoring.KubeScoring`. The node scores of the pod-by-pod run are the
kernel's (:mod:`toposolve.engines.common.node_scores`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toposolve.core.kube_scoring import KubeScoring
from toposolve.core.problem import Problem
from toposolve.engines.common.node_scores import MAX_SCORE, ScoredResources, strategy_score


@dataclass(frozen=True)
class PlacementScoring:
    """The placement score configuration: PlacementBinPacking's strategy and its resources, and
    the weights of PlacementBinPacking and PodGroupPodsCount."""

    strategy: str
    resources: ScoredResources
    fit_weight: int = 1
    count_weight: int = 1
    shape: tuple[tuple[int, int], ...] = ()  # RequestedToCapacityRatio's points

    @classmethod
    def of(cls, problem: Problem, config: KubeScoring) -> PlacementScoring:
        """The placement scores of ``config`` over the resources ``problem`` has."""
        strategy = config.placement
        return cls(strategy.type, ScoredResources.of(problem, strategy.resources),
                   config.placement_fit_weight, config.pods_count_weight, strategy.shape)


def placement_fit_score(requested: np.ndarray, alloc: np.ndarray, weights: np.ndarray,
                        scoring: PlacementScoring) -> np.ndarray:
    """[K] PlacementBinPacking's score of each placement: its nodes pooled, ``requested`` = what
    they hold plus the group's proposed pods' scored requests ([K, S])."""
    return strategy_score(requested, alloc, weights, scoring.strategy, scoring.shape)


def pods_count_scores(counts: list[int]) -> list[int]:
    """PodGroupPodsCount normalised: ``count * 100 / max``.

    Raises
    ------
    ValueError
        When no count is positive (upstream: an error status); the cycle never asks, as every
        feasible placement schedules a new pod.
    """
    top = max(counts, default=0)
    if top <= 0:
        raise ValueError("no pods from pod group are assigned to any of the candidate placements")
    return [c * MAX_SCORE // top for c in counts]
