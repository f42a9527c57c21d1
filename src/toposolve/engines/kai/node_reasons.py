"""Why each node refuses a pod, counted as KAI's ``FittingNode`` counts it, for the message of
a pod that found no node (:mod:`toposolve.engines.kai.reasons` words it). A pod asking GPU
memory (``gpu-memory``) takes KAI's own path: its resource vector holds no GPUs, so a node
whose other resources suffice gives no reason at all. Rules and the commit read:
docs/kai-fidelity.md "Reasons in KAI's words".
"""

from __future__ import annotations

import math

import numpy as np

from toposolve.core.gpu_memory import DEFAULT_GPU_MEMORY, gpu_memory_mib
from toposolve.core.instance import DEVICE_MILLI, DeviceShare
from toposolve.core.problem import POD_COUNT_RESOURCE, Problem, node_exclusion
from toposolve.engines.kai.reasons import (
    GPU,
    POD_NUMBER_EXCEEDED,
    predicate_reason,
    short_resources,
)

GPUS_SHORT = "node(s) didn't have enough resources: GPUs"


def node_histogram(problem: Problem, g: int, nodes: np.ndarray,
                   free: np.ndarray) -> dict[str, int] | None:
    """The reasons the nodes ``nodes`` (indices, ``free`` their free capacity) refuse the next
    pod of group ``g``, counted as ``FittingNode`` counts them: short resources, else the pod
    count, the node condition, the predicates (a GPU-memory pod: :func:`memory_pod_reasons`).
    None when a node has room or refuses for what toposolve does not word."""
    pods = problem.resource_index.get(POD_COUNT_RESOURCE)
    keep = [r for r in range(len(problem.resources)) if r != pods]
    names = [problem.resources[r] for r in keep]
    request = problem.group_request[g]
    task = problem.task_of(g)
    by_name = {n.name: n for n in problem.instance.nodes}
    memory = task.device_share if task.device_share and task.device_share.memory else None
    counts: dict[str, int] = {}
    for n, row in zip(nodes.tolist(), free, strict=True):
        if memory is not None:
            reasons = memory_pod_reasons(problem, g, n, row, memory)
            if reasons is None:
                return None
        else:
            reasons = short_resources(names, request[keep], row[keep])
            if not reasons and pods is not None and row[pods] < request[pods]:
                reasons = [POD_NUMBER_EXCEEDED]
            if not reasons and not problem.group_feasible[g][n]:
                why = node_exclusion(by_name[problem.topology.node_names[n]], task.constraints)
                if why is None:  # excluded by something else than a predicate
                    return None
                reasons = [predicate_reason(why)]
            if not reasons:
                return None
        for reason in reasons:
            counts[reason] = counts.get(reason, 0) + 1
    return counts


def memory_pod_reasons(problem: Problem, g: int, n: int, free: np.ndarray,
                       share: DeviceShare) -> list[str] | None:
    """Node ``n``'s reasons for a pod asking ``share.memory`` MiB of each of ``share.count``
    GPUs (``free``: the node's free capacity): [] when KAI's check passes it without a reason,
    None when toposolve cannot tell KAI's answer.

    KAI (``node_info.go``): the pod's share on the node is ``ceil(100 × memory / M) / 100`` of a
    GPU (M: the node's label, 100 MiB without one), valid when at most 1 or whole. A node that
    cannot take the pod gives no reason when that share is valid and every other resource
    fits (``lessEqualTaskToNodeResources``: the vector holds no GPUs); otherwise
    ``NewFitErrorInsufficientResource``: GPUs when share × count exceeds the node's idle GPUs,
    GPU memory when the pod asks more than M, then the other short resources."""
    node = problem.instance.nodes[n]
    mib = gpu_memory_mib(node.labels)
    per_gpu = DEFAULT_GPU_MEMORY if mib is None else mib
    pods = problem.resource_index.get(POD_COUNT_RESOURCE)
    if per_gpu <= 0 or (pods is not None and free[pods] < problem.group_request[g][pods]):
        return None  # KAI divides by it / counts the pod slot in words toposolve does not give
    portion = math.ceil(share.memory / per_gpu * 100) / 100
    valid = portion <= 1 or portion == int(portion)
    request = problem.group_request[g]
    gpu = problem.resource_index.get(GPU)
    others = [r for r in range(len(problem.resources)) if r not in (pods, gpu)]
    names = [problem.resources[r] for r in others]
    short = short_resources(names, request[others], free[others])
    pooled = int(free[gpu]) if gpu is not None else 0
    if valid and not short:
        if problem.group_feasible[g][n] or pooled < request[gpu]:
            return []  # no device took it; KAI's resource check, blind to it, passes
        return None  # a device may hold it (KAI then runs the predicates) or not
    allocatable = int(problem.allocatable[n, gpu]) if gpu is not None else 0
    if pooled not in (0, allocatable):
        return None  # idle devices unknown: shares are in use
    idle = allocatable // DEVICE_MILLI if pooled else 0
    asked = math.floor(portion * 100 + 0.5) * share.count / 100  # getExtendedResourceGpus
    return ([GPUS_SHORT] if asked > idle else []) + short_resources(
        names, request[others], free[others], gpu_memory=(share.memory, per_gpu))
