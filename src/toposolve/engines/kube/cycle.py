"""kube-scheduler's workload scheduling cycle with Topology-Aware Workload Scheduling.

Order: pending pod groups by priority (descending), then creation (the scheduling queue's
PrioritySort), each one cycle. A cycle generates one candidate placement per domain of the
group's topology key (TopologyPlacement; only the domain holding the group's running pods when
some run; all nodes without a key), runs the pod-by-pod algorithm in each (filter: the pod fits
and its predicates pass; node choice: the highest LeastAllocated + BalancedAllocation score),
keeps the placements where at least ``minAvailable`` pods (running included) and at least one
new pod are scheduled, scores them (NodeResourcesFit placement strategy + PodGroupPodsCount,
weight 1 each) and binds the best one's pods in the order the run scheduled them. Ties are
broken by the first placement in domain-name order and the first node in name order (upstream:
at random). Every rule, with its upstream line, is in ``docs/kube-fidelity.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from toposolve.core.assignment import Assignment
from toposolve.core.kube_scoring import KubeScoring, ScoringStrategy
from toposolve.core.problem import Problem
from toposolve.engines.common.admission import admission_order
from toposolve.engines.common.capacity import Capacity, fit_in
from toposolve.engines.kube.scores import (
    NodeScoring,
    PlacementScoring,
    placement_fit_score,
    pods_count_scores,
)


@dataclass
class Trial:
    """One placement's pod-by-pod run: the pods it scheduled, in order, as (group, node)."""

    domain: int | None
    nodes: np.ndarray
    pods: list[tuple[int, int]] = field(default_factory=list)


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
    if cj.limit is None or not cj.limit.hard or cj.limit.tier >= problem.topology.max_tier:
        return [None]
    doms = domains.of_tier(cj.limit.tier)
    if any(problem.group_running_absent[g] for g in cj.groups):
        return "a running pod of the group is on a node outside the snapshot"
    running = {n for g in cj.groups for n in problem.group_running[g]}
    if not running:
        return list(doms)
    holding = [h for h in doms if np.isin(problem.nodes_in(h), list(running)).any()]
    if len(holding) != 1 or not np.isin(list(running), problem.nodes_in(holding[0])).all():
        return "the group's running pods are not in exactly one domain of its topology key"
    return holding


def upper_bounds(problem: Problem, free: np.ndarray, j: int, rows: sp.csr_matrix,
                 pool: np.ndarray | None) -> np.ndarray:
    """[K] pods each placement holds at most (each group alone). For a job of one group this is
    exactly what the pod-by-pod run schedules: each pod takes one pod's room on one node."""
    total = np.zeros(rows.shape[0], dtype=np.int64)
    for g in problem.jobs[j].groups:
        feasible = problem.group_feasible[g] if pool is None else problem.group_feasible[g] & pool
        fits = fit_in(free, problem.group_request[g], feasible)
        total += np.minimum(rows @ fits, len(problem.group_pending[g]))
    return total


def run_pods(problem: Problem, cap: Capacity, node: NodeScoring, j: int,
             trial: Trial, running: int) -> bool:
    """The pod-by-pod run in one placement (on a copy of the free capacity); True when the
    gang is satisfied (``minAvailable`` with running pods, at least one new pod)."""
    cj = problem.jobs[j]
    nodes = trial.nodes
    free = cap.free[nodes].copy()
    alloc = problem.allocatable[nodes]
    remaining = sum(len(problem.group_pending[g]) for g in cj.groups)
    at = {int(n): k for k, n in enumerate(nodes)} if problem.group_nominated else {}
    for g in cj.groups:
        request = problem.group_request[g]
        pod = problem.score_request(g)
        fits = fit_in(free, request, problem.group_feasible[g, nodes])
        used = alloc - free
        scores = node.scores(used, alloc, pod)
        nominated = problem.group_nominated.get(g, [])
        for i in range(len(problem.group_pending[g])):
            remaining -= 1
            best = int(np.where(fits > 0, scores, np.iinfo(np.int64).min).argmax()) \
                if len(fits) else 0
            mine = at.get(nominated[i], -1) if i < len(nominated) else -1
            if mine >= 0 and fits[mine] > 0:  # a nominated node that fits is taken unscored
                best = mine
            if len(fits) and fits[best] > 0:
                trial.pods.append((g, int(nodes[best])))
                free[best] -= request
                fits[best] -= 1
                used[best] += request
                scores[best] = node.scores(used[best], alloc[best], pod)
            elif running + len(trial.pods) + remaining < cj.min_available:
                return False  # the gang's PlacementFeasible check stops the run
    return bool(trial.pods) and running + len(trial.pods) >= cj.min_available


