"""One cycle's :class:`~toposolve.core.problem.Problem`, compiled without redoing the cluster's part.

:func:`toposolve.core.problem.compile_problem` builds the HyperNode tree, the node arrays and every
task's node predicates from scratch; across the cycles of a replay the nodes and HyperNodes never
change, so the tree, the arrays, the node index and the predicate results are built once and the
cycle compiles only its jobs, with the very same job compiler (``problem._Compiler``). Predicates
are cached by the identity of a task's constraints object (the replay's jobs keep theirs for the
whole run), so no cycle serialises constraints again.

The replay's **usage jobs** (:mod:`.cycle`: one running pod per busy node and queue) are
compiled from the arrays they were made from, a few numpy operations instead of one pass of the
job compiler per node: the same job and SubJob (by the job compiler's own ``add_job`` and
``add_subjob``), one pod group per usage pod, and every other field as the job compiler sets it.
``tests/replay/test_compile.py`` checks that every field of the result equals
``compile_problem`` of the same instance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toposolve.core.instance import Instance, Job, PodConstraints, Task
from toposolve.core.problem import Problem, RunningPod, _Compiler, _node_arrays
from toposolve.core.topology import build_topology


@dataclass
class UsageJob:
    """A usage job and the arrays it was made from: its tasks are one running pod each."""

    job: Job  # task k: one pod running on nodes[k], named ``n<node>``, no labels, shared constraints
    nodes: np.ndarray  # [K] node of each task's pod, ascending
    requests: np.ndarray  # [K, R] each pod's requests as compiled (``pods`` included)
    pod_names: list[str]  # [K] full names of the pods


class _CycleCompiler(_Compiler):
    """The job compiler with a predicate cache and a node index that outlive one cycle."""

    shared: dict[int, tuple[PodConstraints, np.ndarray]]

    def task_feasible(self, task: Task) -> np.ndarray:
        hit = self.shared.get(id(task.constraints))
        if hit is None:
            hit = (task.constraints, super().task_feasible(task))  # keeps the object (and its id) alive
            self.shared[id(task.constraints)] = hit
        return hit[1]

    def add_usage_job(self, j: int, usage: UsageJob) -> None:
        """What ``add_job`` gives for ``usage.job``, group and pod fields in bulk."""
        job, nodes, requests = usage.job, usage.nodes.tolist(), usage.requests
        if not job.tasks:
            self.add_job(j, job)
            return
        self.add_job(j, job.model_copy(update={"tasks": []}))  # the job's own fields, no pods
        cj = self.jobs[-1]
        cj.task_labels = {task.name: task.labels for task in job.tasks}  # read-only: no copies per cycle
        s = self.add_subjob(cj, job, job.key, -1, 0)
        g0, k = len(self.group_job), len(nodes)
        groups = range(g0, g0 + k)
        self.subjobs[s].groups.extend(groups)
        cj.groups.extend(groups)
        tasks = [task.name for task in job.tasks]
        self.group_job += [j] * k
        self.group_subjob += [s] * k
        self.group_task += tasks
        self.group_priority += [cj.priority] * k
        self.group_request += list(requests)
        self.group_feasible += [self.task_feasible(job.tasks[0])] * k  # one constraints object
        self.group_preference += [self.task_preference(job.tasks[0])] * k
        self.group_pending += [[] for _ in groups]
        self.group_running += [{n: 1} for n in nodes]
        self.group_running_absent += [0] * k
        names = usage.pod_names
        # usage pods come first and their names are unique; a later job's pod reusing one is
        # refused by ``add_pod`` as in compile_problem
        self.pod_group.update(zip(names, groups, strict=True))
        self.running_pods.update(zip(names, nodes, strict=True))
        self.running += [
            RunningPod(name, j, g, s, task, position, 0, n)
            for position, (name, g, task, n) in enumerate(zip(names, groups, tasks, nodes, strict=True))
        ]
        np.add.at(self.used, usage.nodes, requests)


class CycleCompiler:
    """Compiles cycle instances that share ``cluster``'s nodes and HyperNodes."""

    def __init__(self, cluster: Instance, resources: tuple[str, ...]) -> None:
        self.topology = build_topology(cluster.nodes, cluster.hypernodes, source=cluster.source)
        self.resources = resources
        self.allocatable, self.schedulable = _node_arrays(cluster, resources)
        self.shared: dict[int, tuple[PodConstraints, np.ndarray]] = {}

    def compile(self, instance: Instance, usage: list[UsageJob] = ()) -> Problem:
        """The problem of ``instance``, whose first jobs are the ``usage`` jobs."""
        compiler = _CycleCompiler(instance, self.topology, self.resources)
        compiler.shared = self.shared
        for j, u in enumerate(usage):
            compiler.add_usage_job(j, u)
        for j, job in enumerate(instance.jobs[len(usage):], start=len(usage)):
            compiler.add_job(j, job)
        return compiler.problem(self.allocatable, self.schedulable)
