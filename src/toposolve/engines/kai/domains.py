"""KAI's topology plugin, re-expressed: candidate domains of one (sub)group on a node set.

``subset_nodes`` follows ``subSetNodesFn``: the lowest common domain of the node set (not deeper
than the preferred level) must hold the tasks; the tree below it is sorted for bin-packing — children
by the tasks' dominant requested-to-free ratio, descending (the fullest first), ties by domain id
ascending — down to the preferred (else required) level; the candidate domains are those of the
levels from the preferred (else required) level up to the required level (else the root) that hold
the tasks, bottom-up, each level in the sorted tree's breadth-first order. With a preferred level,
nodes score by the position of their preferred-level domain in the sorted order:
``floor((i + 1) / count * 10)`` — the emptiest domain, and among equals the highest id, scores most.

A domain holds the tasks (``checkJobDomainFit``) when, for homogeneous tasks, its nodes hold as
many pods of the largest task as there are tasks, else when no requested resource exceeds its
free amount. Free resources and allocatable pods of a domain count all its nodes (KAI sums the
whole domain); the node set only picks the lowest common domain and filters the candidates' nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...problem import Limit, Problem
from ..capacity import fit_in

NO_RESOURCE_RATIO = 1000.0  # KAI's ratio for a requested resource the domain has none of


@dataclass
class Candidates:
    node_sets: list[np.ndarray] = field(default_factory=list)  # [N] bool masks, in try order
    scores: np.ndarray | None = None  # [N] topology node score (preferred level), None without
    reason: str | None = None


def kai_id(problem: Problem, h: int) -> str:
    return problem.topology.names[h].replace("/", ".")


def bin_pack_order(demand: np.ndarray, free: dict[str, np.ndarray]) -> list[str]:
    """Domain ids fullest first: dominant requested-to-free ratio descending, then id ascending
    (KAI's ``sortTree`` for one parent)."""
    ratio = {d: dominant_ratio(demand, f) for d, f in free.items()}
    return sorted(free, key=lambda d: (-ratio[d], d))


def dominant_ratio(demand: np.ndarray, free: np.ndarray) -> float:
    """``getJobRatioToFreeResources``: max over requested resources of demand / free."""
    best = 0.0
    for r in np.flatnonzero(demand > 0):
        best = max(best, NO_RESOURCE_RATIO if free[r] <= 0 else float(demand[r]) / float(free[r]))
    return best


def position_scores(count: int) -> list[float]:
    """Topology score of the preferred-level domains in sorted order: ``floor((i+1)/count*10)``."""
    return [float(np.floor((i + 1) / count * 10)) for i in range(count)]


def _children_sorted(problem: Problem, h: int, demand: np.ndarray, free_of) -> list[int]:
    by_id = {kai_id(problem, k): k for k in problem.topology.children[h]}
    return [by_id[d] for d in bin_pack_order(demand, {d: free_of(k) for d, k in by_id.items()})]


def subset_nodes(
    problem: Problem, free: np.ndarray, limit: Limit | None, pods: list[int], nodes: np.ndarray, pods_resource: int | None
) -> Candidates:
    """Candidate node sets for the pods (their pod groups, one entry per pod) on ``nodes``."""
    if limit is None:
        return Candidates([nodes])
    topo = problem.topology
    valid = nodes & (topo.node_home != topo.root)
    if not valid.any():
        return Candidates(reason="no node of the node set is in the topology")
    requests = problem.group_request[pods]
    demand = requests.sum(axis=0)
    if pods_resource is not None:
        demand[pods_resource] = 0
    preferred = limit.preferred if limit.preferred is not None else (None if limit.hard else limit.tier)
    required = limit.tier if limit.hard else None
    lcd = topo.lca_of_nodes(np.flatnonzero(valid).tolist())
    while preferred is not None and int(topo.tier[lcd]) < preferred:
        lcd = int(topo.parent[lcd])
    cache: dict[int, np.ndarray] = {}

    def free_of(h: int) -> np.ndarray:
        if h not in cache:
            cache[h] = free[topo.members[h].indices].sum(axis=0, dtype=np.float64)  # int64 overflows past ~4k nodes of 2 TiB
        return cache[h]

    homogeneous = bool((requests == requests[0]).all())
    max_pod = requests.max(axis=0)
    if pods_resource is not None:
        max_pod = max_pod.copy()
        max_pod[pods_resource] = 0

    def fits(h: int) -> bool:  # checkJobDomainFit: pod count if homogeneous, else resource ratio
        if homogeneous:
            return int(fit_in(free[topo.members[h].indices], max_pod).sum()) >= len(pods)
        return dominant_ratio(demand, free_of(h)) <= 1.0

    if not fits(lcd):
        return Candidates(reason=f"not enough resources in {topo.names[lcd]} to allocate the job")
    depth = preferred if preferred is not None else required
    order: list[list[int]] = [[lcd]]  # breadth-first levels of the sorted subtree
    while depth is not None and order[-1] and int(topo.tier[order[-1][0]]) > depth:
        order.append([k for h in order[-1] for k in _children_sorted(problem, h, demand, free_of)])
    scores = None
    if preferred is not None:
        pref = [h for level in order for h in level if int(topo.tier[h]) == preferred]
        scores = np.zeros(problem.n_nodes)
        for h, score in zip(pref, position_scores(len(pref)), strict=True):
            scores[topo.members[h].indices] = score
    low = preferred if preferred is not None else required
    high = required if required is not None else topo.max_tier
    ancestors = topo.ancestors(lcd)[1:]
    chosen = [h for level in reversed(order) for h in level if low <= int(topo.tier[h]) <= high]
    chosen += [h for h in ancestors if low <= int(topo.tier[h]) <= high]
    sets = []
    for h in chosen:
        if not fits(h):
            continue
        mask = np.zeros(problem.n_nodes, dtype=bool)
        mask[topo.members[h].indices] = True
        sets.append(mask & valid)
    if not sets:
        return Candidates(scores=scores, reason="no topology domain can hold the job")
    return Candidates(sets, scores)
