"""Gang rules: ``gang`` (job and per-task minimums) and ``subgroup-gang`` (SubJob minimums).

A pod counts toward a gang when it holds a node after the plan: running and not evicted, or
bound by the plan. The rules apply to jobs and SubJobs that receive bindings: a plan that
leaves a job alone is not asked to fix it.

Per-role minimum of role ``t`` (a task's ``role``, else its name): the PodGroup's
``minTaskMember[t]`` if given, else the summed ``minAvailable`` of the job's tasks of role ``t``.
As in Volcano's ``CheckTaskReady``, per-task minimums apply only when the job's ``minAvailable``
is at least their total; below it, only ``minAvailable`` counts.
"""

from __future__ import annotations

from collections import Counter

from toposolve.check.context import Context
from toposolve.check.violation import Violation


def check_gangs(ctx: Context) -> list[Violation]:
    out: list[Violation] = []
    for key in ctx.jobs_with_bindings:
        job = ctx.jobs[key]
        pods = ctx.pods_of_job[key]
        placed = [p for p in pods if p.name in ctx.placement]
        if len(placed) < job.min_available:
            out.append(Violation("gang", f"Job/{key}",
                                 f"{len(placed)} pods placed, minAvailable is {job.min_available}"))
        needed: dict[str, int] = {}
        for task in job.tasks:
            if task.min_available is not None:
                needed[task.role_name] = needed.get(task.role_name, 0) + task.min_available
        needed.update(job.min_task_member)  # minTaskMember entries win
        if job.min_available < sum(needed.values()):
            continue  # Volcano then checks the job total only
        placed_per_task = Counter(p.task.role_name for p in placed)
        for name, count in needed.items():
            if placed_per_task[name] < count:
                out.append(Violation("gang", f"Job/{key}",
                        f"task {name!r}: {placed_per_task[name]} pods placed, minimum is {count}"))
    return out


def _size(ctx: Context, sid: str) -> int:
    """SubJob gang size: its policy's ``subGroupSize`` (default 1)."""
    pod = ctx.pods_of_subjob[sid][0]
    return pod.job.subgroup_policies[pod.policy].sub_group_size or 1


def check_subgroup_gangs(ctx: Context) -> list[Violation]:
    out: list[Violation] = []
    for sid in ctx.subjobs_with_bindings:
        if ctx.pods_of_subjob[sid][0].policy < 0:
            continue  # the job's own SubJob: the job gang covers it
        placed = len(ctx.placed(ctx.pods_of_subjob[sid]))
        if placed < _size(ctx, sid):
            out.append(Violation("subgroup-gang", f"SubJob/{sid}",
                                 f"{placed} pods placed, subGroupSize is {_size(ctx, sid)}"))
    for key in ctx.jobs_with_bindings:
        job = ctx.jobs[key]
        subjobs_of_policy: dict[int, set[str]] = {}
        for pod in ctx.pods_of_job[key]:
            if pod.policy >= 0:
                subjobs_of_policy.setdefault(pod.policy, set()).add(pod.subjob)
        for p, policy in enumerate(job.subgroup_policies):
            if not policy.min_sub_groups:
                continue
            full = [
                sid for sid in subjobs_of_policy.get(p, ())
                if len(ctx.placed(ctx.pods_of_subjob[sid])) >= _size(ctx, sid)
            ]
            if len(full) < policy.min_sub_groups:
                out.append(Violation(
                    "subgroup-gang", f"Job/{key}",
                    f"policy {policy.name!r}: {len(full)} SubJobs reach subGroupSize, "
                    f"minSubGroups is {policy.min_sub_groups}",
                ))
    return out
