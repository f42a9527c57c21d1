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

from toposolve.core.assignment import Assignment
from toposolve.core.problem import Problem
from toposolve.engines.common.admission import admission_order
from toposolve.engines.common.capacity import Capacity, fit_in
from toposolve.engines.kube.scores import (
    ScoredResources,
    node_scores,
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
    """Candidate placements per tier: the domains of a topology key, in name order."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        topo = problem.topology
        self.real = [h for h in range(len(topo.names)) if h != topo.root]
        names = problem.topology.node_names
        self.order = np.argsort(np.array(names, dtype=object), kind="stable")
        self.rank = np.empty_like(self.order)
        self.rank[self.order] = np.arange(len(self.order))
        self.cache: dict[int, list[int]] = {}

    def of_tier(self, tier: int) -> list[int]:
        """HyperNodes of ``tier`` (the lowest tier above it when none), by name."""
        if tier not in self.cache:
            topo = self.problem.topology
            tiers = sorted({int(topo.tier[h]) for h in self.real if topo.tier[h] >= tier})
            at = tiers[0] if tiers else None
            found = [h for h in self.real if int(topo.tier[h]) == at]
            self.cache[tier] = sorted(found, key=lambda h: topo.names[h])
        return self.cache[tier]

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


def _upper_bound(problem: Problem, free: np.ndarray, j: int, nodes: np.ndarray) -> int:
    """Pods the placement could hold at most (each group alone): a run that cannot reach
    ``minAvailable`` is skipped without changing the outcome."""
    total = 0
    for g in problem.jobs[j].groups:
        fits = fit_in(free[nodes], problem.group_request[g], problem.group_feasible[g, nodes])
        total += min(len(problem.group_pending[g]), int(fits.sum()))
    return total


def run_pods(problem: Problem, cap: Capacity, scored: ScoredResources, j: int,
             trial: Trial, running: int) -> bool:
    """The pod-by-pod run in one placement (on a copy of the free capacity); True when the
    gang is satisfied (``minAvailable`` with running pods, at least one new pod)."""
    cj = problem.jobs[j]
    nodes = trial.nodes
    free = cap.free[nodes].copy()
    alloc_s = problem.allocatable[nodes][:, scored.columns]
    remaining = sum(len(problem.group_pending[g]) for g in cj.groups)
    for g in cj.groups:
        request = problem.group_request[g]
        pod = scored.nonzero(request)
        fits = fit_in(free, request, problem.group_feasible[g, nodes])
        used_s = (problem.allocatable[nodes] - free)[:, scored.columns]
        scores = node_scores(used_s, alloc_s, pod, scored.weights)
        for _ in problem.group_pending[g]:
            remaining -= 1
            best = int(np.where(fits > 0, scores, -1).argmax()) if len(fits) else 0
            if len(fits) and fits[best] > 0:
                trial.pods.append((g, int(nodes[best])))
                free[best] -= request
                fits[best] -= 1
                used_s[best] += request[scored.columns]
                scores[best] = node_scores(used_s[best], alloc_s[best], pod, scored.weights)
            elif running + len(trial.pods) + remaining < cj.min_available:
                return False  # the gang's PlacementFeasible check stops the run
    return bool(trial.pods) and running + len(trial.pods) >= cj.min_available


def best_trial(problem: Problem, scored: ScoredResources, trials: list[Trial], running: int,
               strategy: str, weights: tuple[int, int]) -> Trial:
    """The feasible placement with the highest weighted score; the first (by domain name) on a
    tie. One feasible placement is taken unscored, as upstream."""
    if len(trials) == 1:
        return trials[0]
    counts = pods_count_scores([running + len(t.pods) for t in trials])
    best, best_score = trials[0], None
    for t, count in zip(trials, counts, strict=True):
        proposed = np.zeros(len(scored.columns), dtype=np.int64)
        for g, _ in t.pods:
            proposed += scored.nonzero(problem.group_request[g])
        alloc = problem.allocatable[t.nodes][:, scored.columns].sum(axis=0)
        allocated = problem.used[t.nodes][:, scored.columns].sum(axis=0)
        fit = placement_fit_score(proposed, allocated, alloc, scored.weights, strategy)
        score = weights[0] * fit + weights[1] * count
        if best_score is None or score > best_score:
            best, best_score = t, score
    return best


def run_kube(problem: Problem, *, strategy: str = "MostAllocated",
             weights: tuple[int, int] = (1, 1)) -> Assignment:
    """Schedule the pending pod groups as kube-scheduler's workload cycle does (module doc).

    Parameters
    ----------
    problem
        The compiled instance.
    strategy
        NodeResourcesFit's placement scoring strategy: ``MostAllocated`` (default) or
        ``LeastAllocated``.
    weights
        Weights of NodeResourcesFit and PodGroupPodsCount among the placement scores.

    Returns
    -------
    Assignment
        The pods bound, in binding order; a reason per group left pending.
    """
    cap = Capacity(problem)
    scored = ScoredResources.of(problem)
    domains = Domains(problem)
    assignment = Assignment()
    for j in admission_order(problem):
        cj = problem.jobs[j]
        if cj.has_subgroup_policies or cj.gang_nodes or cj.min_per_task:
            assignment.reasons[j] = "sub-gangs are not expressible in the Workload API"
            continue
        found = candidates(problem, domains, j)
        if isinstance(found, str):
            assignment.reasons[j] = found
            continue
        running = problem.running_count(cj.groups)
        trials = []
        for domain in found:
            trial = Trial(domain, domains.nodes(domain, cj.pool))
            if running + _upper_bound(problem, cap.free, j, trial.nodes) < cj.min_available:
                continue
            if run_pods(problem, cap, scored, j, trial, running):
                trials.append(trial)
        if not trials:
            assignment.reasons[j] = (f"no feasible placement among {len(found)} candidate "
                                     "placement(s)")
            continue
        for g, n in best_trial(problem, scored, trials, running, strategy, weights).pods:
            assignment.add(g, n, 1)
            cap.take(g, n, 1)
    return assignment
