"""Rule ``eviction``: every eviction is explained by preemption or reclaim (``mode``).

* **preempt**: some job that receives bindings may preempt the victim's job (same queue,
  strictly higher priority: :mod:`.rights`).
* **reclaim**: some job of another queue that receives bindings may reclaim it (the victim's
  queue is ``reclaimable``), and the queue gave back no more than it held above its deserved
  share before the plan (:mod:`.quotas`; pods the plan binds to it do not count), in an order
  proportion's ``Reclaimable`` allows.
* ``both`` accepts either; ``none`` accepts no eviction.

Every mode that allows evictions also requires that a job that loses pods receives no bindings,
and that the room an eviction frees is taken only by jobs allowed to make it
(:mod:`.freed_room`). The exact reclaim condition is in ``docs/checker.md``.
"""

from __future__ import annotations

from toposolve.check.context import Context
from toposolve.check.freed_room import check_freed_room
from toposolve.check.jobs import EvictionMode
from toposolve.check.quotas import POD_COUNT, deserved_shares
from toposolve.check.rights import preempt_allows, reclaim_allows
from toposolve.check.violation import Violation
from toposolve.core.instance import Job

_EPS = 1e-6  # milli-units: the share must be exceeded by more than rounding
_REL = 1e-12  # relative rounding of the water-filled shares


def _strongest_per_queue(ctx: Context) -> dict[str, Job]:
    """Per queue, its highest-priority job receiving bindings (the first of equals): some job
    of the queue may preempt a victim exactly when this one may."""
    strongest: dict[str, tuple[int, Job]] = {}
    for key in ctx.jobs_with_bindings:
        job = ctx.jobs[key]
        priority = ctx.instance.job_priority(job)
        if job.queue not in strongest or priority > strongest[job.queue][0]:
            strongest[job.queue] = (priority, job)
    return {queue: job for queue, (_, job) in strongest.items()}


def check_evictions(ctx: Context, mode: EvictionMode) -> list[Violation]:
    strongest = _strongest_per_queue(ctx)
    out: list[Violation] = []
    unexplained: set[str] = set()
    reclaimed: dict[str, list[str]] = {}  # queue -> pods only reclaim can explain
    for pod_name in ctx.evicted:
        victim = ctx.pods[pod_name].job
        queue = victim.queue
        priority = ctx.instance.job_priority(victim)
        preemptor = strongest.get(queue)
        can_preempt = mode in ("preempt", "both") and preemptor is not None and preempt_allows(ctx,
            preemptor, victim)
        # reclaim does not depend on which job of another queue takes the room
        other = next((job for q, job in strongest.items() if q != queue), None)
        can_reclaim = mode in ("reclaim", "both") and other is not None and reclaim_allows(ctx,
            other, victim)
        if can_preempt:
            continue
        if can_reclaim:
            reclaimed.setdefault(queue, []).append(pod_name)
            continue
        unexplained.add(pod_name)
        out.append(Violation(
            "eviction", f"Pod/{pod_name}",
            f"job {victim.key} (queue {queue!r}, priority {priority}) may not be evicted "
            f"in mode {mode!r}: " + _why_not(mode),
        ))
    if reclaimed:
        out += _check_shares(ctx, reclaimed)
    if mode != "none":
        out += _check_restarted(ctx)
        out += check_freed_room(ctx, mode, unexplained)
    return out


def _check_restarted(ctx: Context) -> list[Violation]:
    """A job that loses pods may not receive bindings in the same plan."""
    victims = {ctx.pods[p].job.key for p in ctx.evicted}
    return [
        Violation("eviction", f"Job/{key}", "loses pods and receives bindings in the same plan")
        for key in ctx.jobs_with_bindings if key in victims
    ]


def _why_not(mode: EvictionMode) -> str:
    if mode == "none":
        return "evictions are not allowed"
    reasons = []
    if mode in ("preempt", "both"):
        reasons.append("no job of higher priority in its queue receives bindings")
    if mode in ("reclaim", "both"):
        reasons.append("its queue is not reclaimable or no job of another queue receives bindings")
    return "; ".join(reasons)


def _requests(ctx: Context, pod_name: str) -> dict[str, int]:
    return {r: a for r, a in ctx.pods[pod_name].task.requests.items() if r != POD_COUNT}


def _check_shares(ctx: Context, reclaimed: dict[str, list[str]]) -> list[Violation]:
    """Each queue gave back no more than it held above its deserved share before the plan
    (module doc): the pods the plan binds to the queue do not count."""
    shares = deserved_shares(ctx.instance)
    out: list[Violation] = []
    for queue, pods in sorted(reclaimed.items()):
        deserved = shares.get(queue, {})
        allocated: dict[str, int] = {}
        holders = {p.name for p in ctx.pods.values() if p.job.queue == queue
                   and p.running_on is not None}
        for pod in sorted(holders):
            for r, amount in _requests(ctx, pod).items():
                allocated[r] = allocated.get(r, 0) + amount
        taken: dict[str, int] = {}
        largest: dict[str, int] = {}
        for pod in pods:
            for r, amount in _requests(ctx, pod).items():
                taken[r] = taken.get(r, 0) + amount
                largest[r] = max(largest.get(r, 0), amount)
        left_before_last = {r: allocated.get(r, 0) - taken.get(r, 0) + largest.get(r, 0)
                            for r in deserved}
        if any(left_before_last[r] > share + _EPS + _REL * abs(share)
               for r, share in deserved.items()):
            continue
        over = {r: allocated.get(r, 0) - share for r, share in deserved.items()}
        detail = ", ".join(f"{r}: held {allocated.get(r, 0)}m before the plan, deserves "
                           f"{deserved[r]:.0f}m, reclaimed {taken.get(r, 0)}m"
                           for r in sorted(deserved) if over[r] > 0 or taken.get(r))
        if all(v <= _EPS + _REL * abs(deserved[r]) for r, v in over.items()):
            what = (" from a queue that is not over its deserved share before the plan (the pods "
                    "the plan binds to it do not count)")
        else:
            what = ", more than the queue holds above its deserved share"
        out.append(Violation(
            "eviction", f"Queue/{queue}",
            f"reclaim takes {len(pods)} pods{what}" + (f" ({detail})" if detail else ""),
        ))
    return out
