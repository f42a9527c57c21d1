"""KAI's topology plugin, re-expressed: candidate domains of one (sub)group on a node set.

``subset_nodes`` follows ``subSetNodesFn``: the lowest common domain of the node set (not deeper
than the preferred level) must hold the tasks; the tree below it is sorted for bin-packing —
children by the tasks' dominant requested-to-free ratio, descending (the fullest first), ties by
domain id ascending — down to the preferred (else required) level; the candidate domains are those
of the levels from the preferred (else required) level up to the required level (else the root)
(:func:`relevant_tiers`) that hold the tasks, in :func:`reverse_level_order` of the sorted tree.
With a preferred level, nodes score by the position of their preferred-level domain in the sorted
order: ``floor((i + 1) / count * 10)`` — the emptiest domain, and among equals the highest id,
scores most.

Only the lowest common domain's subtree is measured (KAI resets every domain's free resources
and allocatable pods, then sums them below that domain only), so a domain above it never holds
the tasks: when every relevant level is above it, there is no candidate. A domain holds the tasks
(``checkJobDomainFit``) — with representative-pod accounting (``useRepresentorPodsAccounting``:
all tasks or none ask for GPUs, and each other resource is asked by all tasks or none) when its
nodes hold as many pods of the largest task as there are tasks (:func:`node_accommodation`),
else when no requested resource exceeds its free amount.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from toposolve.core.problem import Limit, Problem
from toposolve.core.topology import Topology, subtree_sums
from toposolve.core.topology_forest import TREE_SEPARATOR
from toposolve.engines.common.capacity import fit_in
from toposolve.engines.kai.reasons import GPU, insufficient_resources, not_enough_in, pods_short

NO_RESOURCE_RATIO = 1000.0  # KAI's ratio for a requested resource the domain has none of
BASIC_RESOURCES = ("cpu", "memory")
# a pod's slot in milli-units, as the problem holds every quantity  # not in the all-or-none rule
# of representative accounting
ONE_POD = 1000
KAI_RESOURCE_ORDER = {"cpu": 0, "memory": 1, GPU: 2}  # KAI's resource vector order, then others


@dataclass
class Candidates:
    node_sets: list[np.ndarray] = field(default_factory=list)  # [N] bool masks, in try order
    scores: np.ndarray | None = None  # [N] topology node score (preferred level), None without
    reason: str | None = None
    domains: list[int] = field(default_factory=list)  # the HyperNode of each node set
    lcd_failed: bool = False  # the lowest common domain cannot hold the tasks
    # without a candidate: the domains of the top relevant level that cannot hold the tasks, each
    # with KAI's lines for it (``getJobAllocatableDomains``' top-level fit errors)
    misfits: list[tuple[str, list[str]]] = field(default_factory=list)


def kai_id(problem: Problem, h: int, topo: Topology | None = None) -> str:
    """KAI's id of HyperNode ``h`` of ``topo`` (default: the main tree): its value path, without
    the ``<tree>:`` a forest or constraint tree puts before it (KAI's trees are separate)."""
    name = (topo or problem.topology).names[h]
    return name.split(TREE_SEPARATOR, 1)[-1].replace("/", ".")


def topology_root(topo: Topology, h: int) -> bool:
    """Whether ``h`` is the root of a KAI Topology's tree: the virtual root, or the HyperNode a
    forest or constraint tree names after the Topology (its children are ``<tree>:…``)."""
    if h == topo.root:
        return True
    prefix = topo.names[h] + TREE_SEPARATOR
    return int(topo.parent[h]) == topo.root and bool(topo.children[h]) and all(
        topo.names[k].startswith(prefix) for k in topo.children[h])


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


def reverse_level_order(root, children: Callable[[object], Iterable]) -> list:
    """``reverseLevelOrder``: the tree's breadth-first levels, deepest first, each level in
    order."""
    levels = [[root]]
    while nxt := [c for d in levels[-1] for c in children(d)]:
        levels.append(nxt)
    return [d for level in reversed(levels) for d in level]


def preferred_tier(limit: Limit) -> int | None:
    """The preferred level's tier (a soft limit is preferred at its tier)."""
    return limit.preferred if limit.preferred is not None else (None if limit.hard else limit.tier)


def relevant_tiers(limit: Limit, max_tier: int) -> tuple[int, int]:
    """``calculateRelevantDomainLevels``: the tiers (low, high) holding candidate domains — from
    the preferred (else required) level up to the required level, else up to the root."""
    preferred = preferred_tier(limit)
    return (preferred if preferred is not None else limit.tier), (limit.tier if limit.hard
                                                                  else max_tier)


def _children_sorted(topo: Topology, h: int, demand: np.ndarray,
                     domain_free: np.ndarray) -> list[int]:
    by_id = {topo.names[k].replace("/", "."): k for k in topo.children[h]}
    return [by_id[d] for d in bin_pack_order(demand, {d: domain_free[k] for d, k in by_id.items()})]


def members_of(problem: Problem, h: int, topo: Topology | None = None) -> np.ndarray:
    """Node indices under HyperNode ``h`` of ``topo`` (default: the main tree; a CSR row slice,
    no sub-matrix built)."""
    m = (topo or problem.topology).members
    return m.indices[m.indptr[h] : m.indptr[h + 1]]


def lowest_common_domain(problem: Problem, valid: np.ndarray, preferred: int | None,
                         topo: Topology | None = None) -> int:
    """``lowestCommonDomainID``: the deepest domain of ``topo`` (default: the main tree) holding
    every valid node, not below ``preferred`` (the root when no node is valid)."""
    topo = topo or problem.topology
    at = topo.node_at_tier[np.flatnonzero(valid)]
    lcd = topo.root
    for t in range(topo.max_tier - 1, -1, -1):
        if at.shape[0] == 0:
            break
        col = at[:, t]
        if col[0] < 0 or not (col == col[0]).all():
            break
        lcd = int(col[0])
        if preferred is not None and t <= preferred:
            break
    return lcd


def representative_accounting(problem: Problem, requests: np.ndarray) -> bool:
    """``useRepresentorPodsAccounting``: every resource but CPU and memory (GPUs included) is
    asked by all the tasks or by none."""
    asked = requests > 0
    return all(asked[:, r].all() or not asked[:, r].any()
               for r, name in enumerate(problem.resources) if name not in BASIC_RESOURCES)


def node_accommodation(free: np.ndarray, max_pod: np.ndarray, tasks: int,
                       pods_resource: int | None) -> np.ndarray:
    """``calcNodeAccommodation``: pods of the largest task each node holds (its pod slots count);
    a task asking nothing but (at most) one pod slot fits ``tasks`` times on every node."""
    rest = max_pod.copy()
    if pods_resource is not None:
        rest[pods_resource] = 0 if max_pod[pods_resource] <= ONE_POD else rest[pods_resource]
    if not (rest > 0).any():
        return np.full(free.shape[0], tasks, dtype=np.int64)
    return fit_in(free, max_pod)


def allocatable_pods(free: np.ndarray, requests: np.ndarray, pods_resource: int | None,
                     members: sp.csr_matrix) -> np.ndarray:
    """``calcTreeAllocatable``: per HyperNode, the pods of the largest task its nodes hold."""
    accommodation = node_accommodation(free, requests.max(axis=0), len(requests), pods_resource)
    return subtree_sums(members, accommodation)


def domain_fits(problem: Problem, free: np.ndarray, requests: np.ndarray, demand: np.ndarray,
                pods_resource: int | None, members: sp.csr_matrix,
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(per-HyperNode free resources, per-HyperNode "holds the tasks", per-HyperNode allocatable
    pods or None without representative accounting) — ``checkJobDomainFit`` with the whole
    topology measured (the caller keeps the lowest common domain's subtree)."""
    domain_free = subtree_sums(members, free.astype(np.float64))
    if representative_accounting(problem, requests):
        pods = allocatable_pods(free, requests, pods_resource, members)
        return domain_free, pods >= len(requests), pods
    ratio = np.zeros(domain_free.shape[0])
    for r in np.flatnonzero(demand > 0):
        col = domain_free[:, r].astype(float)
        ratio = np.maximum(ratio,
                           np.where(col <= 0, NO_RESOURCE_RATIO, demand[r] / np.maximum(col, 1)))
    return domain_free, ratio <= 1.0, None


def misfit_lines(problem: Problem, domain: str, demand: np.ndarray, domain_free: np.ndarray,
                 pods_fit: int | None, count: int) -> list[str]:
    """KAI's detailed lines for a domain that cannot hold ``count`` tasks (``checkJobDomainFit``):
    its allocatable pods with representative accounting, else the resources it lacks."""
    if pods_fit is not None:
        return [pods_short(domain, pods_fit, count)]
    names = list(problem.resources)
    order = sorted(range(len(names)), key=lambda r: (KAI_RESOURCE_ORDER.get(names[r], 3), r))
    return insufficient_resources(domain, [names[r] for r in order], demand[order],
                                  domain_free[order])


def _scores(problem: Problem, topo: Topology, order: list[int], preferred: int) -> np.ndarray:
    pref = [h for h in order if int(topo.tier[h]) == preferred]  # sorted-tree order
    scores = np.zeros(problem.n_nodes)
    for h, score in zip(pref, position_scores(len(pref)), strict=True):
        scores[members_of(problem, h, topo)] = score
    return scores


def subset_nodes(
    problem: Problem, free: np.ndarray, limit: Limit | None, pods: list[int], nodes: np.ndarray,
    pods_resource: int | None, members: sp.csr_matrix | None = None,
    within: np.ndarray | None = None,
) -> Candidates:
    """Candidate node sets for the pods (their pod groups, one entry per pod) on ``nodes``.

    The domains are those of the limit's own tree (:meth:`Problem.topology_of`: a KAI Topology
    crossing the main tree over the same nodes has one), measured as KAI measures them: whole,
    nodes outside ``nodes`` included, and cut down to ``nodes`` as candidates. ``members``: that
    tree's membership as an int64 matrix (computed when not given); ``within``: only domains
    inside these nodes are candidates (the required-level domains holding the job's running pods,
    ``getRelevantDomainsWithAllocatedPods``)."""
    if limit is None:
        return Candidates([nodes if within is None else nodes & within])
    topo = problem.topology_of(limit)
    valid = nodes & (topo.node_home != topo.root)
    if not valid.any():
        return Candidates(reason="no node of the node set is in the topology")
    requests = problem.group_request[pods]
    demand = requests.sum(axis=0)
    if pods_resource is not None:
        demand[pods_resource] = 0
    low, high = relevant_tiers(limit, topo.max_tier)
    preferred = preferred_tier(limit)
    lcd = lowest_common_domain(problem, valid, preferred, topo)
    if members is None:
        members = topo.members.astype(np.int64)
    domain_free, fits, pods_fit = domain_fits(problem, free, requests, demand, pods_resource,
                                              members)
    if not fits[lcd]:
        # KAI names no domain for its tree's root ("in the cluster")
        where = None if topology_root(topo, lcd) else kai_id(problem, lcd, topo)
        return Candidates(reason=not_enough_in(where), lcd_failed=True)

    # sortTree stops at the preferred (else required) level
    def sorted_children(h: int) -> list[int]:
        return _children_sorted(topo, h, demand, domain_free) if int(topo.tier[h]) > low else []

    order = reverse_level_order(lcd, sorted_children)
    scores = _scores(problem, topo, order, preferred) if preferred is not None else None
    sets, domains = [], []
    for h in order:
        if not (low <= int(topo.tier[h]) <= high and fits[h]):
            continue
        mask = np.zeros(problem.n_nodes, dtype=bool)
        mask[members_of(problem, h, topo)] = True
        if within is not None and (mask & ~within).any():
            continue
        sets.append(mask & valid)
        domains.append(h)
    if not sets:
        misfits = [
            (kai_id(problem, h, topo), misfit_lines(problem, kai_id(problem, h, topo), demand,
                                                    domain_free[h],
                                                    None if pods_fit is None else int(pods_fit[h]),
                                                    len(pods)))
            for h in order
            if int(topo.tier[h]) == high and not fits[h]
            and (within is None or within[members_of(problem, h, topo)].all())
        ]
        return Candidates(scores=scores, reason="no topology domain can hold the job",
                          misfits=misfits)
    return Candidates(sets, scores, domains=domains)
