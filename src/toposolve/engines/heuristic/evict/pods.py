"""Running pods as eviction candidates: who they belong to and where they run."""

from __future__ import annotations

import numpy as np

from ....problem import Problem, RunningPod


class RunningPods:
    """Every running pod (:attr:`Problem.running`), with a node array for fast domain filtering."""

    def __init__(self, problem: Problem) -> None:
        pods = problem.running
        self.problem = problem
        self.pods = pods
        self.node = np.array([p.node for p in pods], dtype=np.int64)
        self.job = np.array([p.job for p in pods], dtype=np.int64)

    def on_nodes(self, nodes: np.ndarray) -> list[RunningPod]:
        """Pods running on any of ``nodes``, in instance order."""
        if not self.pods:
            return []
        mask = np.zeros(self.problem.n_nodes, dtype=bool)
        mask[nodes] = True
        return [self.pods[i] for i in np.flatnonzero(mask[self.node]).tolist()]

    def request(self, pod: RunningPod) -> np.ndarray:
        return self.problem.group_request[pod.group]
