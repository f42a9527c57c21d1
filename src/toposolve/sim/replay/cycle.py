"""The instance one scheduling cycle shows the engine, built incrementally.

Jobs whose pods all run and that no engine may touch (no eviction mode) are **folded**: their
requests are summed per (queue, node) into one running *usage pod* (task ``n<node index>``) of
a synthetic job ``replay-usage/<queue>``. Engines see exactly the same node usage, HyperNode usage
and queue usage as with every job listed (these are all the greedy and CP-SAT read of other jobs'
running pods), and the checker still verifies capacity against it, but a cycle costs
O(nodes + jobs that matter) instead of O(running pods). Usage pods are cached per (queue, node)
and rebuilt only when that node's usage changes. Everything else — pending jobs, jobs with some
pods still waiting, and every running job when eviction is on — is listed as itself.
"""

from __future__ import annotations

import numpy as np

from toposolve.core.instance import (
    DEVICE_MILLI,
    Instance,
    Job,
    PodConstraints,
    PriorityClass,
    Queue,
    Task,
)
from toposolve.core.problem import POD_COUNT_RESOURCE, Problem
from toposolve.formats.trace.bulk import make_job, make_task
from toposolve.formats.trace.model import Trace
from toposolve.sim.replay.compile import CycleCompiler, UsageJob
from toposolve.sim.replay.jobs import JobRun

USAGE_NAMESPACE = "replay-usage"
# one object shared by every usage pod (predicates cached by identity)
USAGE_CONSTRAINTS = PodConstraints()


def merged(own: list, extra: list) -> list:
    """``own`` plus the items of ``extra`` whose name ``own`` does not define."""
    names = {item.name for item in own}
    return [*own, *(item for item in extra if item.name not in names)]


