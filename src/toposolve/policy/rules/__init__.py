"""Scheduling rules every engine shares, written once.

The engines (the Volcano mirror, CP-SAT, and the engines still to come) and the objective use
these; the checker does not — it restates the rules independently, so that an engine bug in a
rule here cannot hide from it. :mod:`.gang`: readiness, validity, task minimums, the job's
minimum request. :mod:`.eviction`: eviction modes, preempt and reclaim eligibility, queue
quotas and deserved shares, running pods as eviction candidates, what a victim holds.
"""

from toposolve.policy.rules.eviction import (
    EVICT_MODES,
    EvictAction,
    EvictMode,
    QueueQuotas,
    RunningPods,
    evict_actions,
    held_by,
    preempt_allows,
)
from toposolve.policy.rules.gang import (
    gang_invalid,
    gang_ready,
    job_minimum_request,
    subjob_ready,
    task_minimums,
)

__all__ = [
    "EVICT_MODES",
    "EvictAction",
    "EvictMode",
    "QueueQuotas",
    "RunningPods",
    "evict_actions",
    "gang_invalid",
    "gang_ready",
    "held_by",
    "job_minimum_request",
    "preempt_allows",
    "subjob_ready",
    "task_minimums",
]
