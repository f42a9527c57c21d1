"""Who may be evicted for whom: preempt (priority) and reclaim (queue fairness); the eviction
modes; the running pods as eviction candidates. Shared by every engine that evicts.

* Preempt (Volcano's preempt action with the gang plugin): the victim job is in the preemptor's
  queue, is not the preemptor, and has a strictly lower priority.
* Reclaim (the reclaim action with the proportion plugin): the victim job is in another queue
  that is ``reclaimable`` and over its deserved share; the reclaimer's queue must stay within its
  deserved share after taking the pods it needs.
* Deserved share (:class:`QueueQuotas`): a queue's ``spec.deserved`` when it lists one, else
  proportion's weighted water-filling at session open.

The exact rules and simplifications are in ``docs/policy-rules.md``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np

from toposolve.core.instance import Queue
from toposolve.core.problem import Problem, RunningPod

EvictMode = Literal["preempt", "reclaim", "both"]  # what a run may do (``--evict``)
EvictAction = Literal["preempt", "reclaim"]  # one of Volcano's two actions
EVICT_MODES: tuple[str, ...] = ("preempt", "reclaim", "both")


def evict_actions(mode: str) -> tuple[EvictAction, ...]:
    """The actions of ``mode`` in Volcano's order (``allocate, preempt, reclaim``); ValueError
    for an unknown mode."""
    if mode not in EVICT_MODES:
        raise ValueError(f"evict mode must be one of {', '.join(EVICT_MODES)}, not {mode!r}")
    return ("preempt", "reclaim") if mode == "both" else (mode,)  # type: ignore[return-value]
_EPS = 1e-6  # milli-unit tolerance of float comparisons (Volcano compares with a small minimum too)


def preempt_allows(problem: Problem, preemptor: int, victim: int) -> bool:
    """Same queue, another job, strictly lower priority."""
    p, v = problem.jobs[preemptor], problem.jobs[victim]
    return victim != preemptor and v.queue == p.queue and v.priority < p.priority


def held_by(problem: Problem, job: int, pods_per_group: Mapping[int, int] | None = None,
            per_pod: Sequence[int] | np.ndarray | None = None) -> np.ndarray | int:
    """What job ``job`` holds: the sum over its groups of ``pods_per_group[g] × per_pod[g]``.

    The footprint a victim gives up when it is evicted whole. ``pods_per_group`` defaults to
    its running pods (the cluster before the plan; an engine that evicts as it goes passes its
    live counts). ``per_pod`` defaults to each group's requests, giving an [R] int64 vector; a
    [G] sequence of numbers (e.g. :func:`toposolve.policy.objective.eviction_pod_weights`) gives
    their weighted sum as a number."""
    groups = problem.jobs[job].groups
    pods = problem.running_per_group(groups) if pods_per_group is None else pods_per_group
    if per_pod is None:
        total = np.zeros(len(problem.resources), dtype=np.int64)
        for g in groups:
            total += pods.get(g, 0) * problem.group_request[g]
        return total
    return sum(per_pod[g] * pods.get(g, 0) for g in groups)


class QueueQuotas:
    """Deserved shares (fixed at the start of the pass) against the live queue allocations.

    ``queue_used`` maps a queue to the [R] resources it holds; an engine passes its live
    mapping (updated as it places and evicts), or :meth:`Problem.queue_usage` for the cluster
    before the plan. Whether a victim queue is over its share is judged on what it held before
    the plan less what the plan evicted from it (:meth:`viewing`, ``docs/eviction.md``)."""

    def __init__(self, problem: Problem, queue_used: Mapping[str, np.ndarray]) -> None:
        self.problem = problem
        self.queue_used = queue_used
        R = len(problem.resources)
        self.counted = np.array([r != "pods" for r in problem.resources], dtype=bool)
        declared = problem.queues
        names = sorted({cj.queue for cj in problem.jobs})
        self.queues: dict[str, Queue] = {n: declared.get(n, Queue(name=n)) for n in names}
        for name, q in declared.items():
            self.queues.setdefault(name, q)
        self.deserved: dict[str, np.ndarray] = self._proportion(names)
        self.dims: dict[str, np.ndarray] = {}  # resources that count for each queue's quota
        for name, q in self.queues.items():
            explicit = self.problem.resource_vector(q.deserved, 0.0) if q.deserved else None
            if explicit is not None:
                self.deserved[name] = explicit
                self.dims[name] = self.counted & self._listed(q.deserved)
            else:
                self.deserved.setdefault(name, np.zeros(R))
                self.dims[name] = self.counted.copy()

    # ---- construction ----------------------------------------------------------------------
    def _listed(self, amounts: dict[str, int]) -> np.ndarray:
        out = np.zeros(len(self.problem.resources), dtype=bool)
        for r in amounts:
            i = self.problem.resource_index.get(r)
            if i is not None:
                out[i] = True
        return out

    def _requests(self) -> dict[str, np.ndarray]:
        problem = self.problem
        out: dict[str, np.ndarray] = {}
        for g in range(len(problem.group_job)):
            pods = problem.group_size(g)
            q = problem.jobs[int(problem.group_job[g])].queue
            out[q] = out.get(q,
                             np.zeros(
                                 len(problem.resources))) + pods * problem.group_request[g].astype(
                                     float)
        return out

    def _proportion(self, names: list[str]) -> dict[str, np.ndarray]:
        """Proportion's deserved: weighted water-filling of the cluster among queues with jobs."""
        problem = self.problem
        R = len(problem.resources)
        total = problem.allocatable.astype(float).sum(axis=0) * self.counted
        request = self._requests()
        guarantee = {n: self.problem.resource_vector(self.queues[n].guarantee, 0.0) for n in names}
        total_guarantee = sum(guarantee.values(), start=np.zeros(R))
        cap: dict[str, np.ndarray] = {}
        for n in names:
            real = np.maximum(total - total_guarantee, 0) + guarantee[n]
            cap[n] = np.minimum(real,
                                self.problem.resource_vector(self.queues[n].capability, np.inf))
        deserved = {n: np.zeros(R) for n in names}
        met: set[str] = set()
        remaining = total.copy()
        while True:
            weight = sum(self.queues[n].weight for n in names if n not in met)
            if weight == 0:
                break
            before = remaining.copy()
            increased = np.zeros(R)
            decreased = np.zeros(R)
            for n in names:
                if n in met:
                    continue
                old = deserved[n]
                new = old + remaining * (self.queues[n].weight / weight)
                new = np.minimum(np.minimum(new, cap[n]), request.get(n, np.zeros(R)))
                new = np.maximum(new, guarantee[n])
                if np.all(request.get(n, np.zeros(R)) <= new + _EPS) or np.allclose(new, old):
                    met.add(n)
                increased += np.maximum(new - old, 0)
                decreased += np.maximum(old - new, 0)
                deserved[n] = new
            remaining = np.maximum(remaining + decreased - increased, 0)
            if np.all(remaining <= _EPS) or np.allclose(remaining, before):
                break
        return deserved

    def viewing(self, queue_used: Mapping[str, np.ndarray]) -> QueueQuotas:
        """The same deserved shares judged against another allocation mapping.

        Reclaim judges a victim queue by what its running pods still hold, without the pods the
        plan binds to it (``docs/eviction.md``, "Over its deserved share"), and a reclaimer by
        the live allocation."""
        view = copy.copy(self)
        view.queue_used = queue_used
        return view

    # ---- queries -----------------------------------------------------------------------------
    def queue(self, name: str) -> Queue:
        return self.queues.get(name) or Queue(name=name)

    def allocated(self, name: str) -> np.ndarray:
        used = self.queue_used.get(name)
        return np.zeros(len(self.problem.resources)) if used is None else used.astype(float)

    def exceeds(self, name: str, allocated: np.ndarray | None = None) -> bool:
        """Allocation above the deserved share in some counted resource."""
        alloc = self.allocated(name) if allocated is None else allocated
        dims = self.dims[name] if name in self.dims else self.counted
        return bool(np.any(alloc[dims] > self.deserved_of(name)[dims] + _EPS))

    def overused(self, name: str) -> bool:
        """Proportion's ``Overused``: deserved ≤ allocated in every counted resource."""
        dims = self.dims[name] if name in self.dims else self.counted
        return bool(np.all(self.deserved_of(name)[dims] <= self.allocated(name)[dims] + _EPS))

    def preemptive(self, name: str, demand: np.ndarray) -> bool:
        """The queue stays within its deserved share after taking ``demand``."""
        dims = (self.dims[name] if name in self.dims else self.counted) & (demand > 0)
        after = self.allocated(name) + demand
        return bool(np.all(after[dims] <= self.deserved_of(name)[dims] + _EPS))

    def deserved_of(self, name: str) -> np.ndarray:
        d = self.deserved.get(name)
        return np.zeros(len(self.problem.resources)) if d is None else d

    def share(self, name: str) -> float:
        """Max over counted resources of allocated / deserved (∞ when allocated beyond a 0
        share)."""
        dims = self.dims[name] if name in self.dims else self.counted
        alloc = self.allocated(name)[dims]
        des = self.deserved_of(name)[dims]
        ratios = [a / d if d > 0 else (np.inf if a > 0 else 0.0)
                  for a, d in zip(alloc, des, strict=True)]
        return float(max(ratios, default=0.0))

    def victim_queue_key(self, name: str) -> tuple:
        """Reclaim victim order (reverse of queue order): lower queue priority, then larger
        share."""
        return (self.queue(name).priority, -self.share(name), name)

    def reclaim_allows(self, reclaimer_queue: str, victim: int) -> bool:
        q = self.problem.jobs[victim].queue
        return q != reclaimer_queue and self.queue(q).reclaimable and self.exceeds(q)

    def cut_off(self, ordered: list[tuple[str, str, np.ndarray]]) -> set[str]:
        """Proportion's ``Reclaimable`` over (pod, queue, request) in order: the pods allowed."""
        left: dict[str, np.ndarray] = {}
        allowed: set[str] = set()
        for pod, queue, request in ordered:
            alloc = left.setdefault(queue, self.allocated(queue).copy())
            if self.exceeds(queue, alloc):
                alloc -= request
                allowed.add(pod)
        return allowed


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