def group_pod_counts(running: int, placed: np.ndarray) -> list[int]:
    """PodGroupPodsCount's raw score of each placement: the group's pods already on nodes
    (assigned or assumed: ``running``) plus the ``placed`` pods it proposes."""
    return [running + int(p) for p in placed]


def placement_scores(problem: Problem, cap: Capacity, rows: sp.csr_matrix,
                     pool: np.ndarray | None, placed: np.ndarray, proposed: np.ndarray,
                     running: int, scoring: PlacementScoring) -> np.ndarray:
    """[K] the weighted placement score of each feasible placement (rows of ``rows``):
    NodeResourcesFit's strategy over the pooled nodes with the ``proposed`` requests ([K, S] of
    the strategy's resources) added, plus PodGroupPodsCount of ``running + placed``. A scalar
    resource the proposed pods do not request is not scored (upstream: allocatable 0)."""
    scored = scoring.resources
    inside = np.ones(problem.n_nodes, dtype=np.int64) if pool is None else pool.astype(np.int64)
    alloc_n = problem.allocatable[:, scored.columns] * inside[:, None]
    held_n = (problem.allocatable - cap.free)[:, scored.columns] * inside[:, None]
    alloc, allocated = rows @ alloc_n, rows @ held_n
    alloc = np.where(scored.scalar & (proposed == 0), 0, alloc)
    fit = placement_fit_score(proposed + allocated, alloc, scored.weights, scoring)
    counts = np.array(pods_count_scores(group_pod_counts(running, placed)), dtype=np.int64)
    return scoring.fit_weight * fit + scoring.count_weight * counts


def run_kube(problem: Problem, *, config: KubeScoring | None = None,
             strategy: str | None = None, weights: tuple[int, int] | None = None,
             resources: tuple[tuple[str, int], ...] | None = None,
             shape: tuple[tuple[int, int], ...] | None = None) -> Assignment:
    """Schedule the pending pod groups as kube-scheduler's workload cycle does (module doc).

    Parameters
    ----------
    problem
        The compiled instance.
    config
        The score configuration (a KubeSchedulerConfiguration profile); default the problem's
        ``kube_scoring``, else upstream's defaults.
    strategy, resources, shape
        Override the placement strategy of ``config``: ``MostAllocated``, ``LeastAllocated`` or
        ``RequestedToCapacityRatio`` (with ``shape``: ``(utilization 0-100, score 0-10)``
        points, increasing), over ``(resource, weight)`` pairs.
    weights
        Override the weights of PlacementBinPacking and PodGroupPodsCount.

    Returns
    -------
    Assignment
        The pods bound, in binding order; a reason per group left pending.

    Raises
    ------
    ValueError
        For another strategy or a bad shape (upstream: the plugin's arguments fail validation).
    """
    config = with_overrides(config or problem.kube_scoring or KubeScoring(),
                            strategy, weights, resources, shape)
    cap = Capacity(problem)
    node = NodeScoring.of(problem, config)
    scoring = PlacementScoring.of(problem, config)
    domains = Domains(problem)
    assignment = Assignment()
    for j in admission_order(problem):
        why = _schedule_group(problem, cap, node, domains, j, scoring, assignment)
        if why is not None:
            assignment.reasons[j] = why
    return assignment


def with_overrides(config: KubeScoring, strategy: str | None, weights: tuple[int, int] | None,
                   resources: tuple[tuple[str, int], ...] | None,
                   shape: tuple[tuple[int, int], ...] | None) -> KubeScoring:
    """``config`` with the placement strategy and weights given (None: keep ``config``'s).

    Raises
    ------
    ValueError
        An unsupported strategy, a bad resource weight or shape.
    """
    given = config.placement
    placement = ScoringStrategy(
        type=given.type if strategy is None else strategy,
        resources=given.resources if resources is None else tuple(resources),
        shape=given.shape if shape is None else tuple(tuple(p) for p in shape))
    fit, count = ((config.placement_fit_weight, config.pods_count_weight) if weights is None
                  else weights)
    return config.model_copy(update={"placement": placement, "placement_fit_weight": fit,
                                     "pods_count_weight": count})


