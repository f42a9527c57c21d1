"""Primal helper: refill the warm start's first level short of its knapsack bound.

Why: on a saturated cluster the mirror leaves a few accelerators idle that a different set of
gangs of one priority would use (12,288 nodes at 120 %: two low-priority gangs of 2 and 4 GPUs
out, one of 8 in), and the coarse model's search does not find that exchange in time
(docs/cpsat-formulation.md, section 6a). The subset sums of :mod:`.placed_bound` name such a
set directly; :func:`repack` then tells whether it fits the nodes and limits.
"""

from __future__ import annotations

from toposolve.core.assignment import Assignment
from toposolve.core.problem import Problem
from toposolve.engines.cpsat.post.repack import repack
from toposolve.engines.cpsat.solve.placed_bound import (
    accelerator_capacity,
    level_items,
    pod_weights,
)
from toposolve.engines.cpsat.solve.subset_sum import SubsetSums

MAX_TRIES = 3  # sums tried, largest first: each costs a repacking of the whole plan


def knapsack_refill(problem: Problem, hint: Assignment) -> Assignment | None:
    """A plan that places more accelerator units than ``hint`` at its highest priority level
    where a larger whole-gang subset sum fits, or None.

    Levels are walked highest first with the free accelerators as in
    :func:`~.placed_bound.placed_upper_bound`, less what ``hint`` places at the levels above.
    At the first level where the whole gangs that may move (all-or-nothing jobs, of queues
    without a capability, so quotas stay as in ``hint``, and without GangNodes) have a larger
    subset sum than ``hint``'s, up to :data:`MAX_TRIES` sums are tried, largest first; each
    keeps ``hint``'s jobs of that level where it can (:meth:`SubsetSums.witness`), every
    placement of ``hint`` above that level and of its other jobs there, and places all pending
    pods of the jobs chosen, by :func:`repack`; ``hint``'s jobs of lower levels follow where
    they still fit. The first that fits is returned: the caller keeps it only if it is better.
    """
    weights = pod_weights(problem)
    if weights is None:
        return None
    per_job: dict[int, dict[int, int]] = {}
    for g, per in hint.counts.items():
        count = sum(c for c in per.values() if c > 0)
        if count:
            per_job.setdefault(int(problem.group_job[g]), {})[g] = count
    room = accelerator_capacity(problem)
    for priority, items in sorted(level_items(problem, weights).items(), reverse=True):
        movable = sorted(j for j in items.whole if _movable(problem, j))
        mine = [j for j in movable if j in per_job]
        fixed = sum(_weight(weights, counts) for j, counts in per_job.items()
                    if problem.jobs[j].priority == priority and j not in movable)
        # hint's movable jobs last: the witness prefers them
        order = [j for j in movable if j not in per_job] + mine
        sums = SubsetSums([items.whole[j] for j in order], room - fixed)
        placed = sum(items.whole[j] for j in mine)
        if sums.exact and sums.largest() > placed:
            return _try_sums(problem, per_job, priority, order, sums, placed)
        room -= fixed + placed
    return None


def _try_sums(problem: Problem, per_job: dict[int, dict[int, int]], priority: int,
              order: list[int], sums: SubsetSums, placed: int) -> Assignment | None:
    """The first of the largest sums above ``placed`` whose witness repacks (see
    :func:`knapsack_refill`)."""
    moving = set(order)
    kept = Assignment()
    for j, counts in per_job.items():
        if problem.jobs[j].priority > priority or (
                problem.jobs[j].priority == priority and j not in moving):
            for g, c in counts.items():
                kept.add(g, -1, c)  # node unused: repack reads the counts only
    below = sorted((j for j in per_job if problem.jobs[j].priority < priority),
                   key=lambda j: (-problem.jobs[j].priority, j))
    optional = [(j, per_job[j]) for j in below]
    for total in sums.descending(placed)[:MAX_TRIES]:
        plan = Assignment(counts={g: dict(per) for g, per in kept.counts.items()})
        for k in sums.witness(total):
            for g in problem.jobs[order[k]].groups:
                if problem.group_pending_count(g):
                    plan.add(g, -1, problem.group_pending_count(g))
        packed = repack(problem, plan, optional=optional)
        if packed is not None:
            return packed
    return None


def _movable(problem: Problem, j: int) -> bool:
    """Whether the refill may add or drop job ``j``: not in a queue with a capability (its
    quota), no GangNodes (:func:`repack` knows jobs and SubJobs only)."""
    queue = problem.queues.get(problem.jobs[j].queue)
    return not (queue is not None and queue.capability) and not problem.jobs[j].gang_nodes


def _weight(weights, counts: dict[int, int]) -> int:
    return sum(int(weights[g]) * c for g, c in counts.items())
