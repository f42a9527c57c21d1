"""FGD's GPU fragmentation measure on toposolve's pooled ``milli`` model (any plan).

The expected free milli-accelerators of a node that a pod drawn from the *target workload*
cannot use (Weng et al., ATC '23, as :mod:`toposolve.sim.fgd.frag` measures it per device),
with CPU and memory shortfall included. A node's pooled free milli ``F`` is read as
``F // 1000`` whole free devices and one partly used device of ``F % 1000``. The target
workload is the shape distribution of the instance's pending and running pods. Definition,
the differences from FGD's per-device measure and the tie rules: ``docs/fgd.md``, section
"The fragmentation measure in the pooled model".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toposolve.core.problem import Problem
from toposolve.policy.objective import accelerator_resources

POPULARITY = 95  # per cent of the pods the kept shapes cover, as FGD's target workload
MILLI = 1000  # milli-units of one device


@dataclass(frozen=True)
class TargetWorkload:
    """``T`` typical pod shapes in decreasing popularity and their pod counts (the weights)."""

    cpu: np.ndarray  # milli-CPU
    memory: np.ndarray  # the smallest memory request among the shape's pods
    count: np.ndarray  # devices asked (0: no accelerator)
    milli: np.ndarray  # milli asked on each device
    pods: np.ndarray  # pods of the shape (integer weights; popularity = pods / pods.sum())


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
    """The typical pod shapes ``(cpu, accelerator milli)`` of the pending and running pods."""
    acc = accelerator_resources(problem)
    cpu_r = problem.resources.index("cpu") if "cpu" in problem.resources else None
    mem_r = problem.resources.index("memory") if "memory" in problem.resources else None
    shapes: dict[tuple[int, int], list[int]] = {}  # shape -> [pods, smallest memory]
    for g, request in enumerate(problem.group_request):
        pods = len(problem.group_pending[g]) + sum(problem.group_running[g].values())
        if not pods:
            continue
        key = (int(request[cpu_r]) if cpu_r is not None else 0, int(request[acc].sum()))
        memory = int(request[mem_r]) if mem_r is not None else 0
        entry = shapes.setdefault(key, [0, memory])
        entry[0] += pods
        entry[1] = min(entry[1], memory)
    # decreasing pod count; ties: the larger shape first (FGD's order)
    ordered = sorted(shapes.items(), key=lambda kv: (kv[1][0], kv[0]), reverse=True)
    total, covered, kept = sum(v[0] for v in shapes.values()), 0, []
    for key, (pods, memory) in ordered:
        if covered * 100 >= threshold * total:
            break
        kept.append((key, pods, memory))
        covered += pods
    devices = [pod_devices(milli) for (_, milli), _, _ in kept]
    return TargetWorkload(
        cpu=np.array([k[0] for k, _, _ in kept], dtype=np.int64),
        memory=np.array([m for _, _, m in kept], dtype=np.int64),
        count=np.array([d for d, _ in devices], dtype=np.int64),
        milli=np.array([m for _, m in devices], dtype=np.int64),
        pods=np.array([p for _, p, _ in kept], dtype=np.int64),
    )


def node_fragmentation(free_milli: np.ndarray, free_cpu: np.ndarray, free_memory: np.ndarray,
                       target: TargetWorkload) -> np.ndarray:
    """[K] ``Σ_t pods_t · frag_t`` per node state (integers; divide by ``target.pods.sum()`` for
    FGD's expected milli-units): ``frag_t`` is the partly used device's free milli when it is
    below the shape's per-device milli and the node can host the shape, else all of ``F``."""
    free = np.asarray(free_milli, dtype=np.int64)[:, None]
    whole, part = free // MILLI, free % MILLI
    has_part = (part >= target.milli) & (target.milli > 0)
    hosts = ((target.count > 0) & (whole + has_part >= target.count)
             & (np.asarray(free_cpu)[:, None] >= target.cpu)
             & (np.asarray(free_memory)[:, None] >= target.memory))
    unusable = np.where(part < target.milli, part, 0)
    return np.where(hosts, unusable, free) @ target.pods


def plan_gpu_fragmentation(problem: Problem, usage: np.ndarray,
                           target: TargetWorkload | None = None) -> float:
    """FGD's fragmentation of the cluster after a plan, in expected milli-units (summed over
    nodes); ``usage`` is ``[N, R]`` in use after the plan, ``target`` defaults to the
    instance's :func:`target_workload`."""
    acc = accelerator_resources(problem)
    target = target_workload(problem) if target is None else target
    if not acc or target.pods.size == 0:
        return 0.0
    free = np.maximum(problem.allocatable - usage, 0)
    zero = np.zeros(problem.n_nodes, dtype=np.int64)

    def column(name: str) -> np.ndarray:
        return free[:, problem.resources.index(name)] if name in problem.resources else zero

    per_node = node_fragmentation(free[:, acc].sum(axis=1), column("cpu"), column("memory"),
                                  target)
    return float(per_node.sum()) / float(target.pods.sum())
