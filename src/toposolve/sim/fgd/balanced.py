"""BalancedFGD, toposolve's own policy: FGD's score, its ties broken by CPU-to-GPU balance.

Among the nodes of best FGD score the pod goes where it brings the node's free CPU and free GPU
closest to the target workload's ratio of CPU to GPU (the gain in whole CPU cores), then to the
node of lowest rank as in FGD. Nodes left with GPUs but too little CPU for them, or the
reverse, are what FGD's integer score cannot see (docs/fgd.md, "A policy of toposolve's own").
"""

from __future__ import annotations

import numpy as np

from toposolve.policy.fgd_measure import TargetWorkload
from toposolve.sim.fgd.policies import FGDPolicy, fgd_devices
from toposolve.sim.fgd.state import Pods, State

CORE = 1000  # milli-CPU: the balance gain is compared in whole cores


def cpu_per_gpu(tp: TargetWorkload) -> float:
    """The target workload's mean milli-CPU per milli-GPU (CPU-only shapes add CPU only)."""
    gpu = float((tp.weight * tp.milli * tp.count).sum())
    if gpu <= 0:
        raise ValueError("the target workload asks for no GPU")
    return float((tp.weight * tp.cpu).sum()) / gpu


def imbalance(cpu_left: np.ndarray, gpu_left: np.ndarray, ratio: float) -> np.ndarray:
    """How far free CPU is from ``ratio`` × free GPU (milli-CPU, either way)."""
    return np.abs(cpu_left - ratio * gpu_left)


def balance_gain(cpu_left: np.ndarray, gpu_left: np.ndarray, cpu: int, gpu: int,
                 ratio: float) -> np.ndarray:
    """By how many whole cores placing a pod of ``cpu`` milli-CPU and ``gpu`` milli-GPU (in
    all) reduces each node's :func:`imbalance` (negative: it grows), rounded to the nearest
    core (half to even) so that nearly equal gains tie.

    Parameters
    ----------
    cpu_left, gpu_left
        Free milli-CPU and free milli-GPU (all devices together) per node, before.
    cpu, gpu
        The pod's request.
    ratio
        The balance point, milli-CPU per milli-GPU (:func:`cpu_per_gpu`).
    """
    before = imbalance(cpu_left, gpu_left, ratio)
    after = imbalance(cpu_left - cpu, gpu_left - gpu, ratio)
    return np.round((before - after) / CORE)


class BalancedFGDPolicy(FGDPolicy):
    """FGD's node score; among equals the greatest :func:`balance_gain`, then the lowest rank.

    The device of a shared pod is FGD's choice on the chosen node. Online: it sees the cluster,
    the current pod and the target workload, never a later pod.
    """

    def __init__(self, rank: np.ndarray, rng: np.random.Generator, tp: TargetWorkload) -> None:
        super().__init__(rank, rng, tp)
        self.ratio = cpu_per_gpu(tp)

    def choose(self, state: State, pods: Pods, i: int,
               nodes: np.ndarray) -> tuple[int, tuple[int, ...]]:
        score, device = self.node_scores(state, pods, i, nodes)
        best = score == score.max()
        tied, tied_device = nodes[best], device[best]
        gain = balance_gain(state.cpu_left[tied], state.gpu_left[tied].sum(axis=1),
                            int(pods.cpu[i]), int(pods.gpu_milli[i]), self.ratio)
        top = gain == gain.max()
        k = int(np.argmin(np.where(top, self.rank[tied], np.iinfo(np.int64).max)))
        return int(tied[k]), fgd_devices(state, pods, i, int(tied[k]), int(tied_device[k]))
