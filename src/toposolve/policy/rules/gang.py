"""Gang rules (Volcano's gang plugin, ``pkg/scheduler/plugins/gang``), written once.

* **Gang readiness** (Volcano ``JobReady``): :func:`toposolve.core.gang.gang_ready`, defined in
  core because plans report broken gangs; re-exported here. :func:`subjob_ready` per SubJob.
* **Gang validity** (``JobValid``): enough pods exist for the gang at all.
* **Job minimum request**: what the job still needs to become ready — PodGroup
  ``spec.minResources`` when given, else the requests of its first pending pods up to
  minAvailable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from toposolve.core.gang import gang_ready, task_minimums
from toposolve.core.problem import Problem

__all__ = [
    "gang_invalid",
    "gang_ready",
    "job_minimum_request",
    "subjob_ready",
    "task_minimums",
]


def subjob_ready(problem: Problem, s: int, pods_per_group: Mapping[int, int]) -> bool:
    """``SubJobReady``: for a job without subGroupPolicy it is the job's readiness; otherwise
    the SubJob has ≥ subGroupSize pods."""
    sj = problem.subjobs[s]
    if sj.policy < 0 and not problem.jobs[sj.job].has_subgroup_policies:
        return gang_ready(problem, sj.job, pods_per_group)
    return sum(pods_per_group.get(g, 0) for g in sj.groups) >= sj.min_available


def gang_invalid(problem: Problem, j: int) -> str | None:
    """Why job ``j``'s gang can never be ready (Volcano's ``JobValid``), or ``None``."""
    cj = problem.jobs[j]
    total = sum(problem.group_size(g) for g in cj.groups)
    if total < cj.min_available:
        return f"gang invalid: {total} pods exist but minAvailable is {cj.min_available}"
    for policy, minimum in cj.min_subjobs.items():
        have = sum(1 for s in cj.subjobs if problem.subjobs[s].policy == policy)
        if have < minimum:
            return f"gang invalid: {have} SubJobs exist but minSubGroups is {minimum}"
    return None


def job_minimum_request(
    problem: Problem,
    j: int,
    *,
    held: int | None = None,
    pending_of: Callable[[int], int] | None = None,
    use_min_resources: bool = True,
) -> np.ndarray:
    """[R] what job ``j`` still needs to become ready, as Volcano's PodGroup ``minResources``.

    ``spec.minResources`` when the PodGroup gives it (and ``use_min_resources``: Volcano stops
    consulting it once the job has an allocated HyperNode); otherwise the requests of the first
    ``minAvailable − held`` pending pods in group order, as the job controller computes it.
    ``held`` defaults to the running pods and ``pending_of(g)`` to the group's pending pods."""
    cj = problem.jobs[j]
    if cj.min_resources and use_min_resources:
        return problem.resource_vector(cj.min_resources)
    held = problem.job_running_count(j) if held is None else held
    pending_of = pending_of or problem.group_pending_count
    need = max(0, cj.min_available - held)
    total = np.zeros(len(problem.resources))
    for g in cj.groups:
        take = min(need, pending_of(g))
        total += take * problem.group_request[g]
        need -= take
    return total
