"""The KAI mirror: jobs by priority then age; per job a depth-first search over its SubGroups.

Per job (``AllocateJob``): the gang phase takes, of every SubJob, the pods its minimum still
needs (and of the job as many more as its minMember needs). The job's candidate domains
(:func:`toposolve.engines.kai.domains.subset_nodes`) are tried in order; inside one, each SubJob
— siblings in (match index, id) order, toposolve's deterministic stand-in for KAI's Go map order
— gets its own candidates inside the job's node set, and its pods go one at a time to the
best-scored node that fits (topology score of the nearest (Sub)group with a preferred level, then
bin-packing: the node left with the least free of the pod's dominant resource, then node index).
A SubJob that fails rolls back and the job tries its next candidate domain; if none works the
job rolls back whole. Pods beyond the minimums are then placed one at a time, each as its own
allocation (with the job's placed pods pinning a required domain).
"""

from __future__ import annotations

import numpy as np

from ...problem import POD_COUNT_RESOURCE, Problem
from ..assignment import Assignment
from ..capacity import Capacity, fit_in
from ..kueue.engine import admission_order
from .domains import subset_nodes


class KaiEngine:
    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.cap = Capacity(problem)
        self.assignment = Assignment()
        self.pods_resource = problem.resource_index.get(POD_COUNT_RESOURCE)
        self.placed: dict[int, int] = {}  # group -> pods placed so far
        self.members = problem.topology.members.astype(np.int64)

    # -- rollback ---------------------------------------------------------------------------
    def checkpoint(self):
        return self.cap.snapshot(), {g: dict(v) for g, v in self.assignment.counts.items()}, dict(self.placed)

    def rollback(self, saved) -> None:
        self.cap.restore(saved[0].copy())
        self.assignment.counts = {g: dict(v) for g, v in saved[1].items()}
        self.placed = dict(saved[2])

    # -- pods -------------------------------------------------------------------------------
    def place_group(self, g: int, count: int, nodes: np.ndarray, scores: np.ndarray | None) -> bool:
        """``count`` pods of group ``g``, one at a time, each to the best node (module doc).

        Placing a pod only makes its node fuller, so it stays the best until it is full: the
        per-pod choice equals filling the nodes in one sorted order."""
        p = self.problem
        req = p.group_request[g]
        idx = np.flatnonzero(nodes & p.group_feasible[g])
        fits = fit_in(self.cap.free[idx], req)
        idx, fits = idx[fits > 0], fits[fits > 0]
        if int(fits.sum()) < count:
            return False
        dominant = int(np.argmax(np.where(req > 0, req / np.maximum(p.allocatable.max(axis=0), 1), -1)))
        left = self.cap.free[idx, dominant] - req[dominant]
        topo = scores[idx] if scores is not None else np.zeros(idx.size)
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

    def place_pods(self, pods: list[int], nodes: np.ndarray, scores: np.ndarray | None) -> bool:
        """Pods (their groups, in order) one at a time; consecutive pods of a group as one run."""
        runs: list[list[int]] = []
        for g in pods:
            if runs and runs[-1][0] == g:
                runs[-1][1] += 1
            else:
                runs.append([g, 1])
        return all(self.place_group(g, k, nodes, scores) for g, k in runs)

    # -- subgroups --------------------------------------------------------------------------
    def allocate_subjob(self, s: int, pods: list[int], nodes: np.ndarray, inherited: np.ndarray | None) -> bool:
        sj = self.problem.subjobs[s]
        limit = sj.limit if sj.policy >= 0 else None  # the job-level SubJob is the job itself
        cand = subset_nodes(self.problem, self.cap.free, limit, pods, nodes, self.pods_resource, self.members)
        scores = cand.scores if cand.scores is not None else inherited
        for node_set in cand.node_sets:
            saved = self.checkpoint()
            if self.place_pods(pods, node_set, scores):
                return True
            self.rollback(saved)
        return False

    def allocate_job(self, j: int, pods_by_subjob: dict[int, list[int]], nodes: np.ndarray) -> str | None:
        p = self.problem
        cj = p.jobs[j]
        every = [g for pods in pods_by_subjob.values() for g in pods]
        cand = subset_nodes(p, self.cap.free, cj.limit, every, nodes, self.pods_resource, self.members)
        if not cand.node_sets:
            return cand.reason or "no candidate domain"
        order = sorted(pods_by_subjob, key=lambda s: (p.subjobs[s].match_index, p.subjobs[s].id))
        for node_set in cand.node_sets:
            saved = self.checkpoint()
            if all(self.allocate_subjob(s, pods_by_subjob[s], node_set, cand.scores) for s in order):
                return None
            self.rollback(saved)
        return "resources were not found for the gang in any candidate domain"

    # -- jobs -------------------------------------------------------------------------------
    def gang_pods(self, j: int) -> tuple[dict[int, list[int]], list[tuple[int, int]]]:
        """(SubJob -> pods of the gang phase, remaining (SubJob, pod group) one per pod)."""
        p = self.problem
        cj = p.jobs[j]
        gang: dict[int, list[int]] = {}
        rest: list[tuple[int, int]] = []
        total_running = p.job_running_count(j)
        taken = 0
        for s in cj.subjobs:
            sj = p.subjobs[s]
            running = sum(sum(p.group_running[g].values()) for g in sj.groups)
            need = max(0, sj.min_available - running)
            pods = [g for g in sj.groups for _ in range(len(p.group_pending[g]))]
            gang[s] = pods[:need]
            taken += len(gang[s])
            rest += [(s, g) for g in pods[need:]]
        short = max(0, cj.min_available - total_running - taken)
        while short and rest:
            s, g = rest.pop(0)
            gang[s].append(g)
            short -= 1
        return {s: pods for s, pods in gang.items() if pods}, rest

    def run(self) -> Assignment:
        p = self.problem
        everywhere = np.ones(p.n_nodes, dtype=bool)
        for j in admission_order(p):
            gang, rest = self.gang_pods(j)
            if gang:
                saved = self.checkpoint()
                why = self.allocate_job(j, gang, everywhere)
                if why is not None:
                    self.rollback(saved)
                    self.assignment.reasons[j] = why
                    continue
            for s, g in rest:  # elastic pods, one allocation each
                nodes = self.pinned_nodes(j)
                saved = self.checkpoint()
                if self.allocate_job(j, {s: [g]}, nodes) is not None:
                    self.rollback(saved)
        return self.assignment

    def pinned_nodes(self, j: int) -> np.ndarray:
        """Nodes a new pod of job ``j`` may use: the required domain of its pods, if any."""
        p = self.problem
        cj = p.jobs[j]
        mask = np.ones(p.n_nodes, dtype=bool)
        if cj.limit is None or not cj.limit.hard:
            return mask
        nodes = [n for g in cj.groups for n in (*p.group_running[g], *self.assignment.counts.get(g, {}))]
        if not nodes:
            return mask
        topo = p.topology
        h = int(topo.node_home[nodes[0]])
        while int(topo.tier[h]) < cj.limit.tier and topo.parent[h] >= 0:
            h = int(topo.parent[h])
        mask[:] = False
        mask[topo.members[h].indices] = True
        return mask


def run_kai(problem: Problem) -> Assignment:
    """Place the pending jobs as KAI-Scheduler's allocate action with the topology plugin would."""
    return KaiEngine(problem).run()
