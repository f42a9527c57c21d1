"""One trace job's life during a replay: pending, running (pods on nodes), done or dropped.

Pods are identified by (task, pod index); ``nodes[t][i]`` is the node index of pod ``i`` of task
``t``, or -1 while it waits. A job *starts* when an engine's plan places it (its gang is ready);
pods an engine binds later (elastic pods beyond minAvailable) join the running job.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from toposolve.core.instance import DEVICE_MILLI, Job, Task
from toposolve.formats.trace.model import TraceJob

WAITING, PENDING, RUNNING, DONE, DROPPED = "waiting", "pending", "running", "done", "dropped"


@dataclass
class JobRun:
    index: int  # position in the trace
    trace_job: TraceJob
    pod_names: list[list[str]]  # per task: full names "<namespace>/<pod>"
    nodes: list[np.ndarray]  # per task: node index per pod, -1 = not bound
    background: bool = False  # a job of the cluster file (running before the replay starts)
    status: str = WAITING
    queued_since: float = 0.0  # arrival, or the time of the last re-queue
    start: float | None = None  # first start
    last_start: float | None = None  # when the current run began
    saved: float = 0.0  # run seconds done before ``last_start`` and kept (checkpoint, resume)
    overhead: float = 0.0  # run seconds its checkpoint saves add (restart=checkpoint:I:save=S)
    restore: float = 0.0  # seconds the current run spends restoring its checkpoint first
    end: float | None = None  # completion time (done jobs)
    epoch: int = 0  # bumped on every (re)start: stale completion events are ignored
    starts: int = 0
    evicted_pods: int = 0
    lost_gpu_seconds: float = 0.0  # evictions and moves together
    moves: int = 0  # times a defrag plan moved the job
    move_lost_gpu_seconds: float = 0.0  # the part of lost_gpu_seconds moves cost
    quality: dict = field(default_factory=dict)  # topology quality at first start
    # per task: pod index -> device -> thousandths it holds (per-device sharing; bound pods)
    device_use: list[dict[int, dict[int, int]]] = field(default_factory=list)

    @classmethod
    def of(cls, index: int, trace_job: TraceJob, node_index: dict[str, int]) -> JobRun:
        job = trace_job.job
        names = [[f"{job.namespace}/{task.pod_name(job.name, i)}" for i in range(task.replicas)]
                 for task in job.tasks]
        nodes = []
        for task in job.tasks:
            placed = np.full(task.replicas, -1, dtype=np.int64)
            for i, node in task.running.items():
                placed[i] = node_index[node]
            nodes.append(placed)
        use = [{i: dict(d) for i, d in task.device_use.items()} for task in job.tasks]
        return cls(index, trace_job, names, nodes, device_use=use)

    def bind(self, task: int, pod: int, node: int, devices: list[int] | None) -> None:
        """Pod ``pod`` of task ``task`` runs on ``node``, holding ``devices`` (or none)."""
        self.nodes[task][pod] = node
        if devices is None:
            self.device_use[task].pop(pod, None)
            return
        share = self.job.tasks[task].device_share
        milli = share.milli if share is not None else DEVICE_MILLI
        self.device_use[task][pod] = dict.fromkeys(devices, milli)

    def unbind_all(self) -> None:
        """No pod of the job is bound any more."""
        for placed, use in zip(self.nodes, self.device_use, strict=True):
            placed[:] = -1
            use.clear()

    def progress(self, t: float) -> float:
        """Run seconds done by ``t`` (saved ones included, restoring ones not); the job must
        be running."""
        assert self.last_start is not None
        return self.saved + max(0.0, t - self.last_start - self.restore)

    def run_left(self) -> float | None:
        """Seconds the current (or next) run takes to the job's end, restoring and checkpoint
        saves included (None: it has no duration)."""
        if self.trace_job.duration is None:
            return None
        return self.restore + self.trace_job.duration + self.overhead - self.saved

    def expected_end(self) -> float | None:
        """When the current run ends (None: it has no duration); the job must be running."""
        left = self.run_left()
        if left is None:
            return None
        assert self.last_start is not None
        return self.last_start + left

    @property
    def job(self) -> Job:
        return self.trace_job.job

    @property
    def key(self) -> str:
        return self.job.key

    def bound_count(self) -> int:
        return int(sum((n >= 0).sum() for n in self.nodes))

    def pod_count(self) -> int:
        return sum(len(n) for n in self.nodes)

    def fully_bound(self) -> bool:
        return all((n >= 0).all() for n in self.nodes)

    def bound_nodes(self) -> np.ndarray:
        """Node index of every bound pod (any order)."""
        parts = [n[n >= 0] for n in self.nodes]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def with_running(self, node_names: tuple[str, ...]) -> Job:
        """The job as the cycle's instance shows it: bound pods as running pods."""
        if not any((n >= 0).any() for n in self.nodes):
            return self._fresh()
        tasks: list[Task] = []
        for task, placed, use in zip(self.job.tasks, self.nodes, self.device_use, strict=True):
            running = {int(i): node_names[int(placed[i])] for i in np.flatnonzero(placed >= 0)}
            held = {i: devices for i, devices in use.items() if i in running}
            tasks.append(task.model_copy(update={"running": running, "device_use": held}))
        return self.job.model_copy(update={"tasks": tasks})

    def _fresh(self) -> Job:
        if not any(task.running for task in self.job.tasks):
            return self.job
        return self.job.model_copy(update={"tasks": [
            t.model_copy(update={"running": {}, "device_use": {}}) for t in self.job.tasks]})
