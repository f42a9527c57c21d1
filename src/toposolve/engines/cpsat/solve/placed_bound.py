"""A combinatorial upper bound of the ``placed`` stage: per priority level, a subset sum of
whole gangs within the cluster's free accelerators.

Why: on an overloaded cluster what bounds ``placed`` is the free capacity, and CP-SAT's bound
on the priority-weighted sum may never resolve its lowest level (12,288 nodes at 120 %:
docs/cpsat-formulation.md, section 6a). This one takes milliseconds and no model; the runner
caps the stage's largest value with it, so a plan that reaches it is proven optimal without a
search. Why it is valid: :func:`placed_upper_bound`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from toposolve.core.problem import Problem
from toposolve.engines.cpsat.solve.subset_sum import largest_subset_sum
from toposolve.policy.objective import (
    accelerator_resources,
    dominance_weights,
    pending_level_units,
    placed_units,
    unit_scale,
)


@dataclass
class LevelItems:
    """The pending jobs of one priority level as knapsack items (weights: accelerator units).

    ``whole``: job -> weight of all its pending pods, for jobs whose minimum needs every pending
    pod; ``pods``: weights of the other jobs' pods in binary chunks (their minimums dropped);
    ``free``: units the level's pods without accelerators count."""

    whole: dict[int, int] = field(default_factory=dict)
    pods: list[int] = field(default_factory=list)
    free: int = 0

    def weights(self) -> list[int]:
        return list(self.whole.values()) + self.pods


def pod_weights(problem: Problem) -> np.ndarray | None:
    """[G] accelerator units one pod of each group takes: its ``placed`` units when it asks for
    accelerators, else 0; None without accelerators or with per-device sharing."""
    acc = accelerator_resources(problem)
    if problem.has_devices or not acc or len(problem.group_job) == 0:
        return None
    request = problem.group_request[:, acc]
    asks = request.sum(axis=1) > 0
    return np.where(asks, placed_units(problem), 0).astype(np.int64)


def accelerator_capacity(problem: Problem) -> int:
    """Free accelerators of the schedulable nodes in ``placed`` units (whole ones when the
    units are whole: then every request is, so a node's free milli-units round down)."""
    acc = accelerator_resources(problem)
    free = np.maximum(problem.allocatable - problem.used, 0)[problem.schedulable][:, acc]
    return int((free if unit_scale(problem) == 1000 else free // 1000).sum())


def whole_gang(problem: Problem, j: int) -> bool:
    """Whether placing job ``j`` at all means placing every pending pod (its minimum)."""
    pending = sum(problem.group_pending_count(g) for g in problem.jobs[j].groups)
    return problem.jobs[j].min_available - problem.job_running_count(j) >= pending


def level_items(problem: Problem, weights: np.ndarray) -> dict[int, LevelItems]:
    """Priority -> its pending jobs as :class:`LevelItems` (``weights``: :func:`pod_weights`)."""
    units = placed_units(problem)
    out: dict[int, LevelItems] = {}
    for j in problem.pending_jobs:
        items = out.setdefault(problem.jobs[j].priority, LevelItems())
        pending = {g: problem.group_pending_count(g) for g in problem.jobs[j].groups}
        pending = {g: n for g, n in pending.items() if n}
        items.free += sum(n * int(units[g]) for g, n in pending.items() if weights[g] == 0)
        if whole_gang(problem, j):
            total = sum(n * int(weights[g]) for g, n in pending.items())
            if total:
                items.whole[j] = total
            continue
        for g, n in pending.items():
            items.pods += _binary_chunks(int(weights[g]), n) if weights[g] else []
    return out


def placed_upper_bound(problem: Problem) -> int | None:
    """An upper bound of ``placed`` (``Σ W_level·units``) over the valid plans that evict
    nothing; None where :func:`pod_weights` is.

    Relaxation: the pods placed take at most the free accelerators ``C``
    (:func:`accelerator_capacity`) in all, each as many units as it counts (a pod without
    accelerators none); nodes, topology, queues and minimums of partial gangs are dropped. Level
    by level, highest first: the level's most is the largest subset sum of its items within
    what is left of ``C``, plus every unit it places for free; what is left then shrinks by that
    subset sum — the least any plan placing as much at this level takes. Any valid plan is at
    most this, compared level by level from the top: where it has less, that level's weight
    exceeds everything below it (strict dominance); where as much, it leaves no more room below.
    """
    weights = pod_weights(problem)
    if weights is None:
        return None
    capacity = accelerator_capacity(problem)
    demand = pending_level_units(problem)
    dominance = dominance_weights(demand)
    total = 0
    for priority, items in sorted(level_items(problem, weights).items(), reverse=True):
        taken = largest_subset_sum(items.weights(), capacity)
        capacity -= taken
        total += dominance[priority] * min(taken + items.free, demand[priority])
    return total


def _binary_chunks(weight: int, count: int) -> list[int]:
    """Chunks of 1, 2, 4, … pods (and the rest) of ``weight``: their subset sums are exactly
    ``0..count`` pods' worth."""
    out, k = [], 1
    while count > 0:
        take = min(k, count)
        out.append(take * weight)
        count -= take
        k *= 2
    return out
