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
import scipy.sparse as sp

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


def _children_sorted(problem: Problem, h: int, demand: np.ndarray, domain_free: np.ndarray) -> list[int]:
    by_id = {kai_id(problem, k): k for k in problem.topology.children[h]}
    return [by_id[d] for d in bin_pack_order(demand, {d: domain_free[k] for d, k in by_id.items()})]


def members_of(problem: Problem, h: int) -> np.ndarray:
    """Node indices under HyperNode ``h`` (a CSR row slice, no sub-matrix built)."""
    m = problem.topology.members
    return m.indices[m.indptr[h] : m.indptr[h + 1]]


def lowest_common_domain(problem: Problem, valid: np.ndarray, preferred: int | None) -> int:
    """``lowestCommonDomainID``: the deepest domain holding every valid node, not below ``preferred``."""
    topo = problem.topology
    at = topo.node_at_tier[np.flatnonzero(valid)]
    lcd = topo.root
    for t in range(topo.max_tier - 1, -1, -1):
        col = at[:, t]
        if col[0] < 0 or not (col == col[0]).all():
            break
        lcd = int(col[0])
        if preferred is not None and t <= preferred:
            break
    return lcd


def domain_fits(problem: Problem, free: np.ndarray, requests: np.ndarray, demand: np.ndarray,
                pods_resource: int | None, members: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """(per-HyperNode free resources, per-HyperNode "holds the tasks") — ``checkJobDomainFit``:
    the pod count of the largest task when all tasks are alike, else the resource ratio."""
    domain_free = np.asarray(members @ free.astype(np.float64))  # int64 overflows past ~4k nodes of 2 TiB
    if bool((requests == requests[0]).all()):
        max_pod = requests.max(axis=0).copy()
        if pods_resource is not None:
            max_pod[pods_resource] = 0
        room = np.asarray(members @ fit_in(free, max_pod)).ravel()
        return domain_free, room >= len(requests)
    ratio = np.zeros(domain_free.shape[0])
    for r in np.flatnonzero(demand > 0):
        col = domain_free[:, r].astype(float)
        ratio = np.maximum(ratio, np.where(col <= 0, NO_RESOURCE_RATIO, demand[r] / np.maximum(col, 1)))
    return domain_free, ratio <= 1.0


def subset_nodes(
    problem: Problem, free: np.ndarray, limit: Limit | None, pods: list[int], nodes: np.ndarray,
    pods_resource: int | None, members: sp.csr_matrix | None = None,
) -> Candidates:
    """Candidate node sets for the pods (their pod groups, one entry per pod) on ``nodes``.

    ``members``: the topology's membership as an int64 matrix (computed when not given)."""
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
    lcd = lowest_common_domain(problem, valid, preferred)
    if members is None:
        members = topo.members.astype(np.int64)
    domain_free, fits = domain_fits(problem, free, requests, demand, pods_resource, members)
    if not fits[lcd]:
        return Candidates(reason=f"not enough resources in {topo.names[lcd]} to allocate the job")
    depth = preferred if preferred is not None else required
    order: list[list[int]] = [[lcd]]  # breadth-first levels of the sorted subtree
    while depth is not None and order[-1] and int(topo.tier[order[-1][0]]) > depth:
        order.append([k for h in order[-1] for k in _children_sorted(problem, h, demand, domain_free)])
    scores = None
    if preferred is not None:
        pref = [h for level in order for h in level if int(topo.tier[h]) == preferred]
        scores = np.zeros(problem.n_nodes)
        for h, score in zip(pref, position_scores(len(pref)), strict=True):
            scores[members_of(problem, h)] = score
    low = preferred if preferred is not None else required
    high = required if required is not None else topo.max_tier
    ancestors = topo.ancestors(lcd)[1:]
    chosen = [h for level in reversed(order) for h in level if low <= int(topo.tier[h]) <= high]
    chosen += [h for h in ancestors if low <= int(topo.tier[h]) <= high]
    sets = []
    for h in chosen:
        if not fits[h]:
            continue
        mask = np.zeros(problem.n_nodes, dtype=bool)
        mask[members_of(problem, h)] = True
        sets.append(mask & valid)
    if not sets:
        return Candidates(scores=scores, reason="no topology domain can hold the job")
    return Candidates(sets, scores)
