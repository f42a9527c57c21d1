"""The KAI mirror: KAI's allocate loop over jobs; per job a depth-first search over its SubGroups.

Jobs wait in one queue ordered by priority (descending), then KAI's elastic order (jobs below
their minimum first, then those exactly at it, then those above it), then creation. The first
job is popped and allocated (``AllocateJob``): below its minimum, the gang phase takes of every
SubJob the pods its minimum still needs (and of the job as many more as its minMember needs);
once the gang is met, one more pod, of the SubJob with the lowest placed-to-minimum ratio. A job
allocated with pods left is pushed back (so other jobs' gangs come before its extra pods); a job
that fails leaves the queue.

One allocation: the job's candidate domains (:func:`toposolve.engines.kai.domains.subset_nodes`)
are tried in order; inside one, each SubJob — siblings in (match index, id) order, toposolve's
deterministic stand-in for KAI's Go map order — gets its own candidates inside the job's node
set, and its pods go one at a time to the best-scored node that fits (topology score of the
nearest (Sub)group with a preferred level, then bin-packing: the node left with the least free of
the pod's dominant resource, then node index). A SubJob that fails rolls back and the job tries
its next candidate domain; if none works the allocation rolls back whole. With a required level,
a job with running or placed pods may only use the domains of that level holding them. Shared
GPUs: devices by KAI's gpupack (docs/kai-fidelity.md, "GPU sharing").
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, replace

import numpy as np

from toposolve.core.assignment import Assignment
from toposolve.core.gang import task_minimums
from toposolve.core.instance import DEVICE_MILLI
from toposolve.core.problem import POD_COUNT_RESOURCE, Problem
from toposolve.core.topology_forest import TREE_SEPARATOR
from toposolve.engines.common.admission import admission_order
from toposolve.engines.common.capacity import fit_in
from toposolve.engines.common.devices import PACK, DeviceCapacity, capacity_for
from toposolve.engines.common.queues import QueueLedger
from toposolve.engines.kai.domains import Candidates, members_of, subset_nodes
from toposolve.engines.kai.node_reasons import node_histogram
from toposolve.engines.kai.reasons import (
    DEFAULT_POD_ERROR,
    DEFAULT_SUBGROUP,
    detailed_message,
    domain_error,
    no_topology_match,
    pod_fit_error,
    tasks_fit_errors,
)


@dataclass(frozen=True)
class PodFailure:
    """A pod of ``group`` no node of ``nodes`` took: ``index`` pods of the run (or attempt) were
    placed before it; ``idx``/``fits`` the nodes that took pods of the run and how many, ``free``
    the capacity array at the failure."""

    group: int
    index: int
    nodes: np.ndarray
    idx: np.ndarray
    fits: np.ndarray
    free: np.ndarray


class KaiEngine:
    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.cap = capacity_for(problem, PACK)  # KAI's gpupack device choice
        self.assignment = Assignment()
        self.pods_resource = problem.resource_index.get(POD_COUNT_RESOURCE)
        self.placed: dict[int, int] = {}  # group -> pods placed so far
        self.members = problem.topology.members.astype(np.int64)
        # the int64 membership of each constraint tree (KAI Topologies crossing the main tree)
        self.tree_members = {name: t.members.astype(np.int64) for name, t in problem.trees.items()}
        self.kai_reason: str | None = None  # KAI's message for the last failed allocation
        self.pod_failure: PodFailure | None = None  # the last failed run
        self.queues = QueueLedger(problem)

    # -- rollback ---------------------------------------------------------------------------
    def checkpoint(self):
        return self.cap.snapshot(), {g: dict(v)
                                     for g, v in self.assignment.counts.items()}, dict(self.placed)

    def rollback(self, saved) -> None:
        self.cap.restore(saved[0].copy())
        self.assignment.counts = {g: dict(v) for g, v in saved[1].items()}
        self.placed = dict(saved[2])

    def members_of_tree(self, limit):
        """The int64 membership of the tree ``limit`` is measured in (KAI: its Topology's)."""
        return self.members if limit is None or limit.tree is None else self.tree_members[
            limit.tree]

    # -- pods -------------------------------------------------------------------------------
    def place_group(self, g: int, count: int, nodes: np.ndarray, scores: np.ndarray | None) -> bool:
        """``count`` pods of group ``g``, one at a time, each to the best node (module doc).

        Placing a pod only makes its node fuller, so it stays the best until it is full: the
        per-pod choice equals filling the nodes in one sorted order."""
        p = self.problem
        req = p.group_request[g]
        idx = np.flatnonzero(nodes & p.group_feasible[g])
        fits = self.fit_counts(g, idx)
        idx, fits = idx[fits > 0], fits[fits > 0]
        if int(fits.sum()) < count:
            self.pod_failure = self.failed_pod(g, nodes, idx, fits)
            return False
        dominant = self.dominant(g)
        topo = scores[idx] if scores is not None else np.zeros(idx.size)
        if self.shares_device(g):
            self.place_shared(g, count, idx, fits, topo)
            return True
        left = self.cap.free[idx, dominant] - req[dominant]
        for k in np.lexsort((idx, left, -topo)).tolist():
            if count == 0:
                break
            take = min(int(fits[k]), count)
            n = int(idx[k])
            self.assignment.add(g, n, take)
            self.cap.take(g, n, take)
            self.placed[g] = self.placed.get(g, 0) + take
            count -= take
        return True

    def dominant(self, g: int) -> int:
        """The resource of group ``g``'s pods largest against the largest node's allocatable."""
        p = self.problem
        req = p.group_request[g]
        return int(np.argmax(np.where(req > 0, req / np.maximum(p.allocatable.max(axis=0), 1),
                                      -1)))

    def fit_counts(self, g: int, idx: np.ndarray) -> np.ndarray:
        """Pods of group ``g`` each node of ``idx`` holds (its devices too, when shared)."""
        if isinstance(self.cap, DeviceCapacity):
            return self.cap.fit_counts_of(g, idx)
        return fit_in(self.cap.free[idx], self.problem.group_request[g])

    def shares_device(self, g: int) -> bool:
        """Do group ``g``'s pods take a fraction of a device (KAI's fractional GPU pods)?"""
        p = self.problem
        return p.has_devices and 0 < int(p.group_device_milli[g]) < DEVICE_MILLI

    def place_shared(self, g: int, count: int, idx: np.ndarray, fits: np.ndarray,
                     topo: np.ndarray) -> None:
        """``count`` fractional pods one at a time: topology score, then KAI's gpusharingorder
        (a node with an already shared device the pod fits on first), then bin-packing, then
        node index. Sharing can end on a node before it is full, so each pod re-scores."""
        req = self.problem.group_request[g]
        milli = int(self.problem.group_device_milli[g])
        dominant = self.dominant(g)
        fits = fits.copy()
        for _ in range(count):
            room = self.cap.room.free[idx]
            shared = ((room < DEVICE_MILLI) & (room >= milli)).any(axis=1)
            left = self.cap.free[idx, dominant] - req[dominant]
            order = np.lexsort((idx, left, ~shared, -topo, fits <= 0))
            k = int(order[0])
            n = int(idx[k])
            self.assignment.add(g, n, 1)
            self.cap.take(g, n, 1)
            self.placed[g] = self.placed.get(g, 0) + 1
            fits[k] = self.cap.fit_counts_of(g, idx[k:k + 1])[0]

    def failed_pod(self, g: int, nodes: np.ndarray, idx: np.ndarray,
                   fits: np.ndarray) -> PodFailure:
        """A run of group ``g`` that ``nodes`` cannot hold: the pods that fit (``idx``, ``fits``)
        are taken first, then the next pod is refused by every node. Its node reasons are
        counted only when a message needs them (:meth:`failure_reasons`)."""
        return PodFailure(g, int(fits.sum()), nodes, idx, fits, self.cap.free)

    def failure_reasons(self, failure: PodFailure) -> dict[str, int] | None:
        """The node reasons of the pod that failed (the capacity as it was then: a rollback
        replaces ``cap.free``, it never writes into the array kept)."""
        free = failure.free.copy()
        free[failure.idx] -= failure.fits[:, None] * self.problem.group_request[failure.group]
        every = np.flatnonzero(failure.nodes)
        return node_histogram(self.problem, failure.group, every, free[every])

    def place_pods(self, pods: list[int], nodes: np.ndarray, scores: np.ndarray | None) -> bool:
        """Pods (their groups, in order) one at a time; consecutive pods of a group as one run.
        On a failure ``pod_failure`` holds the failed pod (its index in ``pods``)."""
        runs: list[list[int]] = []
        for g in pods:
            if runs and runs[-1][0] == g:
                runs[-1][1] += 1
            else:
                runs.append([g, 1])
        offset = 0
        for g, k in runs:
            if not self.place_group(g, k, nodes, scores):
                self.pod_failure = replace(self.pod_failure, index=offset + self.pod_failure.index)
                return False
            offset += k
        return True

    # -- subgroups --------------------------------------------------------------------------
    def allocate_subjob(self, s: int, pods: list[int], nodes: np.ndarray,
                        inherited: np.ndarray | None) -> bool:
        sj = self.problem.subjobs[s]
        limit = sj.limit if sj.policy >= 0 else None  # the job-level SubJob is the job itself
        within = self.required_domains(sj.groups, limit)
        cand = subset_nodes(self.problem, self.cap.free, limit, pods, nodes, self.pods_resource,
                            self.members_of_tree(limit), within)
        scores = cand.scores if cand.scores is not None else inherited
        for node_set in cand.node_sets:
            saved = self.checkpoint()
            if self.place_pods(pods, node_set, scores):
                return True
            self.rollback(saved)
        return False

    def allocate_job(self, j: int, pods_by_subjob: dict[int, list[int]]) -> str | None:
        p = self.problem
        cj = p.jobs[j]
        every = [g for pods in pods_by_subjob.values() for g in pods]
        nodes = np.ones(p.n_nodes, dtype=bool)
        within = self.required_domains(cj.groups, cj.limit)
        cand = subset_nodes(p, self.cap.free, cj.limit, every, nodes, self.pods_resource,
                            self.members_of_tree(cj.limit), within)
        self.kai_reason = self.pod_failure = None
        if not cand.node_sets:
            self.kai_reason = self.topology_message(j, cand)
            return cand.reason or "no candidate domain"
        order = sorted(pods_by_subjob, key=lambda s: (p.subjobs[s].match_index, p.subjobs[s].id))
        failures: list[PodFailure | None] = []  # each attempt's failed pod
        for node_set in cand.node_sets:
            saved = self.checkpoint()
            self.pod_failure = None
            if all(self.allocate_subjob(s, pods_by_subjob[s], node_set,
                                        cand.scores) for s in order):
                return None
            failures.append(self.pod_failure)
            self.rollback(saved)
        self.kai_reason = self.pod_message(j, pods_by_subjob, failures)
        return "resources were not found for the gang in any candidate domain"

    def pod_message(self, j: int, pods_by_subjob: dict[int, list[int]],
                    failures: list[PodFailure | None]) -> str | None:
        """KAI's PodGroup message when, in each attempt (candidate domain), a pod found no node:
        one job fit error per attempt, each with its pod's node reasons summed over the attempts
        that tried it (``AddTaskFitErrors``). None when KAI would say something else
        (docs/kai-fidelity.md "Reasons in KAI's words"): SubGroups, an attempt that failed
        otherwise, or a failed pod placed in an earlier attempt (KAI adds the nodes it passed
        over before its pick there, which toposolve does not replay). With SubGroups, only when
        one SubGroup without a constraint of its own has pods in the step: with several, which
        fails first is Go's map order (random)."""
        p = self.problem
        if len(pods_by_subjob) != 1 or not failures or None in failures:
            return None
        (s, pods), = pods_by_subjob.items()
        if p.subjobs[s].policy >= 0 and p.subjobs[s].limit is not None:
            return None  # the SubGroup's own domains are more attempts, worded per domain
        if len(p.jobs[j].subjobs) > 1 and any(p.subjobs[x].policy < 0 for x in p.jobs[j].subjobs):
            return None  # SubGroups beside pods of none: KAI's PodSets are not toposolve's
        need = self.podset_min(s)
        # isGangScheduling: some PodSet of the job needs more than one pod
        gang = (max(self.podset_min(x) for x in p.jobs[j].subjobs) > 1
                and self.active(s) < need)
        subgroup = None if len(p.jobs[j].subjobs) == 1 and p.subjobs[s].policy < 0 else (
            p.subjobs[s].id.rsplit("/", 1)[-1].removeprefix("subgroup-")
            if p.subjobs[s].policy >= 0 else DEFAULT_SUBGROUP)
        summed: dict[int, dict[str, int]] = {}  # the failed pod's index -> its reasons so far
        errors, furthest = [], 0
        for failure in failures:
            counts = self.failure_reasons(failure) if failure.index >= furthest else None
            if counts is None:
                return None
            furthest = failure.index
            total = summed.setdefault(failure.index, {})
            for reason, n in counts.items():
                total[reason] = total.get(reason, 0) + n
            g = failure.group
            before = sum(1 for x in pods[:failure.index] if x == g)  # pods of g ahead of it
            pod = p.group_pending[g][self.placed.get(g, 0) + before]
            # no node gave a reason (a GPU-memory pod): KAI's default error for the pod
            words = tasks_fit_errors(total, None if total else DEFAULT_POD_ERROR)
            errors.append(pod_fit_error(failure.index, need, gang, pod, words, subgroup))
        return detailed_message(errors)

    def topology_message(self, j: int, cand: Candidates) -> str | None:
        """KAI's PodGroup message when the job's own constraint leaves no candidate domain (None
        when KAI would say something else: docs/kai-fidelity.md "Reasons in KAI's words")."""
        p = self.problem
        cj = p.jobs[j]
        topology = p.instance.jobs[j].topology_name
        if cj.limit is None or topology is None or not (cand.lcd_failed or cand.misfits):
            return None
        # a forest's or constraint tree's tier names are "<tree>:<label>"; KAI prints the label
        labels = {tier: name.split(TREE_SEPARATOR, 1)[-1]
                  for name, tier in p.topology_of(cj.limit).tier_name_to_tier.items()}
        required = labels.get(cj.limit.tier, "") if cj.limit.hard else ""
        if cand.lcd_failed:
            return detailed_message([no_topology_match(topology, required, cj.key,
                                                       DEFAULT_SUBGROUP, cand.reason)])
        errors = [domain_error(d, DEFAULT_SUBGROUP, lines) for d, lines in cand.misfits]
        return detailed_message([*errors, no_topology_match(topology, required, cj.key,
                                                            DEFAULT_SUBGROUP)])

    # -- jobs -------------------------------------------------------------------------------
    def podset_min(self, s: int) -> int:
        """The gang of SubJob ``s`` (KAI's PodSet minAvailable; the job-level SubJob has the
        job's)."""
        sj = self.problem.subjobs[s]
        return sj.min_available if sj.policy >= 0 else self.problem.jobs[sj.job].min_available

    def active(self, s: int) -> int:
        """Pods of SubJob ``s`` running or placed so far."""
        p = self.problem
        return sum(sum(p.group_running[g].values()) + self.placed.get(g,
                0) for g in p.subjobs[s].groups)

    def pending_pods(self, s: int) -> list[int]:
        """SubJob ``s``'s pods still to place (their groups), in group order."""
        p = self.problem
        return [g for g in p.subjobs[s].groups
                for _ in range(len(p.group_pending[g]) - self.placed.get(g, 0))]

    def min_state(self, j: int) -> int:
        """KAI's elastic job order: 0 below its minimum, 1 exactly at it, 2 above it."""
        counts = [(self.active(s), self.podset_min(s)) for s in self.problem.jobs[j].subjobs]
        if any(a < m for a, m in counts):
            return 0
        return 1 if all(a == m for a, m in counts) else 2

    def job_key(self, j: int) -> tuple[int, int, int, int]:
        """Priority descending, then the elastic state, then creation, then index."""
        cj = self.problem.jobs[j]
        return (-cj.priority, self.min_state(j), cj.creation_index, j)

    def short_subjob(self, j: int) -> str | None:
        """Why job ``j``'s gang can never be met: per-role minimums (KAI's PodGroup has none, so
        it would not keep them), or a SubJob with fewer pods than its minimum (a Kueue podset's
        last, incomplete slice); None when every SubJob can reach it."""
        if task_minimums(self.problem.jobs[j]):
            return "per-task minimums (minTaskMember) are not expressible in KAI's PodGroup"
        for s in self.problem.jobs[j].subjobs:
            pods = self.active(s) + len(self.pending_pods(s))
            if pods < self.podset_min(s):
                return (f"SubJob {self.problem.subjobs[s].id} has {pods} pods, fewer than its "
                        f"minimum {self.podset_min(s)}: its gang can never be met")
        return None

    def gang_pods(self, j: int) -> dict[int, list[int]]:
        """SubJob -> pods of the gang phase: what each SubJob still needs to reach its minimum
        (and, of the job, as many more as its minMember needs)."""
        cj = self.problem.jobs[j]
        gang: dict[int, list[int]] = {}
        rest: list[tuple[int, int]] = []
        for s in cj.subjobs:
            pods = self.pending_pods(s)
            need = max(0, self.podset_min(s) - self.active(s))
            gang[s] = pods[:need]
            rest += [(s, g) for g in pods[need:]]
        short = max(0, cj.min_available - sum(self.active(s) + len(gang[s]) for s in cj.subjobs))
        for s, g in rest[:short]:
            gang[s].append(g)
        return {s: pods for s, pods in gang.items() if pods}

    def elastic_pod(self, j: int) -> dict[int, list[int]]:
        """One pod beyond the minimums (``collectTasksFromSubGroupSet`` once the gang is met): of
        the SubJob with the lowest placed-to-minimum ratio that has pods left, ties by (match index,
        id)."""
        p = self.problem

        def ratio(s: int) -> tuple[float, int, str]:
            need = self.podset_min(s)
            return (self.active(s) / need if need else float("inf"), p.subjobs[s].match_index,
                    p.subjobs[s].id)

        for s in sorted(p.jobs[j].subjobs, key=ratio):
            pods = self.pending_pods(s)
            if pods:
                return {s: pods[:1]}
        return {}

    def run(self) -> Assignment:
        """KAI's allocate loop: pop the first job, allocate its gang (or, once the gang is met, one
        more pod), push it back while it has pods left; a job that fails leaves the queue."""
        heap = [(self.job_key(j), j) for j in admission_order(self.problem)]
        heapq.heapify(heap)
        while heap:
            _, j = heapq.heappop(heap)
            gang = self.min_state(j) == 0
            if gang and (short := self.short_subjob(j)) is not None:
                self.assignment.reasons[j] = short
                continue
            pods = self.gang_pods(j) if gang else self.elastic_pod(j)
            if not pods:
                continue
            every = [g for step in pods.values() for g in step]
            if (over := self.queues.overrun(j, every)) is not None:  # the queue's GPU limit
                if gang:
                    self.assignment.reasons[j] = over
                continue
            saved = self.checkpoint()
            why = self.allocate_job(j, pods)
            if why is None:
                self.queues.take(j, every)
            else:
                self.rollback(saved)
                if gang:
                    self.assignment.reasons[j] = why
                    if self.kai_reason is not None:
                        self.assignment.scheduler_reasons[j] = self.kai_reason
                continue
            if any(self.pending_pods(s) for s in self.problem.jobs[j].subjobs):
                heapq.heappush(heap, (self.job_key(j), j))
        return self.with_devices()

    def with_devices(self) -> Assignment:
        """The assignment with the devices the placed pods took (per-device sharing)."""
        if isinstance(self.cap, DeviceCapacity):
            return self.cap.add_devices_to(self.assignment)
        return self.assignment

    def required_domains(self, groups: list[int], limit) -> np.ndarray | None:
        """With a required level, the nodes of that level's domains holding running or placed pods
        of ``groups`` (``getRelevantDomainsWithAllocatedPods``); None when unconstrained. Pods
        no one domain at or below that level holds (on a node outside the tree, or in two
        domains) leave no node: any pod added would break the limit."""
        p = self.problem
        if limit is None or not limit.hard:
            return None
        nodes = {n for g in groups for n in (*p.group_running[g],
                                             *self.assignment.counts.get(g, {}))}
        if not nodes:
            return None
        topo = p.topology_of(limit)
        mask = np.zeros(p.n_nodes, dtype=bool)
        if topo.tier[topo.lca_of_nodes(sorted(nodes))] > limit.tier:  # already past the level
            return mask
        for n in sorted(nodes):
            h = int(topo.node_home[n])
            while int(topo.tier[h]) < limit.tier and topo.parent[h] >= 0:
                h = int(topo.parent[h])
            mask[members_of(p, h, topo)] = True
        return mask

