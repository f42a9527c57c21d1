"""Rule ``plan-jobs`` (the plan's job list agrees with its bindings); the eviction modes.

``plan-jobs``: every listed job exists and is listed once; ``placed: true`` needs bindings or
pods still running after the plan; ``placed: false`` allows no binding; every listed SubJob id is
a SubJob of that job.

The ``eviction`` rule (per mode) is in :mod:`.evictions`.
"""

from __future__ import annotations

from typing import Literal

from toposolve.check.context import Context
from toposolve.check.violation import Violation

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
                out.append(
                    Violation("plan-jobs", obj, f"SubJob {sub.id!r} is not a SubJob of this job"))
    return out
