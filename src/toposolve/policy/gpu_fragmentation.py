"""FGD's GPU fragmentation measure on toposolve's pooled ``milli`` model (any plan).

The expected free milli-accelerators of a node that a pod drawn from the *target workload*
cannot use (Weng et al., ATC '23; the measure is :mod:`toposolve.policy.fgd_measure`, shared
with the per-device harness), with CPU and memory shortfall included. A node's pooled free
milli ``F`` is read as ``F // 1000`` whole free devices and one partly used device of
``F % 1000``. The target workload is the shape distribution of the instance's pending and
running pods. Definition, the differences from FGD's per-device measure and the tie rules:
``docs/fgd.md``, section "The fragmentation measure in the pooled model".
"""

from __future__ import annotations

import numpy as np

from toposolve.core.parallelism import accelerator_indices
from toposolve.core.problem import Problem
from toposolve.policy.fgd_measure import (
    MILLI,
    POPULARITY,
    TargetWorkload,
    frag_from_parts,
    pooled_parts,
    popular_shapes,
)


def pod_devices(milli_total: int) -> tuple[int, int]:
    """``(devices, milli per device)`` of a pod asking ``milli_total`` pooled milli-units:
    whole devices for multiples of 1000, else one device each holding at most 1000."""
    if milli_total <= 0:
        return 0, 0
    if milli_total % MILLI == 0:
        return milli_total // MILLI, MILLI
    devices = -(-milli_total // MILLI)
    return devices, -(-milli_total // devices)


def target_workload(problem: Problem, threshold: int = POPULARITY) -> TargetWorkload:
    """The typical pod shapes ``(cpu, accelerator milli)`` of the pending and running pods,
    weighted by pod count; a shape's memory is the smallest among its pods."""
    acc = accelerator_indices(problem.resources)
    cpu_r = problem.resources.index("cpu") if "cpu" in problem.resources else None
    mem_r = problem.resources.index("memory") if "memory" in problem.resources else None
    pods_of: dict[tuple[int, int], int] = {}
    memory_of: dict[tuple[int, int], int] = {}
    for g, request in enumerate(problem.group_request):
        pods = len(problem.group_pending[g]) + sum(problem.group_running[g].values())
        if not pods:
            continue
        key = (int(request[cpu_r]) if cpu_r is not None else 0, int(request[acc].sum()))
        memory = int(request[mem_r]) if mem_r is not None else 0
        pods_of[key] = pods_of.get(key, 0) + pods
        memory_of[key] = min(memory_of.get(key, memory), memory)
    kept = popular_shapes(pods_of, threshold)
    devices = [pod_devices(milli) for (_, milli), _ in kept]
    return TargetWorkload(
        cpu=np.array([k[0] for k, _ in kept], dtype=np.int64),
        memory=np.array([memory_of[k] for k, _ in kept], dtype=np.int64),
        count=np.array([d for d, _ in devices], dtype=np.int64),
        milli=np.array([m for _, m in devices], dtype=np.int64),
        weight=np.array([p for _, p in kept], dtype=np.int64),
    )


def node_fragmentation(free_milli: np.ndarray, free_cpu: np.ndarray, free_memory: np.ndarray,
                       target: TargetWorkload) -> np.ndarray:
    """[K] ``Σ_t pods_t · frag_t`` per pooled node state (integers with pod-count weights;
    divide by ``target.weight.sum()`` for FGD's expected milli-units)."""
    free = np.asarray(free_milli, dtype=np.int64)
    nfit, small = pooled_parts(free, target.milli)
    return frag_from_parts(nfit, small, free, np.asarray(free_cpu), target.model_access.T[
        np.zeros(len(free), dtype=np.int64)], target, np.asarray(free_memory))


def free_state(problem: Problem, usage: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                              np.ndarray]:
    """Per node: pooled free accelerator milli, free CPU and free memory under ``usage``."""
    free = np.maximum(problem.allocatable - usage, 0)
    zero = np.zeros(problem.n_nodes, dtype=np.int64)

    def column(name: str) -> np.ndarray:
        return free[:, problem.resources.index(name)] if name in problem.resources else zero

    return (free[:, accelerator_indices(problem.resources)].sum(axis=1), column("cpu"),
            column("memory"))


def gpu_fragmentation_value(problem: Problem, usage: np.ndarray,
                            target: TargetWorkload | None = None) -> int:
    """The ``gpu_fragmentation`` stage: ``Σ_nodes Σ_t pods_t · frag_t`` after a plan (an
    integer; :func:`plan_gpu_fragmentation` divides it by the target's pods); ``usage`` is
    ``[N, R]`` in use after the plan, ``target`` defaults to :func:`target_workload`."""
    target = target_workload(problem) if target is None else target
    if not accelerator_indices(problem.resources) or target.weight.size == 0:
        return 0
    return int(node_fragmentation(*free_state(problem, usage), target).sum())


def plan_gpu_fragmentation(problem: Problem, usage: np.ndarray,
                           target: TargetWorkload | None = None) -> float:
    """FGD's fragmentation of the cluster after a plan, in expected milli-units (summed over
    nodes); ``usage`` is ``[N, R]`` in use after the plan, ``target`` defaults to the
    instance's :func:`target_workload`."""
    target = target_workload(problem) if target is None else target
    if target.weight.size == 0:
        return 0.0
    return gpu_fragmentation_value(problem, usage, target) / float(target.weight.sum())
