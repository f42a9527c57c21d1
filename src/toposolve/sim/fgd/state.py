"""Per-device cluster state for FGD's experiment: nodes with CPU, memory and GPU devices.

Every device holds ``MILLI`` (1000) milli-GPUs of its node's GPU model. A pod asks ``cpu``
milli-CPUs, ``mem`` MiB and ``count`` devices with ``milli`` milli-GPUs free on *each* (openb:
a shared pod has ``count`` 1 and ``milli`` < 1000, a whole-GPU pod ``count`` ≥ 1 and ``milli``
1000, a CPU-only pod ``count`` 0), and may only run on some GPU models (``access``). Placing a
pod is choosing a node and ``count`` distinct devices of it. The arrays are vectorised over
nodes (``N``) and device slots (``D``, the largest GPU count; missing devices hold 0 milli and
are never chosen, since every GPU pod asks for ``milli`` ≥ 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

MILLI = 1000


@dataclass(frozen=True)
class Nodes:
    """The static cluster: one entry per node (arrays of length ``N``)."""

    names: tuple[str, ...]
    cpu: np.ndarray  # milli-CPU
    mem: np.ndarray  # MiB
    gpus: np.ndarray  # devices
    model: np.ndarray  # index into ``models`` (GPU-less nodes: any index, 0 devices)
    models: tuple[str, ...]

    @property
    def gpu_capacity(self) -> int:
        """Total milli-GPUs of the cluster."""
        return int(self.gpus.sum()) * MILLI


@dataclass(frozen=True)
class Pods:
    """A list of pods (arrays of length ``P``; ``access`` is ``P × len(models)``)."""

    names: tuple[str, ...]
    cpu: np.ndarray
    mem: np.ndarray
    count: np.ndarray
    milli: np.ndarray
    access: np.ndarray  # bool: may the pod run on a node of this GPU model

    def __len__(self) -> int:
        return len(self.names)

    def take(self, index: np.ndarray, names: tuple[str, ...] | None = None) -> Pods:
        """The pods at ``index`` (repeats allowed), optionally renamed."""
        chosen = names if names is not None else tuple(self.names[i] for i in index)
        return Pods(chosen, self.cpu[index], self.mem[index], self.count[index],
                    self.milli[index], self.access[index])

    @property
    def gpu_milli(self) -> np.ndarray:
        """Milli-GPUs each pod asks for in all (``count × milli``)."""
        return self.count * self.milli


@dataclass
class State:
    """What is left on every node: CPU, memory and each device's milli-GPUs.

    ``version[n]`` grows whenever node ``n`` changes (policies cache per-node scores by it).
    """

    nodes: Nodes
    cpu_left: np.ndarray
    mem_left: np.ndarray
    gpu_left: np.ndarray  # N × D
    version: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @classmethod
    def empty(cls, nodes: Nodes) -> State:
        """The cluster with nothing placed."""
        slots = max(int(nodes.gpus.max(initial=0)), 1)
        gpu = np.where(np.arange(slots)[None, :] < nodes.gpus[:, None], MILLI, 0)
        return cls(nodes, nodes.cpu.astype(np.int64).copy(), nodes.mem.astype(np.int64).copy(),
                   gpu.astype(np.int64), np.zeros(len(nodes.names), dtype=np.int64))

    def allocated_milli(self) -> int:
        """Milli-GPUs in use on the whole cluster."""
        return self.nodes.gpu_capacity - int(self.gpu_left.sum())

    def allocation_ratio(self) -> float:
        """Allocated milli-GPUs / the cluster's milli-GPUs (FGD's GPU allocation ratio)."""
        return self.allocated_milli() / self.nodes.gpu_capacity


def feasible(state: State, pods: Pods, i: int) -> np.ndarray:
    """Which nodes can take pod ``i`` now (a bool array of length ``N``).

    CPU and memory must fit; a GPU pod needs a node of an allowed model with ``count`` devices
    that each have ``milli`` free.
    """
    ok = (state.cpu_left >= pods.cpu[i]) & (state.mem_left >= pods.mem[i])
    count = int(pods.count[i])
    if count == 0:
        return ok
    fits = (state.gpu_left >= pods.milli[i]).sum(axis=1) >= count
    return ok & fits & pods.access[i][state.nodes.model]


def first_free_devices(left: np.ndarray, count: int) -> tuple[int, ...]:
    """The ``count`` lowest-index whole free devices of one node (a whole-GPU pod's devices)."""
    free = np.flatnonzero(left >= MILLI)
    if len(free) < count:
        raise ValueError(f"only {len(free)} free devices, {count} asked for")
    return tuple(int(d) for d in free[:count])


def place(state: State, pods: Pods, i: int, node: int, devices: tuple[int, ...]) -> None:
    """Put pod ``i`` on ``node`` and its ``devices``; ``ValueError`` if it does not fit."""
    left = state.gpu_left[node]
    milli, count = int(pods.milli[i]), int(pods.count[i])
    if len(devices) != count or len(set(devices)) != count:
        raise ValueError(f"pod {pods.names[i]} needs {count} distinct devices, got {devices}")
    if count and not pods.access[i][state.nodes.model[node]]:
        raise ValueError(f"pod {pods.names[i]} may not run on GPU model of node {node}")
    if any(not 0 <= d < state.nodes.gpus[node] or left[d] < milli for d in devices):
        raise ValueError(f"pod {pods.names[i]} does not fit devices {devices} of node {node}")
    if state.cpu_left[node] < pods.cpu[i] or state.mem_left[node] < pods.mem[i]:
        raise ValueError(f"pod {pods.names[i]} does not fit CPU/memory of node {node}")
    state.cpu_left[node] -= pods.cpu[i]
    state.mem_left[node] -= pods.mem[i]
    for d in devices:
        left[d] -= milli
    state.version[node] += 1
