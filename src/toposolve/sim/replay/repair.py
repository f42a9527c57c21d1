"""Repairing the jobs a node failure hit, during a replay (``--fail-rate ...,repair=defrag``).

The repair call sees the replay's cluster with every running job listed as itself (move cost:
its pod count; the cluster file's jobs may not move) and names the failed nodes;
:func:`toposolve.defrag` re-places the failed pods inside their jobs' required domains,
moving the fewest other jobs, and its plan is checked. Rationale: ``docs/replay.md``.
"""

from __future__ import annotations

from toposolve.core.plan import Plan
from toposolve.defrag import defrag
from toposolve.sim.replay.cycle import CycleBuilder
from toposolve.sim.replay.defrag import defrag_instance
from toposolve.sim.replay.failures import FailurePolicy
from toposolve.sim.replay.jobs import JobRun

WALL_FACTOR = 10.0  # CP-SAT's wall-clock cap in multiples of the time limit (shared machines)


def repair_plan(builder: CycleBuilder, running: list[JobRun], failed: list[str],
                policy: FailurePolicy, seed: int, *, source: str) -> Plan:
    """The checked plan that repairs the running jobs hit by the ``failed`` nodes.

    Parameters
    ----------
    builder
        The replay's cluster (nodes already down are unschedulable).
    running
        Every running job, with its bound pods.
    failed
        Names of the nodes that just failed.
    policy
        The failure policy (its ``time_limit`` bounds the CP-SAT stages).
    seed
        CP-SAT's seed.
    source
        Where the call comes from, for messages.

    Returns
    -------
    Plan
        Moves (the failed pods' from their failed node) and ``stats["defrag"]["repaired"]``.
    """
    names = builder.node_names
    jobs = [(r.with_running(names), None if r.background else r.pod_count()) for r in running]
    instance = defrag_instance(builder, jobs, [], source=source)
    return defrag(instance, fail=failed, engine="cpsat", time_limit=policy.time_limit, seed=seed,
                  wall_factor=WALL_FACTOR)
