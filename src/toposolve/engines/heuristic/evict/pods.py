"""Running pods as eviction candidates: who they belong to and where they run."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....problem import Problem


@dataclass(frozen=True)
class RunningPod:
    name: str  # full name "ns/pod"
    job: int
    group: int
    subjob: int
    task: str  # the role (task name)
    task_position: int  # declaration order of the task in its job
    index: int  # pod index inside its task (higher = created later)
    node: int


class RunningPods:
    """Every running pod of the instance, with a node array for fast domain filtering."""

    def __init__(self, problem: Problem) -> None:
        pods: list[RunningPod] = []
        for j, job in enumerate(problem.instance.jobs):
            for position, task in enumerate(job.tasks):
                for index in sorted(task.running):
                    name = f"{job.namespace}/{task.pod_name(job.name, index)}"
                    g = problem.pod_group[name]
                    pods.append(
                        RunningPod(
                            name=name,
                            job=j,
                            group=g,
                            subjob=int(problem.group_subjob[g]),
                            task=task.name,
                            task_position=position,
                            index=index,
                            node=problem.running_pods[name],
                        )
                    )
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
