"""Which tier limit keeps a job's SubJobs out: room counted in whole SubJobs.

A job whose SubJobs are each held to a HyperNode of tier ≤ L, the whole job to one of tier ≤ J,
can fail although every SubJob alone fits somewhere: two free leaves under different spines
hold two SubJobs, but no spine holds both. Counting SubJobs (not pods) per domain tells the
two limits apart. Both engines explain a pending job with it — the heuristic on the cluster as
its queue left it, CP-SAT on the idle cluster — so they name the same blocker the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from toposolve.core.problem import Problem
from toposolve.core.quantity import format_quantity
from toposolve.core.topology import Topology, subtree_sums


def describe_request(problem: Problem, group: int) -> str:
    """One pod's requests, ``8 nvidia.com/gpu, 96 cpu`` (the ``pods`` resource left out)."""
    req = problem.group_request[group]
    parts = [
        f"{format_quantity(int(req[i]), r)} {r}"
        for i, r in enumerate(problem.resources)
        if req[i] > 0 and r != "pods"
    ]
    return ", ".join(parts) or "no resources"


def subjob_room(topology: Topology, fit: np.ndarray, size: int, subjob_tier: int,
                job_tier: int | None) -> tuple[int, int, int]:
    """SubJobs of ``size`` pods that fit, each within one HyperNode of tier ≤ ``subjob_tier``.

    ``fit`` is how many more pods of the SubJobs' shape each node takes. Returns the count over
    the whole cluster, the most inside one HyperNode of tier ≤ ``job_tier`` (the cluster when
    None), and that HyperNode (the widest such domains are compared; ties go to the lowest
    (tier, name)).
    """
    members = topology.members
    cap = subtree_sums(members, fit).astype(np.int64)
    tier, parent = topology.tier, topology.parent
    parent_tier = np.where(parent >= 0, tier[np.maximum(parent, 0)], np.iinfo(np.int64).max)
    # HyperNodes of tier ≤ limit under a parent above it
    def widest_within(limit: int) -> np.ndarray:
        return np.flatnonzero((tier <= limit) & (parent_tier > limit))

    widest = widest_within(subjob_tier)
    slots = cap[widest] // size
    in_cluster = int(slots.sum())
    # credit each widest domain's SubJobs to one of its nodes; a HyperNode above L sums them
    has_node = members.indptr[widest] < members.indptr[widest + 1]
    first_node = members.indices[members.indptr[widest[has_node]]]
    credit = np.zeros(members.shape[1], dtype=np.int64)
    np.add.at(credit, first_node, slots[has_node])
    above = subtree_sums(members, credit).astype(np.int64)
    per_domain = np.where(tier <= subjob_tier, cap // size, above)
    allowed = widest_within(topology.max_tier if job_tier is None else job_tier)
    if not allowed.size:
        return in_cluster, 0, topology.root
    best = int(allowed[np.argmax(per_domain[allowed])])
    return in_cluster, int(per_domain[best]), best


def subjob_shortfall(problem: Problem, j: int, need: int, fit: Callable[[int], np.ndarray],
                     job_tier: int | None, subjob_tier: Callable[[int], int | None],
                     when: str = "") -> str | None:
    """Reason naming the limit that keeps job ``j``'s SubJobs out, or None when counting cannot
    tell.

    ``need`` is how many more pods the job must place, ``fit(g)`` the pods of group ``g`` each
    node takes, ``subjob_tier(s)`` SubJob ``s``'s hard tier limit (None: none), ``when`` what the
    counts describe (``"when its turn came, "``; empty: the cluster before the plan). Only policies
    whose pending SubJobs have one pod shape and no running pod are counted.
    """
    cj = problem.jobs[j]
    by_policy: dict[int, list[int]] = {}
    for s in cj.subjobs:
        if problem.subjobs[s].policy >= 0:
            by_policy.setdefault(problem.subjobs[s].policy, []).append(s)
    pending = {g: len(problem.group_pending[g]) for g in cj.groups}
    for policy, members in sorted(by_policy.items()):
        limit = subjob_tier(members[0])
        groups = [g for s in members for g in problem.subjobs[s].groups]
        if limit is None or any(problem.group_running[g] for g in groups):
            continue
        shape = [g for g in groups if pending[g]]
        if not shape or (problem.group_request[shape] != problem.group_request[shape[0]]).any():
            continue
        size = problem.subjobs[members[0]].min_available
        outside = sum(pending.values()) - sum(pending[g] for g in groups)
        needed = max(cj.min_subjobs.get(policy, 0), math.ceil(max(0, need - outside) / size))
        needed = min(needed, len(members))
        if needed == 0:
            continue
        in_cluster, in_best, best = subjob_room(problem.topology, fit(shape[0]), size, limit,
                                                job_tier)
        what = (f"needs {needed} SubJobs of {size} pods ({describe_request(problem, shape[0])} "
                f"each), "
                f"each within one HyperNode of tier ≤ {limit}")
        if in_cluster < needed:
            return f"{what}; {when}the cluster has room for {in_cluster}"
        if in_best < needed:
            return (f"{what}, all within one HyperNode of tier ≤ {job_tier} (the job's limit); "
                    f"{when}the best, {problem.topology.names[best]}, has room for {in_best} "
                    f"(the whole cluster for {in_cluster})")
    return None
