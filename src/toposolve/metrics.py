"""What a plan achieves, measured from its bindings and evictions (any engine, any plan).

Per plan: jobs placed/pending, accelerator units placed (plain and priority-weighted), cluster
accelerator utilisation, topology quality per job, fragmentation left behind, evictions.

Topology quality of a job (all its pods after the plan: running, not evicted, plus new):
``domain_tier`` is the tier of the lowest HyperNode holding them all (the virtual root's tier when
they span the cluster); ``pair_lca_tier`` is the mean, over pairs of its pods, of the tier of the
pair's lowest common HyperNode (0 for two pods on one node); ``leaves`` is how many lowest-tier
HyperNodes the job touches.

Fragmentation: ``free_leaves`` / ``free_tier2`` count HyperNodes of the lowest tier present (tier 1
normally, tier 0 where the input has it) / of the tier above it whose nodes are all entirely idle; ``largest_free_domain_nodes`` is the most idle nodes under one HyperNode of tier ≤ 2
— the largest whole-node gang that still fits under a tier-2 switch.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from .objective import accelerator_resources, accelerator_units, make_value, stage_values
from .plan import Plan
from .problem import Problem
from .profiles import ObjectiveSpec


@dataclass
class JobMetrics:
    job: str
    placed: bool
    pods: int
    domain: str | None
    domain_tier: int | None
    pair_lca_tier: float | None
    leaves: int


@dataclass
class PlanMetrics:
    engine: str
    status: str
    wall_time_s: float
    gap: float | None
    jobs_placed: int
    jobs_pending: int
    pods_bound: int
    units_placed: int
    units_by_priority: str  # accelerator units placed per priority value, highest first
    weighted_units_placed: int
    utilisation: float
    mean_domain_tier: float | None
    mean_pair_lca_tier: float | None
    free_leaves: int
    free_tier2: int
    largest_free_domain_nodes: int
    evictions: int
    broken_gangs: int
    objective_stages: dict[str, int] = field(default_factory=dict)
    jobs: list[JobMetrics] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def pair_lca_stats(problem: Problem, node_counts: np.ndarray) -> tuple[float | None, int]:
    """Mean LCA tier over pod pairs, and the pair count, for pods spread as ``node_counts``."""
    topo = problem.topology
    total = int(node_counts.sum())
    pairs = total * (total - 1) // 2
    if pairs == 0:
        return None, 0
    members = topo.members.astype(np.int64)
    in_h = np.asarray(members @ node_counts).ravel()
    within = in_h * (in_h - 1) // 2
    exact = within.copy()
    child = np.flatnonzero(topo.parent >= 0)
    np.subtract.at(exact, topo.parent[child], within[child])
    same_node = node_counts * (node_counts - 1) // 2
    np.subtract.at(exact, topo.node_home, same_node)
    return float((exact * topo.tier).sum()) / pairs, pairs


def _node_counts(problem: Problem, pods_nodes: list[int]) -> np.ndarray:
    return np.bincount(np.array(pods_nodes, dtype=np.int64), minlength=problem.n_nodes)


def plan_metrics(problem: Problem, plan: Plan, objective: ObjectiveSpec | None = None) -> PlanMetrics:
    from .engines.assignment import Assignment

    topo = problem.topology
    node_index = problem.node_index
    evicted = {e.pod for e in plan.evictions}
    units = accelerator_units(problem)
    assignment = Assignment(evicted=sorted(evicted))
    pods_of_job: dict[int, list[int]] = {}
    for pod, n in problem.running_pods.items():
        if pod not in evicted:
            g = problem.pod_group[pod]
            pods_of_job.setdefault(int(problem.group_job[g]), []).append(n)
    new_of_job: dict[int, int] = {}
    for b in plan.bindings:
        g = problem.pod_group[b.pod]
        n = node_index[b.node]
        j = int(problem.group_job[g])
        assignment.add(g, n, 1)
        pods_of_job.setdefault(j, []).append(n)
        new_of_job[j] = new_of_job.get(j, 0) + 1
    values = stage_values(problem, assignment)
    value = make_value(problem, values, objective or ObjectiveSpec())
    usage = problem.used + assignment.usage(problem)
    for pod in evicted:
        usage[problem.running_pods[pod]] -= problem.group_request[problem.pod_group[pod]]

    acc = accelerator_resources(problem)
    capacity = problem.allocatable[:, acc].sum() if acc else 0
    utilisation = float(usage[:, acc].sum() / capacity) if capacity else 0.0
    units_placed = int(sum(units[problem.pod_group[b.pod]] for b in plan.bindings))
    by_priority: dict[int, int] = {cj.priority: 0 for cj in problem.jobs if any(problem.group_pending[g] for g in cj.groups)}
    for b in plan.bindings:
        g = problem.pod_group[b.pod]
        prio = problem.jobs[int(problem.group_job[g])].priority
        by_priority[prio] = by_priority.get(prio, 0) + int(units[g])

    idle_node = (usage <= 0).all(axis=1) & problem.schedulable
    members = topo.members.astype(np.int64)
    idle_in = np.asarray(members @ idle_node.astype(np.int64)).ravel()
    whole_free = idle_in == topo.node_count
    low = topo.tier <= 2
    jobs: list[JobMetrics] = []
    for cj in problem.jobs:
        j = cj.index
        pods = pods_of_job.get(j, [])
        has_pending = any(problem.group_pending[g] for g in cj.groups)
        if not has_pending:
            continue
        placed = new_of_job.get(j, 0) > 0
        if not pods:
            jobs.append(JobMetrics(cj.key, placed, 0, None, None, None, 0))
            continue
        counts = _node_counts(problem, pods)
        dom = topo.lca_of_nodes(np.flatnonzero(counts).tolist())
        mean_pair, _ = pair_lca_stats(problem, counts)
        leaves = len({int(x) for x in topo.node_leaf[np.flatnonzero(counts)] if x >= 0})
        jobs.append(JobMetrics(cj.key, placed, len(pods), topo.names[dom], int(topo.tier[dom]), mean_pair, leaves))
    placed_jobs = [m for m in jobs if m.placed]
    tiers = [m.domain_tier for m in placed_jobs if m.domain_tier is not None]
    pair_tiers = [m.pair_lca_tier for m in placed_jobs if m.pair_lca_tier is not None]
    broken = values["broken_gangs"]  # one definition: objective.py
    return PlanMetrics(
        engine=plan.engine,
        status=plan.status,
        wall_time_s=plan.wall_time_s,
        gap=plan.gap,
        jobs_placed=len(placed_jobs),
        jobs_pending=sum(1 for m in jobs if not m.placed),
        pods_bound=len(plan.bindings),
        units_placed=units_placed,
        units_by_priority=" / ".join(f"{by_priority[p]}@{p}" for p in sorted(by_priority, reverse=True)),
        weighted_units_placed=int(value.stages.get("placed", 0)),
        utilisation=utilisation,
        mean_domain_tier=float(np.mean(tiers)) if tiers else None,
        mean_pair_lca_tier=float(np.mean(pair_tiers)) if pair_tiers else None,
        free_leaves=int((whole_free & (topo.tier == topo.min_tier)).sum()),
        free_tier2=int((whole_free & (topo.tier == topo.min_tier + 1)).sum()),
        largest_free_domain_nodes=int(idle_in[low].max()) if low.any() else 0,
        evictions=len(evicted),
        broken_gangs=broken,
        objective_stages=dict(value.stages),
        jobs=jobs,
    )