def _schedule_group(problem: Problem, cap: Capacity, node: NodeScoring, domains: Domains,
                    j: int, scoring: PlacementScoring, assignment: Assignment) -> str | None:
    """One pod group's cycle: its pods bound in ``assignment``, or why it stays pending."""
    cj = problem.jobs[j]
    if cj.has_subgroup_policies or cj.gang_nodes or cj.min_per_task:
        return "sub-gangs are not expressible in the Workload API"
    found = candidates(problem, domains, j)
    if isinstance(found, str):
        return found
    running = problem.running_count(cj.groups)
    tried = nominated_placement([domains.nodes(d, None) for d in found], nominations(problem, j))
    if tried is not None:  # evaluated first; taken when the gang is feasible there
        trial = Trial(found[tried], domains.nodes(found[tried], cj.pool))
        if run_pods(problem, cap, node, j, trial, running):
            _bind(trial, cap, assignment)
            return None
    rows = domains.matrix(cj.limit.tier if found != [None] else None, found)
    bound = upper_bounds(problem, cap.free, j, rows, cj.pool)
    ok = np.flatnonzero((bound >= 1) & (running + bound >= cj.min_available))
    ok = ok[ok != (-1 if tried is None else tried)]
    trials = {}
    if len(cj.groups) == 1:  # the run schedules exactly the bound: no need to run it
        placed = bound[ok]
        g = cj.groups[0]
        proposed = placed[:, None] * scoring.resources.pod(problem, g)[None, :]
    else:
        for k in ok:
            trial = Trial(found[k], domains.nodes(found[k], cj.pool))
            if run_pods(problem, cap, node, j, trial, running):
                trials[int(k)] = trial
        ok = np.array(sorted(trials), dtype=np.int64)
        placed = np.array([len(trials[k].pods) for k in ok], dtype=np.int64)
        placing = scoring.resources
        proposed = np.array([sum((placing.pod(problem, g) for g, _ in
                                  trials[k].pods), np.zeros(len(placing.columns), np.int64))
                             for k in ok], dtype=np.int64).reshape(len(ok), -1)
    if len(ok) == 0:
        return pending_reason(len(found), tried is not None, running >= cj.min_available)
    best = int(ok[0]) if len(ok) == 1 else int(ok[int(placement_scores(
        problem, cap, rows[ok], cj.pool, placed, proposed, running, scoring).argmax())])
    trial = trials.get(best) or Trial(found[best], domains.nodes(found[best], cj.pool))
    if best not in trials and not run_pods(problem, cap, node, j, trial, running):
        raise AssertionError("a one-group run scheduled less than its bound")
    _bind(trial, cap, assignment)
    return None


def _bind(trial: Trial, cap: Capacity, assignment: Assignment) -> None:
    for g, n in trial.pods:
        assignment.add(g, n, 1)
        cap.take(g, n, 1)


def pending_reason(placements: int, nominated_tried: bool, quorum_met: bool) -> str:
    """Upstream's status text for a group no placement admits (``placements`` generated; the
    nominated one evaluated first or not; ``quorum_met``: the running pods alone meet the gang
    minimum, so a placement where no new pod fits still passes PlacementFeasible). The first
    placement's own status is appended only where it is upstream's fixed nominated text."""
    if not placements:
        return "no feasible placements found"
    if nominated_tried and quorum_met:
        return (f"0/{placements} placements are available, first placement status: nominated "
                "placement is feasible but no pending pod was scheduled")
    if quorum_met:  # the one placement succeeds with no new pod: the root cycle refuses it
        return "no pods were schedulable"
    return f"0/{placements} placements are available"


def nominations(problem: Problem, j: int) -> set[int]:
    """The nodes the pending pods of job ``j`` are nominated to (nodes the instance has)."""
    return {n for g in problem.jobs[j].groups for n in problem.group_nominated.get(g, ()) if n >= 0}


def nominated_placement(placements: list[np.ndarray], nominated: set[int]) -> int | None:
    """Upstream's ``nominatedPlacement``: the index of the one placement (its node indices)
    holding a nominated node; None without nominations, when no placement holds one, or when
    several do (whatever their order)."""
    if not nominated:
        return None
    wanted = np.fromiter(nominated, dtype=np.int64)
    holding = [k for k, nodes in enumerate(placements) if np.isin(nodes, wanted).any()]
    return holding[0] if len(holding) == 1 else None
