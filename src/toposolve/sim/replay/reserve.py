"""Which queued jobs a defrag admission must not delay (``--defrag …,reserve=head|ahead``).

A defrag admission lets a target start ahead of the jobs queued before it (higher priority, or
the same and an earlier arrival) that are still waiting. As in EASY backfilling, the jump is
allowed only if it does not delay the projected start of the head of the queue (``head``), or
of every job ahead of the target (``ahead``: conservative backfilling). Rationale, the
projection and measurements: ``docs/replay.md`` and ``docs/defrag.md`` ("Over time").
"""

from __future__ import annotations

from toposolve.core.problem import Problem
from toposolve.sim.replay.jobs import JobRun

RESERVE_MODES = ("none", "head", "ahead")


def queued_ahead(problem: Problem, pending: list[JobRun], admitted: set[str],
                 mode: str) -> list[str]:
    """Keys of the ``pending`` jobs with no pod bound, not ``admitted``, queued before the first
    admitted one (priority, highest first, then arrival: the order of the targets), in queue
    order; only the first of them for ``mode`` ``head``, none for ``none``."""
    if mode == "none":
        return []
    priority = {cj.key: cj.priority for cj in problem.jobs}
    order = {r.key: (-priority.get(r.key, 0), r.index) for r in pending}
    first = min((order[k] for k in admitted if k in order), default=None)
    if first is None:
        return []
    ahead = sorted((order[r.key], r.key) for r in pending
                   if r.key not in admitted and not r.bound_count() and order[r.key] < first)
    keys = [key for _, key in ahead]
    return keys[:1] if mode == "head" else keys
