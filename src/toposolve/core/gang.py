"""Gang readiness (Volcano's ``JobReady``): pods holding a node ≥ minAvailable; each task has
≥ its minimum when those are enforced (:func:`task_minimums`); each subGroupPolicy with
``minSubGroups`` has that many SubJobs at ``subGroupSize``.

The rest of the gang rules are in :mod:`toposolve.policy.rules.gang`; readiness sits in core
because a plan reports the gangs its evictions break (:func:`toposolve.core.assignment.to_plan`).
"""

from __future__ import annotations

from collections.abc import Mapping

from toposolve.core.problem import CompiledJob, Problem


def task_minimums(cj: CompiledJob) -> dict[str, int]:
    """Per-task minimums a ready job must meet.

    Parameters
    ----------
    cj
        The compiled job.

    Returns
    -------
    dict
        Task name → summed task ``minAvailable`` (PodGroup ``minTaskMember`` entries winning),
        positive ones only; empty when minAvailable is below their sum (Volcano's
        ``CheckTaskReady`` then checks the job total only).
    """
    if cj.min_available < sum(cj.min_per_task.values()):
        return {}
    return {task: minimum for task, minimum in cj.min_per_task.items() if minimum > 0}


def gang_ready(problem: Problem, j: int, pods_per_group: Mapping[int, int]) -> bool:
    """Whether job ``j`` is ready with ``pods_per_group[g]`` pods of each group holding a node.

    Parameters
    ----------
    problem
        The compiled problem.
    j
        The job's index.
    pods_per_group
        Pods holding a node, per pod group (missing groups count 0).

    Returns
    -------
    bool
        True when the job total, the task minimums and every ``minSubGroups`` are met.
    """
    cj = problem.jobs[j]

    def count(groups: list[int]) -> int:
        return sum(pods_per_group.get(g, 0) for g in groups)

    if count(cj.groups) < cj.min_available:
        return False
    for task, minimum in task_minimums(cj).items():
        if count([g for g in cj.groups if problem.group_role[g] == task]) < minimum:
            return False
    for policy, minimum in cj.min_subjobs.items():
        full = sum(
            1
            for s in cj.subjobs
            if problem.subjobs[s].policy == policy
            and count(problem.subjobs[s].groups) >= problem.subjobs[s].min_available
        )
        if full < minimum:
            return False
    return True
