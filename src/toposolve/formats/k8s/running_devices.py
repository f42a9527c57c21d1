"""Devices for running pods whose input does not say which devices they hold.

Per-device sharing needs every running pod of the shared resource on devices (``deviceUse``).
Pods that name them (KAI's GPU groups, GPU-share's ``gpu-index``) keep theirs; the others are
placed in input order (job, task, pod) on the lowest-numbered devices of their node with room,
one warning line in all. The rule is in docs/formats.md ("Per-device GPU sharing").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from toposolve.core.device_pick import FIRST_FIT, pick_devices
from toposolve.core.errors import InputError
from toposolve.core.instance import DEVICE_MILLI, Job, Node, Task


def place_unrecorded(nodes: Sequence[Node], jobs: Sequence[Job], source: str,
                     warn: Callable[[str], None]) -> list[Job]:
    """``jobs`` with every running pod of the per-device resource on devices.

    Raises
    ------
    InputError
        When the running pods of a node do not fit its devices (naming the first that does not).
    """
    resource = next((t.device_share.resource for j in jobs for t in j.tasks
                     if t.device_share is not None), None)
    if resource is None:
        return list(jobs)
    free = {n.name: np.full(n.allocatable.get(resource, 0) // DEVICE_MILLI, DEVICE_MILLI,
                            dtype=np.int64) for n in nodes}
    no_devices = np.zeros(0, dtype=np.int64)
    for job in jobs:
        for task in job.tasks:
            for index, use in task.device_use.items():
                for device, milli in use.items():
                    devices = free.get(task.running[index], no_devices)
                    if device < len(devices):
                        devices[device] -= milli
    placed = 0
    out = []
    for job in jobs:
        tasks = []
        for task in job.tasks:
            use = dict(task.device_use)
            for index, node in sorted(task.running.items()):
                if index in use or not task.requests.get(resource, 0):
                    continue
                use[index] = _first_fit(task, free.get(node, no_devices), resource)
                if use[index] is None:
                    raise InputError(f"the running pods of node {node} hold more of {resource} "
                                     "than its devices give", file=source,
                                     obj=f"Pod/{job.namespace}/{task.pod_name(job.name, index)}",
                                     field="spec.nodeName")
                placed += 1
            tasks.append(task if use == task.device_use
                         else task.model_copy(update={"device_use": use}))
        out.append(job.model_copy(update={"tasks": tasks}))
    if placed:
        warn(f"{source}: {placed} running pod(s) of {resource} do not say which devices they "
             "hold; placed on the lowest-numbered devices of their node with room, in input order")
    return out


def _first_fit(task: Task, devices: np.ndarray, resource: str) -> dict[int, int] | None:
    """The devices a running pod of ``task`` takes by the engines' first fit (taken from
    ``devices``), or None when they do not hold it."""
    share = task.device_share
    if share is None:
        milli, count = DEVICE_MILLI, task.requests[resource] // DEVICE_MILLI
    else:
        milli, count = share.milli, share.count
    picked = pick_devices(devices, milli, count, FIRST_FIT)
    if picked is None:
        return None
    devices[list(picked)] -= milli
    return {d: milli for d in picked}
