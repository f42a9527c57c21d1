"""Who may evict whom, as the checker reads Volcano's preempt and reclaim actions.

* **preempt**: a job may evict pods of a job of the *same* queue with a strictly lower
  priority; equal or higher priority is never preempted.
* **reclaim**: a job may evict pods of a job of *another* queue when that queue is
  ``reclaimable`` (a queue the instance does not list is).

The engines' copy of these rules is :mod:`toposolve.policy.rules.eviction`; the checker restates
them here on the instance's own objects so that a bug there cannot hide from it.
"""

from __future__ import annotations

from toposolve.check.context import Context
from toposolve.check.jobs import EvictionMode
from toposolve.core.instance import Job


def preempt_allows(ctx: Context, preemptor: Job, victim: Job) -> bool:
    """Whether ``preemptor`` may preempt pods of ``victim``: same queue, strictly higher
    priority."""
    if preemptor.queue != victim.queue:
        return False
    return ctx.instance.job_priority(preemptor) > ctx.instance.job_priority(victim)


def queue_reclaimable(ctx: Context, queue: str) -> bool:
    """Whether pods of ``queue`` may be reclaimed: a queue the instance does not list is."""
    q = ctx.queues.get(queue)
    return q is None or q.reclaimable


def reclaim_allows(ctx: Context, preemptor: Job, victim: Job) -> bool:
    """Whether ``preemptor`` may reclaim pods of ``victim``: another queue, a reclaimable one."""
    return preemptor.queue != victim.queue and queue_reclaimable(ctx, victim.queue)


def may_evict(ctx: Context, mode: EvictionMode, preemptor: str, victim: str) -> bool:
    """Whether job ``preemptor`` may take room freed by evicting pods of job ``victim`` in
    ``mode`` (keys of ``ctx.jobs``)."""
    p, v = ctx.jobs[preemptor], ctx.jobs[victim]
    if mode in ("preempt", "both") and preempt_allows(ctx, p, v):
        return True
    return mode in ("reclaim", "both") and reclaim_allows(ctx, p, v)