class CycleBuilder:
    """Cluster arrays and folded usage; :meth:`compile` gives one cycle's problem."""

    def __init__(self, cluster: Instance, trace: Trace) -> None:
        self.nodes = cluster.nodes
        self.cluster_nodes = cluster.nodes  # as the cluster file has them (no node down)
        self.hypernodes = cluster.hypernodes
        self.constraint_trees = cluster.constraint_trees  # crossing KAI Topologies, if any
        self.queues: list[Queue] = merged(cluster.queues, trace.queues)
        self.priority_classes: list[PriorityClass] = merged(cluster.priority_classes,
                                                            trace.priority_classes)
        self.node_names = tuple(n.name for n in cluster.nodes)
        self.node_index = {name: i for i, name in enumerate(self.node_names)}
        names = {r for n in cluster.nodes for r in n.allocatable}
        for job in [*cluster.jobs, *(tj.job for tj in trace.jobs)]:
            names.update(r for task in job.tasks for r in task.requests)
        self.resources = tuple(sorted(names))
        self.device_resource = _shared_resource(cluster, trace)
        self.compiler = CycleCompiler(cluster, self.resources)
        self.allocatable = self.compiler.allocatable
        self.folded: dict[str, np.ndarray] = {}  # queue -> [N, R] requests of folded pods
        self.folded_pods: dict[str, np.ndarray] = {}  # queue -> [N] folded pod count
        # queue -> [N, D] thousandths of each device the folded pods hold (per-device sharing)
        self.folded_devices: dict[str, np.ndarray] = {}
        gpus = [n.allocatable.get(self.device_resource or "", 0) // DEVICE_MILLI
                for n in cluster.nodes]
        self.device_width = max(gpus, default=0)
        # queue -> node -> usage task, pod name
        self._usage_tasks: dict[str, dict[int, tuple[Task, str]]] = {}
        self._dirty: set[tuple[str, int]] = set()
        # id(task) -> [R]; tasks live as long as the trace
        self._requests: dict[int, np.ndarray] = {}

    def request(self, task: Task) -> np.ndarray:
        """[R] requests of one pod of ``task`` (a pod counts 1000 milli of ``pods``, as
        compiled)."""
        vector = self._requests.get(id(task))
        if vector is None:
            vector = np.array([task.requests.get(r, 0) for r in self.resources], dtype=np.int64)
            if POD_COUNT_RESOURCE in self.resources:
                p = self.resources.index(POD_COUNT_RESOURCE)
                vector[p] = max(vector[p], 1000)
            self._requests[id(task)] = vector
        return vector

    def fold(self, run: JobRun, sign: int) -> None:
        """Add (``sign`` = 1) or remove (-1) a running job's bound pods to its queue's usage."""
        queue = run.job.queue
        usage = self.folded.setdefault(queue, np.zeros_like(self.allocatable))
        pods = self.folded_pods.setdefault(queue, np.zeros(len(self.nodes), dtype=np.int64))
        for task, placed in zip(run.job.tasks, run.nodes, strict=True):
            bound = placed[placed >= 0]
            if len(bound):
                np.add.at(usage, bound, sign * self.request(task))
                np.add.at(pods, bound, sign)
                self._dirty.update((queue, int(n)) for n in bound)
        if self.device_resource is not None:
            self._fold_devices(run, queue, sign)

    def _fold_devices(self, run: JobRun, queue: str, sign: int) -> None:
        held = self.folded_devices.setdefault(
            queue, np.zeros((len(self.nodes), self.device_width), dtype=np.int64))
        for placed, use in zip(run.nodes, run.device_use, strict=True):
            for pod, devices in use.items():
                for device, milli in devices.items():
                    held[placed[pod], device] += sign * milli

    def _usage_task(self, queue: str, n: int) -> tuple[Task, str] | None:
        pods = int(self.folded_pods[queue][n])
        if pods == 0:
            return None
        amounts = self.folded[queue][n]
        requests = {r: int(a) for r, a in zip(self.resources, amounts.tolist(), strict=True) if a}
        if POD_COUNT_RESOURCE in self.resources:
            requests[POD_COUNT_RESOURCE] = pods * 1000
        held = self.folded_devices.get(queue)
        use = {} if held is None else {
            int(d): int(m) for d, m in enumerate(held[n].tolist()) if m}
        task = make_task(name=f"n{n}", replicas=1, requests=requests,
                         running={0: self.node_names[n]},
                         constraints=USAGE_CONSTRAINTS, device_use={0: use} if use else {})
        return task, f"{USAGE_NAMESPACE}/{task.pod_name(queue, 0)}"

    def usage_jobs(self) -> list[UsageJob]:
        """One usage job per queue, one task per busy node; only changed tasks are rebuilt."""
        for key in self._dirty:
            task = self._usage_tasks.get(key[0], {})
            rebuilt = self._usage_task(*key)
            if rebuilt is None:
                task.pop(key[1], None)
            else:
                self._usage_tasks.setdefault(key[0], {})[key[1]] = rebuilt
        self._dirty.clear()
        out = []
        for queue, tasks in sorted(self._usage_tasks.items()):
            if not tasks:
                continue
            order = sorted(tasks)
            nodes = np.array(order, dtype=np.int64)
            job = make_job(namespace=USAGE_NAMESPACE, name=queue, queue=queue,
                           tasks=[tasks[n][0] for n in order])
            requests = self.folded[queue][nodes]
            # a usage pod asks for its pods' count of ``pods``
            if POD_COUNT_RESOURCE in self.resources:
                pods = self.resources.index(POD_COUNT_RESOURCE)
                requests[:, pods] = self.folded_pods[queue][nodes] * 1000
            held = self.folded_devices.get(queue)
            out.append(UsageJob(job, nodes, requests, [tasks[n][1] for n in order],
                                None if held is None else held[nodes]))
        return out

    def set_down(self, down: set[int]) -> None:
        """Mark the nodes in ``down`` unschedulable (failed), the others as in the cluster file,
        and recompile the cluster's arrays (predicates read schedulability)."""
        self.nodes = [n.model_copy(update={"unschedulable": True}) if i in down else n
                      for i, n in enumerate(self.cluster_nodes)]
        cluster = Instance.model_construct(nodes=self.nodes, hypernodes=self.hypernodes, jobs=[],
                                           constraint_trees=self.constraint_trees,
                                           queues=self.queues,
                                           priority_classes=self.priority_classes, source="",
                                           device_resource=self.device_resource)
        self.compiler = CycleCompiler(cluster, self.resources)

    def compile(self, listed: list[Job], source: str) -> Problem:
        """The cycle's problem: the cluster, the usage jobs, then ``listed`` jobs."""
        usage = self.usage_jobs()
        instance = Instance.model_construct(
            nodes=self.nodes,
            hypernodes=self.hypernodes,
            constraint_trees=self.constraint_trees,
            jobs=[*(u.job for u in usage), *listed],
            queues=self.queues,
            priority_classes=self.priority_classes,
            source=source,
            device_resource=self.device_resource,
        )
        return self.compiler.compile(instance, usage)

    def usage(self, runs: list[JobRun]) -> np.ndarray:
        """[N, R] requests of every bound pod: folded usage plus the listed ``runs``."""
        total = self.usage_of(runs)
        for usage in self.folded.values():
            total += usage
        return total

    def usage_of(self, runs: list[JobRun]) -> np.ndarray:
        """[N, R] requests of the bound pods of ``runs``."""
        total = np.zeros_like(self.allocatable)
        for run in runs:
            for task, placed in zip(run.job.tasks, run.nodes, strict=True):
                bound = placed[placed >= 0]
                if len(bound):
                    np.add.at(total, bound, self.request(task))
        return total


def _shared_resource(cluster: Instance, trace: Trace) -> str | None:
    """The resource placed per device in the replay: the cluster's, else the trace's first
    ``deviceShare`` resource (every cycle places it per device, shares or not)."""
    if cluster.device_resource is not None:
        return cluster.device_resource
    shares = (t.device_share for tj in trace.jobs for t in tj.job.tasks)
    return next((s.resource for s in shares if s is not None), None)
