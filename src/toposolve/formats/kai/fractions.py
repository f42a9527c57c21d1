"""KAI's fractional GPU requests (pod annotations ``gpu-fraction``, ``gpu-fraction-num-devices``,
``gpu-memory``) read as per-device shares, and the devices running fractional pods hold.

Rules, KAI's admission checks and the commit read: docs/formats.md ("KAI fractional GPUs") and
docs/kai-fidelity.md ("GPU sharing").
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from toposolve.core.gpu_memory import GPU_MEMORY_LABEL, gpu_memory_mib
from toposolve.core.instance import DEVICE_MILLI, DeviceShare, Job, Node, Task
from toposolve.core.quantity import MilliUnits
from toposolve.formats.k8s.fields import Field, decimal
from toposolve.formats.volcano.podgroup import (
    PodRecord,
    distinct_task_names,
    tasks_from_pods,
)

GPU = "nvidia.com/gpu"
GPU_FRACTION = "gpu-fraction"
GPU_FRACTION_DEVICES = "gpu-fraction-num-devices"
GPU_MEMORY = "gpu-memory"
GPU_GROUP_LABEL = "runai-gpu-group"  # running fractional pods sharing one device carry the same

# (milli of each device, devices, MiB asked by gpu-memory or None); (0, 0, None): no fraction
Shape = tuple[int, int, int | None]
NO_SHARE: Shape = (0, 0, None)


def fraction_shape(pod: PodRecord, device_memory: int | None = None) -> Shape:
    """The pod's fractional request as (milli, devices, MiB of ``gpu-memory`` or None), checked
    as KAI's admission webhook checks it (``gpu_request_validator.go``); ``NO_SHARE`` without
    ``gpu-fraction`` (or without ``gpu-memory``, or with it but no ``device_memory``: MiB of each
    GPU, :func:`device_memory`).

    Raises
    ------
    InputError
        One line naming the pod and the annotation: a value that is not a number in (0, 1), a
        fraction below 1/1000, a device count that is not a positive integer, a count without a
        fraction, a fraction beside a whole ``nvidia.com/gpu`` request, a ``gpu-memory`` that is
        not a positive integer, beside a fraction, or above one device's memory.
    """
    annotations = pod.root.at("metadata.annotations")
    fraction = pod.annotations.get(GPU_FRACTION)
    devices = pod.annotations.get(GPU_FRACTION_DEVICES)
    memory = None
    if GPU_MEMORY in pod.annotations:
        milli = _memory_milli(pod, device_memory)
        memory = decimal(pod.annotations[GPU_MEMORY])
    elif fraction is None:
        if devices is not None:
            raise annotations[GPU_FRACTION_DEVICES].fail(
                "a device count without gpu-fraction (or gpu-memory) requests nothing")
        return NO_SHARE
    else:
        milli = _fraction_milli(annotations[GPU_FRACTION], fraction)
    if not milli:
        return NO_SHARE
    count = 1
    if devices is not None:
        count = int(devices) if devices.isdigit() else 0
        if count < 1:
            raise annotations[GPU_FRACTION_DEVICES].fail(
                f"{devices!r} is not a device count: a positive integer")
    if pod_requests_gpu(pod):
        key = GPU_FRACTION if fraction is not None else GPU_MEMORY
        raise annotations[key].fail(
            f"{key} beside a whole {GPU} request (KAI's admission refuses both)")
    return (milli, count, memory)


def _fraction_milli(field: Field, fraction: str) -> int:
    try:
        value = float(fraction)
    except ValueError:
        value = math.nan
    if not 0 < value < 1:
        raise field.fail(
            f"{fraction!r} is not a GPU fraction: a number above 0 and below 1 (KAI's admission)")
    milli = round(value * DEVICE_MILLI)
    if milli < 1:
        raise field.fail(f"{fraction!r} is below 1/1000 of a GPU")
    return milli


def _memory_milli(pod: PodRecord, device_memory: int | None) -> int:
    """``gpu-memory`` (MiB) as thousandths of a device of ``device_memory`` MiB, rounded up;
    0 when ``device_memory`` is unknown."""
    field = pod.root.at("metadata.annotations")[GPU_MEMORY]
    text = pod.annotations[GPU_MEMORY]
    if GPU_FRACTION in pod.annotations:
        raise field.fail("gpu-memory beside gpu-fraction (KAI's admission refuses both)")
    memory = decimal(text)
    if memory is None or memory < 1:
        raise field.fail(f"{text!r} is not GPU memory: a positive integer of MiB "
                         "(KAI's admission)")
    if device_memory is None:
        return 0
    if memory > device_memory:
        raise field.fail(f"{memory} MiB is more than one GPU's memory ({device_memory} MiB, "
                         f"label {GPU_MEMORY_LABEL})")
    return -(-memory * DEVICE_MILLI // device_memory)


def device_memory(nodes: Sequence[Node]) -> int | None:
    """MiB of each GPU, as KAI reads label ``nvidia.com/gpu.memory`` (a value of 1 TiB or more is
    bytes; floored to a multiple of 100 MiB), when every GPU node gives the same; else None."""
    values = set()
    for node in nodes:
        if node.allocatable.get(GPU, 0) <= 0:
            continue
        value = gpu_memory_mib(node.labels)
        if value is None or value <= 0:
            return None
        values.add(value)
    return values.pop() if len(values) == 1 else None


def pod_requests_gpu(pod: PodRecord) -> bool:
    """Does a container of the pod request or limit whole ``nvidia.com/gpu``?"""
    spec = pod.root["spec"].value or {}
    containers = [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
    return any(GPU in ((c.get("resources") or {}).get(kind) or {})
               for c in containers for kind in ("requests", "limits"))


def fraction_tasks(pods: Sequence[PodRecord], memory: int | None = None) -> list[Task]:
    """:func:`~toposolve.formats.volcano.podgroup.tasks_from_pods`, pods of one fractional shape
    apart: their tasks ask ``milli × devices`` of ``nvidia.com/gpu`` with a ``deviceShare``
    (``memory``: MiB of each GPU, for ``gpu-memory``); tasks of one SubGroup that differ get
    distinct names (:func:`~toposolve.formats.volcano.podgroup.distinct_task_names`)."""
    shapes = [fraction_shape(pod, memory) for pod in pods]
    tasks: list[Task] = []
    for shape in dict.fromkeys(shapes):
        bucket = [pod for pod, s in zip(pods, shapes, strict=True) if s == shape]
        for task in tasks_from_pods(bucket):
            tasks.append(task if shape == NO_SHARE else with_share(task, shape))
    return distinct_task_names(tasks)


def with_share(task: Task, shape: Shape) -> Task:
    milli, count, memory = shape
    requests = MilliUnits({**task.requests, GPU: milli * count})
    share = DeviceShare(milli=milli, count=count, memory=memory)
    return task.model_copy(update={"requests": requests, "device_share": share})


def with_running_devices(jobs: Sequence[Job]) -> list[Job]:
    """``jobs`` with the devices their running GPU pods hold (``deviceUse``), once some task
    shares GPUs: per node, a fractional pod's GPU group (label ``runai-gpu-group``, and the
    ``runai-gpu-group/…`` labels of a multi-device fraction) is one device, groups and whole
    GPUs numbered in input order; a fractional pod without a group takes devices of its own."""
    if not any(t.device_share is not None for j in jobs for t in j.tasks):
        return list(jobs)
    next_device: dict[str, int] = {}
    group_device: dict[tuple[str, str], int] = {}

    def fresh(node: str) -> int:
        next_device[node] = next_device.get(node, 0) + 1
        return next_device[node] - 1

    def device_use(task: Task, index: int, node: str) -> dict[int, int]:
        share = task.device_share
        if share is None:
            return {fresh(node): DEVICE_MILLI for _ in range(task.requests.get(GPU, 0)
                                                           // DEVICE_MILLI)}
        labels = {**task.labels, **task.pod_labels.get(index, {})}
        groups = [v for k, v in sorted(labels.items())
                  if k == GPU_GROUP_LABEL or k.startswith(GPU_GROUP_LABEL + "/")]
        groups = list(dict.fromkeys(groups))[: share.count]
        for g in groups:
            if (node, g) not in group_device:
                group_device[(node, g)] = fresh(node)
        use = {group_device[(node, g)]: share.milli for g in groups}
        while len(use) < share.count:
            use[fresh(node)] = share.milli
        return use

    out = []
    for job in jobs:
        tasks = [t.model_copy(update={"device_use": {i: device_use(t, i, n) for i, n in
                                                     sorted(t.running.items())}})
                 if t.running and (t.device_share is not None or t.requests.get(GPU, 0))
                 else t for t in job.tasks]
        out.append(job.model_copy(update={"tasks": tasks}))
    return out


def fraction_manifest(task: Task, index: int, node: str | None) -> tuple[dict[str, int],
                                                                        dict[str, str],
                                                                        dict[str, str]]:
    """What the KAI writer gives pod ``index`` of ``task``: (its container requests, its
    fraction annotations, its GPU-group labels). A ``deviceShare`` below a whole device of
    ``nvidia.com/gpu`` becomes ``gpu-fraction`` (and ``gpu-fraction-num-devices``), its GPU
    request dropped (``gpu-memory`` instead when the share was asked by memory); a running
    pod's devices become ``runai-gpu-group`` labels (``<node>-<d>``),
    which :func:`with_running_devices` reads back as the same sharing."""
    share = task.device_share
    if share is None or share.resource != GPU or share.milli >= DEVICE_MILLI:
        return dict(task.requests), {}, {}
    requests = {k: v for k, v in task.requests.items() if k != GPU}
    annotations = ({GPU_MEMORY: str(share.memory)} if share.memory is not None
                   else {GPU_FRACTION: f"{share.milli / DEVICE_MILLI:g}"})
    if share.count > 1:
        annotations[GPU_FRACTION_DEVICES] = str(share.count)
    devices = sorted(task.device_use.get(index, {})) if node is not None else []
    labels = {(GPU_GROUP_LABEL if k == 0 else f"{GPU_GROUP_LABEL}/{node}-{d}"): f"{node}-{d}"
              for k, d in enumerate(devices)}
    return requests, annotations, labels
