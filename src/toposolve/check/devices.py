"""Rule ``device``: per-device GPU sharing (docs/formats.md, "Per-device GPU sharing").

Re-derived from the instance alone: the per-device resource is the tasks' ``deviceShare``
resource (or the instance's ``device_resource``); a node has its allocatable of it in whole
devices. A pod with a ``deviceShare`` takes ``milli`` of ``count`` distinct devices; any other
pod asking for the resource takes ``request / 1000`` whole devices. On every node where the
plan binds such pods, running pods (their ``deviceUse``) plus bound pods (their binding's
``devices``) hold at most 1000 milli of each device.
"""

from __future__ import annotations

from collections import defaultdict

from toposolve.check.context import Context
from toposolve.check.violation import Violation
from toposolve.core.instance import Instance, Task

ONE_DEVICE = 1000  # milli-units of one device


def shared_resource(instance: Instance) -> str | None:
    """The resource shared per device: the instance's, else the first ``deviceShare``'s."""
    if instance.device_resource is not None:
        return instance.device_resource
    shares = (t.device_share for job in instance.jobs for t in job.tasks)
    return next((s.resource for s in shares if s is not None), None)


def pod_shape(task: Task, resource: str) -> tuple[int, int]:
    """(milli per device, devices) one pod of ``task`` takes; (0, 0): none."""
    if task.device_share is not None:
        return task.device_share.milli, task.device_share.count
    asked = task.requests.get(resource, 0)
    return (ONE_DEVICE, asked // ONE_DEVICE) if asked else (0, 0)


def _running_use(ctx: Context, nodes: set[str]) -> dict[str, dict[int, int]]:
    """Node -> device -> milli held by running pods that stay on ``nodes``."""
    use: dict[str, dict[int, int]] = {n: defaultdict(int) for n in nodes}
    for job in ctx.instance.jobs:
        for task in job.tasks:
            for i, devices in task.device_use.items():
                node = task.running.get(i)
                name = f"{job.namespace}/{task.pod_name(job.name, i)}"
                if node in use and ctx.placement.get(name) == node:
                    for device, milli in devices.items():
                        use[node][device] += milli
    return use


def check_devices(ctx: Context) -> list[Violation]:
    """Violations of rule ``device`` (see the module doc).

    Parameters
    ----------
    ctx
        The checker's context (the plan applied).

    Returns
    -------
    list of Violation
        One per bad binding (``Pod/…``) and per over-used device (``Node/…``).
    """
    resource = shared_resource(ctx.instance)
    devices_of = {b.pod: b.devices for b in ctx.plan.bindings if ctx.bound.get(b.pod) == b.node}
    out: list[Violation] = []
    arriving: dict[str, list[tuple[str, int, list[int]]]] = defaultdict(list)
    for pod, node in ctx.arrivals.items():
        taken = devices_of.get(pod) if pod in ctx.bound else None
        milli, count = (0, 0) if resource is None else pod_shape(ctx.pods[pod].task, resource)
        obj = f"Pod/{pod}"
        if not count:
            if taken is not None:
                out.append(Violation("device", obj, "takes devices but asks for none"))
            continue
        if taken is None or len(taken) != count or len(set(taken)) != count:
            out.append(Violation("device", obj, f"must take {count} distinct device(s) of "
                                 f"{resource}, takes {taken!r}"))
            continue
        have = ctx.nodes[node].allocatable.get(resource, 0) // ONE_DEVICE
        if max(taken) >= have:
            out.append(Violation("device", obj, f"device {max(taken)} on {node!r}, which has "
                                 f"{have} device(s)"))
            continue
        arriving[node].append((pod, milli, taken))
    use = _running_use(ctx, set(arriving))
    for node, pods in arriving.items():
        for _, milli, taken in pods:
            for device in taken:
                use[node][device] += milli
        for device, held in sorted(use[node].items()):
            if held > ONE_DEVICE:
                out.append(Violation("device", f"Node/{node}", f"device {device} of {resource}:"
                                     f" pods hold {held}m, one device is {ONE_DEVICE}m"))
    return out
