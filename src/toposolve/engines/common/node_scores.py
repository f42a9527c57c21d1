"""kube-scheduler's node scores of the pod-by-pod run (``docs/kube-fidelity.md``).

NodeResourcesFit's scoring strategy (``LeastAllocated`` by default, ``MostAllocated`` or
``RequestedToCapacityRatio``) and NodeResourcesBalancedAllocation, the default score plugins whose
values differ between nodes here, as configured by a
:class:`~toposolve.core.kube_scoring.KubeScoring` (defaults: ``cpu`` and ``memory``, weight 1
each, every plugin weight 1). Shared by the kube mirror's workload cycle and the Kueue mirror's
non-TAS placement (kube-scheduler placing an admitted workload's pods). Pods are scored with
``Problem.score_request`` (an unset cpu / memory request counts as 100m / 200Mi, set by the k8s
readers).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toposolve.core.kube_scoring import (
    DEFAULT_RESOURCES,
    MAX_SHAPE_SCORE,
    MAX_UTILIZATION,
    RATIO,
    KubeScoring,
    ScoringStrategy,
)
from toposolve.core.problem import Problem

MAX_SCORE = 100
NOT_SCALAR = ("cpu", "memory", "ephemeral-storage")


@dataclass(frozen=True)
class ScoredResources:
    """Columns of the scored resources in the problem's resource index, their weights and which
    are scalar (extended) resources; resources the problem lacks are left out."""

    columns: np.ndarray
    weights: np.ndarray
    scalar: np.ndarray

    @classmethod
    def of(cls, problem: Problem,
           resources: tuple[tuple[str, int], ...] = DEFAULT_RESOURCES) -> ScoredResources:
        """The ``(resource, weight)`` pairs of a scoring strategy that ``problem`` has."""
        index = problem.resource_index
        kept = [(index[r], w) for r, w in resources if r in index]
        return cls(np.array([c for c, _ in kept], dtype=np.int64),
                   np.array([w for _, w in kept], dtype=np.int64),
                   np.array([r not in NOT_SCALAR for r, _ in resources if r in index], dtype=bool))

    def pod(self, problem: Problem, g: int) -> np.ndarray:
        """[S] what a pod of group ``g`` requests in scores (``Problem.score_request``)."""
        return problem.score_request(g)[self.columns]


def _weighted(per_resource: np.ndarray, alloc: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Integer weighted mean over resources, skipping those with no allocatable (upstream
    ``resourceAllocationScorer.score``)."""
    present = alloc > 0
    weight_sum = (present * weights).sum(axis=-1)
    total = (np.where(present, per_resource, 0) * weights).sum(axis=-1)
    return np.where(weight_sum > 0, total // np.maximum(weight_sum, 1), 0)


def least_allocated(requested: np.ndarray, alloc: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """[..] ``(alloc - requested) * 100 / alloc`` per resource (0 when over), weighted."""
    safe = np.maximum(alloc, 1)
    per = np.where((alloc > 0) & (requested <= alloc), (alloc - requested) * MAX_SCORE // safe, 0)
    return _weighted(per, alloc, weights)


def most_allocated(requested: np.ndarray, alloc: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """[..] ``min(requested, alloc) * 100 / alloc`` per resource, weighted."""
    safe = np.maximum(alloc, 1)
    per = np.where(alloc > 0, np.minimum(requested, alloc) * MAX_SCORE // safe, 0)
    return _weighted(per, alloc, weights)


def broken_linear(shape: tuple[tuple[int, int], ...], util: np.ndarray) -> np.ndarray:
    """[..] the shape's piecewise-linear score (scaled to 0-100) at integer ``util``, integer
    arithmetic truncating as Go's (helper ``BuildBrokenLinearFunction``)."""
    xs = np.array([u for u, _ in shape], dtype=np.int64)
    ys = np.array([v for _, v in shape], dtype=np.int64) * (MAX_SCORE // MAX_SHAPE_SCORE)
    i = np.searchsorted(xs, util, side="left")  # the first point with util <= its utilization
    lo, hi = np.maximum(i - 1, 0), np.minimum(i, len(xs) - 1)
    rise = (ys[hi] - ys[lo]) * (util - xs[lo])
    run = np.maximum(xs[hi] - xs[lo], 1)
    inner = ys[lo] + np.sign(rise) * (np.abs(rise) // run)
    return np.where(i == 0, ys[0], np.where(i >= len(xs), ys[-1], inner))


def requested_to_capacity_ratio(requested: np.ndarray, alloc: np.ndarray, weights: np.ndarray,
                                shape: tuple[tuple[int, int], ...]) -> np.ndarray:
    """[..] the shape's score of ``requested * 100 / alloc`` per resource (100 when over),
    weighted over the resources with allocatable and a positive score, rounded."""
    safe = np.maximum(alloc, 1)
    util = np.where(requested >= alloc, MAX_UTILIZATION,
                    np.maximum(requested, 0) * MAX_UTILIZATION // safe)
    per = broken_linear(shape, util)
    counted = (alloc > 0) & (per > 0)
    weight_sum = (counted * weights).sum(axis=-1)
    total = (np.where(counted, per, 0) * weights).sum(axis=-1)
    mean = total / np.maximum(weight_sum, 1)
    return np.where(weight_sum > 0, np.floor(mean + 0.5), 0).astype(np.int64)


def balanced_allocation(requested: np.ndarray, alloc: np.ndarray) -> np.ndarray:
    """[..] ``(1 - std) * 100`` of the requested fractions (capped at 1) of the resources with
    allocatable."""
    present = alloc > 0
    frac = np.where(present, np.minimum(requested / np.maximum(alloc, 1), 1.0), 0.0)
    count = np.maximum(present.sum(axis=-1), 1)
    mean = frac.sum(axis=-1) / count
    var = (np.where(present, (frac - mean[..., None]) ** 2, 0.0)).sum(axis=-1) / count
    return ((1.0 - np.sqrt(var)) * MAX_SCORE).astype(np.int64)


def strategy_score(requested: np.ndarray, alloc: np.ndarray, weights: np.ndarray, kind: str,
                   shape: tuple[tuple[int, int], ...] = ()) -> np.ndarray:
    """[..] a scoring strategy's score (``kind``: ``MostAllocated``, ``LeastAllocated`` or
    ``RequestedToCapacityRatio`` with ``shape``) over the last axis's resources."""
    if kind == RATIO:
        return requested_to_capacity_ratio(requested, alloc, weights, shape)
    scorer = most_allocated if kind == "MostAllocated" else least_allocated
    return scorer(requested, alloc, weights)


@dataclass(frozen=True)
class NodeScoring:
    """The pod-by-pod node score: NodeResourcesFit's strategy over ``fit`` (weight
    ``fit_weight``) plus NodeResourcesBalancedAllocation over ``balanced`` (``balanced_weight``).
    A scalar (extended) resource the pod does not request is not scored (upstream: allocatable
    0, resource_allocation.go)."""

    strategy: ScoringStrategy
    fit: ScoredResources
    balanced: ScoredResources
    fit_weight: int = 1
    balanced_weight: int = 1

    @classmethod
    def of(cls, problem: Problem, config: KubeScoring) -> NodeScoring:
        """The node score of ``config`` over the resources ``problem`` has."""
        return cls(config.node, ScoredResources.of(problem, config.node.resources),
                   ScoredResources.of(problem, tuple((r, 1) for r in config.balanced_resources)),
                   config.node_fit_weight, config.balanced_weight)

    def scores(self, used: np.ndarray, alloc: np.ndarray, pod: np.ndarray) -> np.ndarray:
        """[n] (or a scalar for one node) the score of each node with the pod's scoring request
        ``pod`` ([R]) added to the nodes' ``used`` ([.., R]; ``alloc`` likewise)."""
        requested = used + pod
        total = np.zeros(requested.shape[:-1], dtype=np.int64)
        for scored, weight, is_fit in ((self.fit, self.fit_weight, True),
                                       (self.balanced, self.balanced_weight, False)):
            if weight == 0 or not len(scored.columns):
                continue
            cols = scored.columns
            shown = np.where(scored.scalar & (pod[cols] == 0), 0, alloc[..., cols])
            part = (strategy_score(requested[..., cols], shown, scored.weights,
                                   self.strategy.type, self.strategy.shape) if is_fit
                    else balanced_allocation(requested[..., cols], shown))
            total = total + weight * part
        return total
