"""The KAI mirror on gang trees deeper than job → SubJob (KAI SubGroups with child SubGroups).

Rules and rationale: ``docs/kai-fidelity.md``, section ``toposolve.engines.kai.tree``.
"""

from __future__ import annotations

from functools import cmp_to_key

import numpy as np

from toposolve.engines.kai.domains import subset_nodes
from toposolve.engines.kai.engine import KaiEngine

ROOT = -1  # the job's own SubGroupSet

Member = tuple[str, int]  # ("node", GangNode index) or ("sub", SubJob index)


def order_by_allocation_ratio(left: tuple[int, int], right: tuple[int, int]) -> int:
    """KAI's ``orderByAllocationRatio`` on (allocated, threshold) pairs: < 0 puts ``left`` first."""
    (lc, lt), (rc, rt) = left, right
    l_ok, r_ok = lc >= lt, rc >= rt
    if not l_ok or not r_ok:
        return 0 if l_ok == r_ok else (-1 if not l_ok else 1)
    if (lt == 0) != (rt == 0):
        return 1 if lt == 0 else -1  # required before optional
    if lt == 0:
        return (lc > rc) - (lc < rc)
    return (lc * rt > rc * lt) - (lc * rt < rc * lt)  # lower ratio first


class KaiTreeEngine(KaiEngine):
    """:class:`KaiEngine` with KAI's SubGroupSet recursion for jobs that have GangNodes."""

    # -- the tree ---------------------------------------------------------------------------
    def member_list(self, j: int, x: int) -> list[Member]:
        p = self.problem
        if x == ROOT:
            nodes = [n for n in p.jobs[j].gang_nodes if p.gang_nodes[n].parent == ROOT]
            subs = [s for s in p.jobs[j].subjobs if p.subjobs[s].parent == ROOT]
        else:
            nodes, subs = p.gang_nodes[x].children, p.gang_nodes[x].subjobs
        return [("node", n) for n in nodes] + [("sub", s) for s in subs]

    def name(self, m: Member) -> str:
        """KAI's member name: the SubGroup name (the last part of the id)."""
        kind, i = m
        ident = self.problem.gang_nodes[i].id if kind == "node" else self.problem.subjobs[i].id
        return ident.rsplit("/", 1)[-1].removeprefix("subgroup-")

    def threshold(self, j: int, m: Member) -> int:
        kind, i = m
        return self.problem.gang_nodes[i].min_members if kind == "node" else self.podset_min(i)

    def allocated(self, j: int, m: Member) -> int:
        """Pods (a PodSet) or satisfied members (a SubGroupSet) running or placed so far."""
        kind, i = m
        if kind == "sub":
            return self.active(i)
        return sum(self.satisfied(j, c) for c in self.member_list(j, i))

    def satisfied(self, j: int, m: Member) -> bool:
        return self.allocated(j, m) >= self.threshold(j, m)

    def ordered(self, j: int, members: list[Member]) -> list[Member]:
        state = {m: (self.allocated(j, m), self.threshold(j, m)) for m in members}

        def cmp(a: Member, b: Member) -> int:
            return order_by_allocation_ratio(state[a],
                    state[b]) or (self.name(a) > self.name(b)) - (self.name(a) < self.name(b))

        return sorted(members, key=cmp_to_key(cmp))

    # -- which pods -------------------------------------------------------------------------
    def collect_set(self, j: int, x: int) -> dict[int, list[int]]:
        members = self.ordered(j, self.member_list(j, x))
        need = len(members) if x == ROOT else self.problem.gang_nodes[x].min_members
        met = sum(self.satisfied(j, m) for m in members) >= need
        if not met:
            out: dict[int, list[int]] = {}
            for m in members[:need]:
                if not self.satisfied(j, m):
                    out.update(self.collect(j, m))
            return out
        for m in members:
            pods = self.collect(j, m)
            if pods:
                return pods
        return {}

    def collect(self, j: int, m: Member) -> dict[int, list[int]]:
        kind, i = m
        if kind == "node":
            return self.collect_set(j, i)
        pods = self.pending_pods(i)
        need = self.podset_min(i) - self.active(i)
        pods = pods[:need] if need > 0 else pods[:1]
        return {i: pods} if pods else {}

    def gang_pods(self, j: int) -> dict[int, list[int]]:
        if not self.problem.jobs[j].gang_nodes:
            return super().gang_pods(j)
        return self.top_up(j, self.collect_set(j, ROOT))

    def top_up(self, j: int, pods: dict[int, list[int]]) -> dict[int, list[int]]:
        """A job minimum above what its tree needs (an input KAI did not write): more pods,
        SubJobs in job order (each at least up to its own minimum), until the job's
        ``min_available`` is reached."""
        cj = self.problem.jobs[j]
        short = cj.min_available - self.job_active(j) - sum(len(v) for v in pods.values())
        for s in cj.subjobs:
            if short <= 0:
                break
            chosen = len(pods.get(s, []))
            take = max(short, self.podset_min(s) - self.active(s) - chosen)  # whole SubJob gangs
            extra = self.pending_pods(s)[chosen:][:take]
            if extra:
                pods[s] = pods.get(s, []) + extra
                short -= len(extra)
        return pods

    def job_active(self, j: int) -> int:
        return sum(self.active(s) for s in self.problem.jobs[j].subjobs)

    def elastic_pod(self, j: int) -> dict[int, list[int]]:
        return self.collect_set(j,
                                ROOT) if self.problem.jobs[j].gang_nodes else super().elastic_pod(j)

    def min_state(self, j: int) -> int:
        """0 (below its minimum) while the root or the job's ``min_available`` is unmet."""
        cj = self.problem.jobs[j]
        if not cj.gang_nodes:
            return super().min_state(j)
        members = self.member_list(j, ROOT)
        root_met = sum(self.satisfied(j, m) for m in members) >= len(members)
        return (0 if not root_met or self.job_active(j) < cj.min_available
                else super().min_state(j) or 1)

    # -- where ------------------------------------------------------------------------------
    def allocate_job(self, j: int, pods_by_subjob: dict[int, list[int]]) -> str | None:
        if not self.problem.jobs[j].gang_nodes:
            return super().allocate_job(j, pods_by_subjob)
        if self.allocate_set(j, ROOT, pods_by_subjob, np.ones(self.problem.n_nodes, dtype=bool),
                             None):
            return None
        return "resources were not found for the gang in any candidate domain"

    def subjobs_below(self, j: int, x: int) -> list[int]:
        out: list[int] = []
        for kind, i in self.member_list(j, x):
            out += self.subjobs_below(j, i) if kind == "node" else [i]
        return out

    def allocate_set(self, j: int, x: int, pods_by_subjob: dict[int, list[int]], nodes: np.ndarray,
                     inherited: np.ndarray | None) -> bool:
        p = self.problem
        pods = [g for s in self.subjobs_below(j, x) for g in pods_by_subjob.get(s, [])]
        if not pods:
            return True
        limit = p.jobs[j].limit if x == ROOT else p.gang_nodes[x].limit
        within = self.required_domains([g for s in self.subjobs_below(j,
                x) for g in p.subjobs[s].groups], limit)
        cand = subset_nodes(p, self.cap.free, limit, pods, nodes, self.pods_resource,
                            self.members_of_tree(limit), within)
        scores = cand.scores if cand.scores is not None else inherited
        for node_set in cand.node_sets:
            saved = self.checkpoint()
            if all(self.allocate_member(j, m, pods_by_subjob, node_set,
                                        scores) for m in self.ordered(j, self.member_list(j, x))):
                return True
            self.rollback(saved)
        return False

    def allocate_member(self, j: int, m: Member, pods_by_subjob: dict[int, list[int]],
                        nodes: np.ndarray, scores: np.ndarray | None) -> bool:
        kind, i = m
        if kind == "node":
            return self.allocate_set(j, i, pods_by_subjob, nodes, scores)
        pods = pods_by_subjob.get(i, [])
        return not pods or self.allocate_subjob(i, pods, nodes, scores)
