"""The placement machinery of the kube mirror's workload cycle (``docs/kube-fidelity.md``):
candidate placements (TopologyPlacement), the pod-by-pod run in one placement (the kernel's
:mod:`toposolve.engines.common.pod_run`) and the placement scores (PlacementBinPacking +
PodGroupPodsCount), shared by the PodGroup cycle (:mod:`~toposolve.engines.kube.cycle`) and the
CompositePodGroup one (:mod:`~toposolve.engines.kube.composite`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from toposolve.core.problem import Limit, Problem
from toposolve.engines.common.capacity import Capacity, fit_in
from toposolve.engines.common.devices import DeviceRoom
from toposolve.engines.common.node_scores import NodeScoring
from toposolve.engines.common.pod_run import Trial, run_groups
from toposolve.engines.kube.scores import (
    PlacementScoring,
    placement_fit_score,
    pods_count_scores,
)


class Domains:
    """Candidate placements per tier: the domains of a topology key, in name order, with their
    node-membership rows (sparse [K, N])."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        topo = problem.topology
        self.real = [h for h in range(len(topo.names)) if h != topo.root]
        names = problem.topology.node_names
        self.order = np.argsort(np.array(names, dtype=object), kind="stable")
        self.rank = np.empty_like(self.order)
        self.rank[self.order] = np.arange(len(self.order))
        self.cache: dict[int, list[int]] = {}
        self.rows: dict[int, sp.csr_matrix] = {}

    def of_tier(self, tier: int) -> list[int]:
        """HyperNodes of ``tier`` (the lowest tier above it when none), by name."""
        if tier not in self.cache:
            topo = self.problem.topology
            tiers = sorted({int(topo.tier[h]) for h in self.real if topo.tier[h] >= tier})
            at = tiers[0] if tiers else None
            found = [h for h in self.real if int(topo.tier[h]) == at]
            self.cache[tier] = sorted(found, key=lambda h: topo.names[h])
            members = self.problem.topology.members.tocsr()
            self.rows[tier] = members[self.cache[tier]].astype(np.int64)
        return self.cache[tier]

    def matrix(self, tier: int | None, found: list[int | None]) -> sp.csr_matrix:
        """[K, N] 0/1 rows of the candidate placements ``found`` (all nodes for None)."""
        n = self.problem.n_nodes
        if found == [None]:
            return sp.csr_matrix(np.ones((1, n), dtype=np.int64))
        assert tier is not None
        if len(found) == len(self.of_tier(tier)):
            return self.rows[tier]
        return self.problem.topology.members.tocsr()[found].astype(np.int64)

    def nodes(self, domain: int | None, pool: np.ndarray | None) -> np.ndarray:
        """The domain's nodes (all nodes for None) within ``pool``, in name order."""
        inside = (np.arange(self.problem.n_nodes) if domain is None
                  else self.problem.nodes_in(domain))
        if pool is not None:
            inside = inside[pool[inside]]
        return inside[np.argsort(self.rank[inside], kind="stable")]


def candidates(problem: Problem, domains: Domains, j: int) -> list[int | None] | str:
    """TopologyPlacement's placements for job ``j`` (domain ids; [None]: no constraint), or why
    the group cannot be placed (running pods in several domains or outside any)."""
    cj = problem.jobs[j]
    return placements_of(problem, domains, cj.limit, cj.groups)


def placements_of(problem: Problem, domains: Domains, limit: Limit | None,
                  groups: list[int]) -> list[int | None] | str:
    """TopologyPlacement for a group constrained by ``limit`` whose pods are in ``groups``:
    the domains of its key's tier in name order ([None]: no constraint, the parent placement),
    only the one holding its running pods when some run; or why none can be generated."""
    if limit is None or not limit.hard or limit.tier >= problem.topology.max_tier:
        return [None]
    doms = domains.of_tier(limit.tier)
    if any(problem.group_running_absent[g] for g in groups):
        return "a running pod of the group is on a node outside the snapshot"
    running = {n for g in groups for n in problem.group_running[g]}
    if not running:
        return list(doms)
    holding = [h for h in doms if np.isin(problem.nodes_in(h), list(running)).any()]
    if len(holding) != 1 or not np.isin(list(running), problem.nodes_in(holding[0])).all():
        return "the group's running pods are not in exactly one domain of its topology key"
    return holding


def upper_bounds(problem: Problem, free: np.ndarray, j: int, rows: sp.csr_matrix,
                 pool: np.ndarray | None, room: DeviceRoom | None = None) -> np.ndarray:
    """[K] pods each placement holds at most (each group alone). For a job of one group this is
    exactly what the pod-by-pod run schedules: each pod takes one pod's room on one node (and,
    with ``room``, devices by its rule: the device fit counts those picks exactly)."""
    total = np.zeros(rows.shape[0], dtype=np.int64)
    for g in problem.jobs[j].groups:
        feasible = problem.group_feasible[g] if pool is None else problem.group_feasible[g] & pool
        fits = fit_in(free, problem.group_request[g], feasible)
        if room is not None:
            fits = np.minimum(fits, room.fit_counts(g, np.arange(problem.n_nodes)))
        total += np.minimum(rows @ fits, len(problem.group_pending[g]))
    return total


def run_pods(problem: Problem, cap: Capacity, node: NodeScoring, j: int,
             trial: Trial, running: int) -> bool:
    """The pod-by-pod run of job ``j``'s pods in one placement (on a copy of the free
    capacity); True when the gang is satisfied (``minAvailable`` with running pods, at least one
    new pod)."""
    cj = problem.jobs[j]
    done = run_groups(problem, cap, node, cj.groups, cj.min_available, trial, running)
    return done and bool(trial.pods)


def group_pod_counts(running: int, placed: np.ndarray) -> list[int]:
    """PodGroupPodsCount's raw score of each placement: the group's pods already on nodes
    (assigned or assumed: ``running``) plus the ``placed`` pods it proposes."""
    return [running + int(p) for p in placed]


def placement_scores(problem: Problem, cap: Capacity, rows: sp.csr_matrix,
                     pool: np.ndarray | None, placed: np.ndarray, proposed: np.ndarray,
                     running: int, scoring: PlacementScoring) -> np.ndarray:
    """[K] the weighted placement score of each feasible placement (rows of ``rows``):
    PlacementBinPacking's strategy over the pooled nodes with the ``proposed`` requests ([K, S] of
    the strategy's resources) added, plus PodGroupPodsCount of ``running + placed``. A scalar
    resource the proposed pods do not request is not scored (upstream: allocatable 0).

    Raises
    ------
    ValueError
        PodGroupPodsCount's error when no placement holds a pod of the group (upstream: an
        error status), which only a CompositePodGroup's placements can meet.
    """
    scored = scoring.resources
    inside = np.ones(problem.n_nodes, dtype=np.int64) if pool is None else pool.astype(np.int64)
    alloc_n = problem.allocatable[:, scored.columns] * inside[:, None]
    held_n = (problem.allocatable - cap.free)[:, scored.columns] * inside[:, None]
    alloc, allocated = rows @ alloc_n, rows @ held_n
    alloc = np.where(scored.scalar & (proposed == 0), 0, alloc)
    fit = placement_fit_score(proposed + allocated, alloc, scored.weights, scoring)
    if not scoring.count_weight:  # a disabled plugin is not run (nor can it fail)
        return scoring.fit_weight * fit
    counts = np.array(pods_count_scores(group_pod_counts(running, placed)), dtype=np.int64)
    return scoring.fit_weight * fit + scoring.count_weight * counts
