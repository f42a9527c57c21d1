"""Per-device sharing under Kueue: after TAS admits a workload by pooled per-node counts, its
pods take devices on their assigned nodes as the sharing device plugin binds them.

The rule is the kernel's ``PACK`` (the fullest device that fits, ties to the lowest index): the
device choice of Alibaba's GPU share scheduler extender (``allocateGPUID``), whose annotations
the openb instances carry. A workload is bound only if every pod gets its devices; otherwise it
stays admitted but not running (docs/kueue-fidelity.md, "Per-device GPU sharing").
"""

from __future__ import annotations

from toposolve.core.assignment import Assignment
from toposolve.core.problem import Problem
from toposolve.engines.common.devices import PACK, DeviceRoom

DEVICE_RULE = PACK  # gpushare-scheduler-extender's allocateGPUID: least free that fits


def device_room(problem: Problem) -> DeviceRoom | None:
    """The devices' free room the admitted workloads' pods take from (None: no sharing)."""
    return DeviceRoom(problem, DEVICE_RULE) if problem.has_devices else None


def bind_on_devices(problem: Problem, room: DeviceRoom, assignment: Assignment, j: int,
                    before: dict[int, dict[int, int]]) -> str | None:
    """Give the new pods of admitted job ``j`` their devices, in pod order (its groups in order,
    each group's nodes by index, as pods are named), each pod on its assigned node.

    Parameters
    ----------
    problem
        The compiled problem (it shares a resource per device).
    room
        Free device room, taken from in place: the devices of every pod that fits stay taken,
        also when the workload is not bound (those pods run on them).
    assignment
        The engine's assignment, holding job ``j``'s new pods; their devices are recorded in it,
        or, when a pod fits no device, the job's pods are taken out of it (not bound).
    j
        The admitted job.
    before
        ``assignment.counts`` before job ``j`` was placed.

    Returns
    -------
    str or None
        Why the job is not bound (None: bound, with devices).
    """
    picks: dict[tuple[int, int], list[tuple[int, ...]]] = {}
    missed = total = 0
    groups = problem.jobs[j].groups
    for g in groups:
        earlier = before.get(g, {})
        for n, count in sorted(assignment.counts.get(g, {}).items()):
            for _ in range(count - earlier.get(n, 0)):
                total += 1
                try:
                    picks.setdefault((g, n), []).extend(room.take(g, n, 1))
                except ValueError:  # the device plugin refuses it: the pod stays Pending
                    missed += 1
    if not missed:
        for (g, n), taken in sorted(picks.items()):
            assignment.add_devices(g, n, taken)
        return None
    for g in groups:
        if g in before:
            assignment.counts[g] = before[g]
        else:
            assignment.counts.pop(g, None)
    return (f"Kueue admitted it by pooled per-node counts, but {missed} of its {total} pods fit "
            "no device on their assigned nodes (Pending; the workload keeps its quota and "
            "topology usage until evicted)")
