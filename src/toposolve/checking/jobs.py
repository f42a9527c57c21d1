"""Rules ``plan-jobs`` (the plan's job list agrees with its bindings) and ``eviction``.

``plan-jobs``: every listed job exists and is listed once; ``placed: true`` needs bindings or
pods still running after the plan; ``placed: false`` allows no binding; every listed SubJob id is
a SubJob of that job.

``eviction`` (``mode``): an evicted pod's job must have strictly lower priority than some job
that receives bindings in the same queue (``preempt``), or be in a ``reclaimable`` queue while
some job of another queue receives bindings (``reclaim``). ``both`` accepts either, ``none``
accepts no eviction. A queue the instance does not list counts as reclaimable (the model's
default).
"""

from __future__ import annotations

from typing import Literal

from .context import Context
from .violation import Violation

EvictionMode = Literal["none", "preempt", "reclaim", "both"]
EVICTION_MODES = ("none", "preempt", "reclaim", "both")


def check_plan_jobs(ctx: Context) -> list[Violation]:
    out: list[Violation] = []
    with_bindings = set(ctx.jobs_with_bindings)
    seen: set[str] = set()
    for entry in ctx.plan.jobs:
        obj = f"Job/{entry.job}"
        if entry.job not in ctx.jobs:
            out.append(Violation("plan-jobs", obj, "listed in the plan but not in the instance"))
            continue
        if entry.job in seen:
            out.append(Violation("plan-jobs", obj, "listed twice"))
        seen.add(entry.job)
        has_pods = bool(ctx.placed(ctx.pods_of_job[entry.job]))
        if entry.placed and not has_pods:
            out.append(Violation("plan-jobs", obj, "placed: true, but no pod is bound or running"))
        if not entry.placed and entry.job in with_bindings:
            out.append(Violation("plan-jobs", obj, "placed: false, but the plan binds its pods"))
        for sub in entry.subjobs:
            members = ctx.pods_of_subjob.get(sub.id)
            if not members or members[0].job.key != entry.job:
                out.append(Violation("plan-jobs", obj, f"SubJob {sub.id!r} is not a SubJob of this job"))
    return out


def check_evictions(ctx: Context, mode: EvictionMode) -> list[Violation]:
    best_in_queue: dict[str, int] = {}  # queue -> highest priority of a job receiving bindings
    for key in ctx.jobs_with_bindings:
        job = ctx.jobs[key]
        priority = ctx.instance.job_priority(job)
        best_in_queue[job.queue] = max(priority, best_in_queue.get(job.queue, priority))

    out: list[Violation] = []
    for pod_name in ctx.evicted:
        victim = ctx.pods[pod_name].job
        queue = victim.queue
        priority = ctx.instance.job_priority(victim)
        can_preempt = queue in best_in_queue and best_in_queue[queue] > priority
        reclaimable = ctx.queues[queue].reclaimable if queue in ctx.queues else True
        can_reclaim = reclaimable and any(q != queue for q in best_in_queue)
        allowed = {
            "none": False,
            "preempt": can_preempt,
            "reclaim": can_reclaim,
            "both": can_preempt or can_reclaim,
        }[mode]
        if not allowed:
            out.append(Violation(
                "eviction", f"Pod/{pod_name}",
                f"job {victim.key} (queue {queue!r}, priority {priority}) may not be evicted "
                f"in mode {mode!r}: " + _why_not(mode, can_preempt, can_reclaim),
            ))
    return out


def _why_not(mode: EvictionMode, can_preempt: bool, can_reclaim: bool) -> str:
    if mode == "none":
        return "evictions are not allowed"
    reasons = []
    if mode in ("preempt", "both") and not can_preempt:
        reasons.append("no job of higher priority in its queue receives bindings")
    if mode in ("reclaim", "both") and not can_reclaim:
        reasons.append("its queue is not reclaimable or no job of another queue receives bindings")
    return "; ".join(reasons)
