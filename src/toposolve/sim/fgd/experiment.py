"""FGD's experiment: every pod gets one attempt, in arrival order, and nothing departs."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from toposolve.policy.fgd_measure import TargetWorkload
from toposolve.sim.fgd.policies import Policy
from toposolve.sim.fgd.state import Nodes, Pods, State, feasible, place
from toposolve.sim.fgd.workload import Experiment


@dataclass(frozen=True)
class Run:
    """One policy on one seed.

    ``arrived[j]`` and ``allocated[j]`` are the milli-GPUs asked for by pods ``0..j`` and in use
    after pod ``j``; ``node[j]`` is where pod ``j`` went (−1: dropped).
    """

    policy: str
    seed: int
    capacity: int
    arrived: np.ndarray
    allocated: np.ndarray
    node: np.ndarray
    wall_s: float
    cpu_s: float

    @property
    def ratio(self) -> float:
        """The GPU allocation ratio after the last arrival (FGD's figure at 130 % load)."""
        return float(self.allocated[-1]) / self.capacity

    def ratio_at(self, load: float) -> float:
        """The allocation ratio when the arrived milli-GPUs first reach ``load`` × capacity
        (the last one if they never do)."""
        j = int(np.searchsorted(self.arrived, load * self.capacity))
        return float(self.allocated[min(j, len(self.allocated) - 1)]) / self.capacity

    def curve(self, step: float = 0.05) -> list[tuple[float, float]]:
        """``(arrived load, allocation ratio)`` at every ``step`` of arrived load, then at the
        last arrival."""
        top = float(self.arrived[-1]) / self.capacity
        loads = np.arange(step, top, step)
        points = [(round(float(x), 4), round(self.ratio_at(float(x)), 6)) for x in loads]
        return points + [(round(top, 6), round(self.ratio, 6))]


def simulate(nodes: Nodes, pods: Pods, policy: Policy) -> tuple[State, np.ndarray]:
    """Offer every pod once, in order, to ``policy``; the final state and each pod's node."""
    state = State.empty(nodes)
    where = np.full(len(pods), -1, dtype=np.int64)
    for i in range(len(pods)):
        ok = np.flatnonzero(feasible(state, pods, i))
        if len(ok):
            node, devices = policy.choose(state, pods, i, ok)
            place(state, pods, i, node, devices)
            where[i] = node
    return state, where


def run_experiment(nodes: Nodes, exp: Experiment, policy: Policy, name: str) -> Run:
    """:func:`simulate` one seed's arrivals, with the allocation curve and the time taken."""
    wall, cpu = time.perf_counter(), time.process_time()
    _, where = simulate(nodes, exp.pods, policy)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    demand = exp.pods.gpu_milli
    return Run(name, exp.seed, nodes.gpu_capacity, np.cumsum(demand),
               np.cumsum(np.where(where >= 0, demand, 0)), where, wall, cpu)


def target_workload(tp: TargetWorkload) -> list[dict]:
    """The target workload as rows (for a record)."""
    return [{"cpu_milli": int(c), "gpu_milli": int(m), "num_gpu": int(k), "share": float(f)}
            for c, m, k, f in zip(tp.cpu, tp.milli, tp.count, tp.weight, strict=True)]
