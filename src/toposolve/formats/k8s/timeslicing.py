"""NVIDIA time-slicing / MPS replicas (labels of NVIDIA's device plugin / GPU Feature Discovery:
``nvidia.com/gpu.replicas``, ``nvidia.com/gpu.sharing-strategy``) → per-device shares.

A node sharing each GPU as ``R`` replicas advertises ``devices × R`` of ``nvidia.com/gpu``; a
pod asking ``k`` of them gets ``⌊1000 / R⌋`` thousandths of each of ``k`` devices. Read so only
when every GPU node shares its GPUs with the same ``R``; otherwise the plain count stays (one
warning line). Mapping, limits and the plugin's commit: docs/formats.md ("NVIDIA time-slicing").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from toposolve.core.errors import InputError
from toposolve.core.instance import DEVICE_MILLI, DeviceShare, Job, Node, Queue
from toposolve.core.quantity import MilliUnits
from toposolve.formats.k8s.fields import Document, decimal

GPU = "nvidia.com/gpu"
REPLICAS_LABEL = "nvidia.com/gpu.replicas"
STRATEGY_LABEL = "nvidia.com/gpu.sharing-strategy"
SHARING_STRATEGIES = ("time-slicing", "mps")


def node_replicas(node: Node, doc: Document) -> int:
    """The replicas each GPU of ``node`` is shared as (1: not shared).

    Raises
    ------
    InputError
        A replicas label that is not a positive integer, or a GPU allocatable that is not a
        whole number of devices × replicas.
    """
    text = node.labels.get(REPLICAS_LABEL)
    if text is None or node.labels.get(STRATEGY_LABEL, SHARING_STRATEGIES[0]) \
            not in SHARING_STRATEGIES:
        return 1
    replicas = decimal(text.strip())
    where = {"file": doc.file, "obj": doc.object_name(namespaced=False)}
    if replicas is None or replicas < 0:
        raise InputError(f"{text!r} is not a replica count: a non-negative integer",
                         field=f"metadata.labels.{REPLICAS_LABEL}", **where)
    replicas = max(replicas, 1)  # 0: sharing disabled (the plugin's label for no config)
    if node.allocatable.get(GPU, 0) % (replicas * DEVICE_MILLI):
        raise InputError(f"{node.allocatable[GPU] / DEVICE_MILLI:g} {GPU} is not whole devices "
                         f"of {replicas} replicas", field=f"status.allocatable.{GPU}", **where)
    return replicas


def shared_replicas(nodes: Sequence[Node], docs: Sequence[Document],
                    warn: Callable[[str], None]) -> int:
    """The replicas every GPU node shares its GPUs as, or 1 (with one warning line when some
    nodes share and the count is not one for all, or not a whole share of thousandths)."""
    replicas = {n.name: node_replicas(n, d) for n, d in zip(nodes, docs, strict=True)
                if n.allocatable.get(GPU, 0)}
    counts = sorted(set(replicas.values()))
    if counts in ([], [1]):
        return 1
    first = next(d for n, d in zip(nodes, docs, strict=True) if replicas.get(n.name, 1) > 1)
    where = f"{first.file}: {first.object_name(namespaced=False)}: metadata.labels.{REPLICAS_LABEL}"
    if len(counts) > 1:
        warn(f"{where}: GPU nodes share their GPUs as {', '.join(map(str, counts))} replicas; "
             f"{GPU} is read as a plain count (per-device sharing needs one replica count)")
        return 1
    milli = DEVICE_MILLI // counts[0]
    if milli * (counts[0] + 1) <= DEVICE_MILLI:
        warn(f"{where}: {counts[0]} replicas are not a whole share of thousandths of a GPU; "
             f"{GPU} is read as a plain count")
        return 1
    return counts[0]


def time_sliced(nodes: Sequence[Node], jobs: Sequence[Job], queues: Sequence[Queue],
                replicas: int) -> tuple[list[Node], list[Job], list[Queue]]:
    """Nodes with their devices (``nvidia.com/gpu`` divided by ``replicas``), jobs whose pods
    ask ``k`` replicas as a ``deviceShare`` of ``k`` devices, and queue quantities of
    ``nvidia.com/gpu`` in the same thousandths of a device."""
    if replicas == 1:
        return list(nodes), list(jobs), list(queues)
    milli = DEVICE_MILLI // replicas

    def scaled(amounts: dict[str, int]) -> MilliUnits:
        if GPU not in amounts:
            return MilliUnits(amounts)
        return MilliUnits({**amounts, GPU: amounts[GPU] // DEVICE_MILLI * milli})

    nodes = [n.model_copy(update={"allocatable": MilliUnits(
        {**n.allocatable, GPU: n.allocatable[GPU] // replicas})}) if n.allocatable.get(GPU)
        else n for n in nodes]
    out_jobs = []
    for job in jobs:
        tasks = []
        for task in job.tasks:
            asked = task.requests.get(GPU, 0) // DEVICE_MILLI
            if not asked:
                tasks.append(task)
                continue
            tasks.append(task.model_copy(update={
                "requests": scaled(task.requests),
                "score_requests": None if task.score_requests is None
                else scaled(task.score_requests),
                "device_share": DeviceShare(resource=GPU, milli=milli, count=asked)}))
        out_jobs.append(job.model_copy(update={"tasks": tasks,
                                               "min_resources": scaled(job.min_resources)}))
    out_queues = [q.model_copy(update={"capability": scaled(q.capability),
                                       "deserved": scaled(q.deserved),
                                       "guarantee": scaled(q.guarantee)}) for q in queues]
    return nodes, out_jobs, out_queues
