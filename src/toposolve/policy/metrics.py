"""What a plan achieves, measured from its bindings and evictions (any engine, any plan).

Per plan: jobs placed/pending, accelerator units placed (plain and priority-weighted; in
milli-units, with ``accelerator_unit: milli`` in the summary, when a pod shares a fraction of an
accelerator — :func:`toposolve.policy.objective.unit_scale`, then also FGD's
``gpu_fragmentation``), cluster accelerator utilisation, topology quality per job,
fragmentation left behind, evictions.

Topology quality of a job (all its pods after the plan: running, not evicted, plus new):
``domain_tier`` is the tier of the lowest HyperNode holding them all (the virtual root's tier when
they span the cluster); ``pair_lca_tier`` is the mean, over pairs of its pods, of the tier of the
pair's lowest common HyperNode (0 for two pods on one node); ``leaves`` is how many lowest-tier
HyperNodes the job touches.

Fragmentation: ``free_leaves`` / ``free_tier2`` count HyperNodes of the lowest tier present
(tier 1 normally, tier 0 where the input has it) / of the tier above it whose nodes are all
entirely idle; ``largest_free_domain_nodes`` is the most idle nodes under one HyperNode of
tier ≤ 2 — the largest whole-node gang that still fits under a tier-2 switch.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np

from toposolve.core.assignment import Assignment, from_plan
from toposolve.core.errors import require_type
from toposolve.core.footprint import Footprint, occupied_domain
from toposolve.core.plan import Plan
from toposolve.core.problem import Problem
from toposolve.policy.gpu_fragmentation import plan_gpu_fragmentation
from toposolve.policy.objective import (
    accelerator_resources,
    make_value,
    placed_units,
    stage_values,
    unit_scale,
    usage_after,
)
from toposolve.policy.profiles import CommWeights, ObjectiveSpec


@dataclass
class JobMetrics:
    """One job with pending pods after the plan: placed or not, and its topology quality."""

    job: str
    placed: bool
    pods: int
    domain: str | None
    domain_tier: int | None
    pair_lca_tier: float | None
    leaves: int


@dataclass
class PlanMetrics:
    """What one plan achieves (see the module docstring); :meth:`summary` is ``plan.metrics``."""

    engine: str
    status: str
    wall_time_s: float
    gap: float | None
    jobs_placed: int
    jobs_pending: int
    pods_bound: int
    accelerators_placed: int
    weighted_accelerators_placed: int
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
    # priority value (as text, highest first) -> accelerator units / jobs placed at it
    accelerators_placed_by_priority: dict[str, int] = field(default_factory=dict)
    jobs_placed_by_priority: dict[str, int] = field(default_factory=dict)
    accelerator_unit_scale: int = 1  # 1000: the accelerator counts above are milli-units
    # FGD's fragmentation in expected milli-units (:mod:`toposolve.policy.gpu_fragmentation`)
    gpu_fragmentation: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def accelerator_label(self) -> str:
        """What the accelerator counts count: ``"accelerators"`` or ``"milli-accelerators"``."""
        return "milli-accelerators" if self.accelerator_unit_scale == 1000 else "accelerators"

    def summary(self) -> dict[str, Any]:
        """The human metrics a plan carries (``plan.metrics``): counts, utilisation, spread
        and fragmentation in their own units, comparable between scenarios — unlike the
        objective's scalar, whose priority weights depend on the instance."""
        unit = {"accelerator_unit": "milli",
                "gpu_fragmentation": round(self.gpu_fragmentation, 3)} if (
            self.accelerator_unit_scale == 1000) else {}
        return {
            **unit,
            "jobs_placed": self.jobs_placed,
            "jobs_pending": self.jobs_pending,
            "jobs_placed_by_priority": dict(self.jobs_placed_by_priority),
            "accelerators_placed": self.accelerators_placed,
            "accelerators_placed_by_priority": dict(self.accelerators_placed_by_priority),
            "utilisation": round(self.utilisation, 6),
            "mean_domain_tier": _rounded(self.mean_domain_tier),
            "free_leaves": self.free_leaves,
            "largest_free_domain_nodes": self.largest_free_domain_nodes,
            "evictions": self.evictions,
            "broken_gangs": self.broken_gangs,
        }

    def to_frame(self) -> Any:
        """One row per job with pending pods (:class:`JobMetrics`), as a pandas DataFrame."""
        rows = [asdict(j) for j in self.jobs]
        return _pandas().DataFrame(rows, columns=[f.name for f in fields(JobMetrics)])


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:  # pragma: no cover - the extra is installed in the test environment
        raise ImportError("data frames need pandas: pip install 'toposolve[frames]'") from None
    return pandas


def to_frame(items: Iterable[Any], labels: Iterable[str] | None = None) -> Any:
    """One row per plan: engine, status and the human metrics (pandas, the ``frames`` extra).

    Parameters
    ----------
    items
        :class:`~toposolve.core.plan.Plan` objects with ``metrics``, or :class:`PlanMetrics`.
    labels
        The rows' names (a scenario per row in a sweep); default: a plain index.

    Returns
    -------
    pandas.DataFrame
        One column per metric; the per-priority maps as one column per priority
        (``accelerators@1000``, ``jobs@1000``).
    """
    rows = []
    for item in items:
        summary = item.summary() if isinstance(item, PlanMetrics) else dict(item.metrics)
        row: dict[str, Any] = {"engine": item.engine, "status": item.status}
        for key, value in summary.items():
            if isinstance(value, dict):
                unit = "accelerators" if key.startswith("accelerators") else "jobs"
                row.update({f"{unit}@{p}": n for p, n in value.items()})
            else:
                row[key] = value
        rows.append(row)
    frame = _pandas().DataFrame(rows)
    if labels is not None:
        frame.index = list(labels)
    return frame


def pair_lca_stats(problem: Problem, node_counts: np.ndarray) -> tuple[float | None, int]:
    """The mean lowest-common-HyperNode tier over pod pairs.

    Parameters
    ----------
    problem
        The compiled problem (its topology).
    node_counts
        [N] pods per node.

    Returns
    -------
    tuple
        The mean tier (``None`` for fewer than two pods) and the number of pairs.
    """
    topo = problem.topology
    total = int(node_counts.sum())
    pairs = total * (total - 1) // 2
    if pairs == 0:
        return None, 0
    in_h = np.asarray(topo.member_counts @ node_counts).ravel()
    within = in_h * (in_h - 1) // 2
    exact = within.copy()
    child = np.flatnonzero(topo.parent >= 0)
    np.subtract.at(exact, topo.parent[child], within[child])
    same_node = node_counts * (node_counts - 1) // 2
    np.subtract.at(exact, topo.node_home, same_node)
    return float((exact * topo.tier).sum()) / pairs, pairs


@dataclass
class _After:
    """The plan as counts, and where every pod of a job with pending pods stands after it."""

    assignment: Assignment  # the plan's new pods and evictions (from_plan)
    evicted: set[str]
    footprint: Footprint  # the pods of jobs with pending pods after the plan

    @classmethod
    def of(cls, problem: Problem, plan: Plan) -> _After:
        assignment = from_plan(problem, plan)
        evicted = set(assignment.evicted)
        footprint = Footprint.of_jobs(problem, assignment, problem.pending_jobs)
        return cls(assignment, evicted, footprint)

    def usage(self, problem: Problem) -> np.ndarray:
        """[N, R] resources in use after the plan."""
        return usage_after(problem, self.assignment)


def topology_quality(problem: Problem, node_counts: np.ndarray) -> dict[str, Any]:
    """Topology quality of pods spread over nodes (module docstring).

    Parameters
    ----------
    problem
        The compiled problem (its topology).
    node_counts
        [N] pods per node, some > 0.

    Returns
    -------
    dict
        ``domain`` (:func:`toposolve.core.footprint.occupied_domain`), ``domain_tier``,
        ``pair_lca_tier`` (mean over pod pairs) and ``leaves`` (lowest-tier HyperNodes touched).
    """
    topo = problem.topology
    used = np.flatnonzero(node_counts)
    domain = occupied_domain(problem, used.tolist())
    assert domain is not None, "topology quality of no pods"
    mean_pair, _ = pair_lca_stats(problem, node_counts)
    leaves = len({int(x) for x in topo.node_leaf[used] if x >= 0})
    return {
        "domain": topo.names[domain], "domain_tier": int(topo.tier[domain]),
        "pair_lca_tier": mean_pair, "leaves": leaves,
    }


def _job_metrics(problem: Problem, after: _After) -> list[JobMetrics]:
    out: list[JobMetrics] = []
    for j in problem.pending_jobs:
        groups = problem.jobs[j].groups
        key = problem.jobs[j].key
        per_node = after.footprint.node_counts(groups)
        placed = any(c > 0 for g in groups for c in after.assignment.counts.get(g, {}).values())
        if not per_node:
            out.append(JobMetrics(key, placed, 0, None, None, None, 0))
            continue
        counts = np.zeros(problem.n_nodes, dtype=np.int64)
        counts[list(per_node)] = list(per_node.values())
        out.append(JobMetrics(key, placed, int(counts.sum()), **topology_quality(problem, counts)))
    return out


def _by_priority(problem: Problem, plan: Plan, jobs: list[JobMetrics]) -> tuple[dict[int, int],
                                                                                dict[int, int]]:
    """Accelerator units (:func:`placed_units`) and jobs placed per priority value (every
    pending job's priority)."""
    units = placed_units(problem)
    priority_of = {problem.jobs[j].key: problem.jobs[j].priority for j in problem.pending_jobs}
    unit_counts = dict.fromkeys(sorted(set(priority_of.values()), reverse=True), 0)
    job_counts = dict(unit_counts)
    for b in plan.bindings:
        g = problem.pod_group[b.pod]
        prio = problem.jobs[int(problem.group_job[g])].priority
        unit_counts[prio] = unit_counts.get(prio, 0) + int(units[g])
    for m in jobs:
        if m.placed:
            job_counts[priority_of[m.job]] += 1
    return unit_counts, job_counts


def _fragmentation(problem: Problem, usage: np.ndarray) -> tuple[int, int, int]:
    """Whole idle HyperNodes of the lowest tier and the tier above, and the most idle nodes
    under one HyperNode of tier ≤ 2."""
    topo = problem.topology
    idle_node = (usage <= 0).all(axis=1) & problem.schedulable
    idle_in = np.asarray(topo.member_counts @ idle_node.astype(np.int64)).ravel()
    whole_free = idle_in == topo.node_count
    low = topo.tier <= 2
    return (
        int((whole_free & (topo.tier == topo.min_tier)).sum()),
        int((whole_free & (topo.tier == topo.min_tier + 1)).sum()),
        int(idle_in[low].max()) if low.any() else 0,
    )


def plan_metrics(problem: Problem, plan: Plan, objective: ObjectiveSpec | None = None,
                 comm: CommWeights | None = None) -> PlanMetrics:
    """Measure ``plan`` (see the module docstring).

    Parameters
    ----------
    problem
        The compiled problem the plan is for.
    plan
        Any engine's plan.
    objective
        The objective whose stage values are reported (default: the default objective).
    comm
        The cost model pricing the ``comm`` stage (default: :class:`CommWeights`' defaults).

    Returns
    -------
    PlanMetrics
        Counts, utilisation, topology quality per job, fragmentation and evictions.
    """
    require_type(problem, Problem, "problem")
    require_type(plan, Plan, "plan")
    after = _After.of(problem, plan)
    values = stage_values(problem, after.assignment, comm)
    value = make_value(problem, values, objective or ObjectiveSpec())
    usage = after.usage(problem)
    acc = accelerator_resources(problem)
    capacity = problem.allocatable[:, acc].sum() if acc else 0
    jobs = _job_metrics(problem, after)
    units, placed_per_priority = _by_priority(problem, plan, jobs)
    placed_jobs = [m for m in jobs if m.placed]
    tiers = [m.domain_tier for m in placed_jobs if m.domain_tier is not None]
    pair_tiers = [m.pair_lca_tier for m in placed_jobs if m.pair_lca_tier is not None]
    free_leaves, free_tier2, largest = _fragmentation(problem, usage)
    return PlanMetrics(
        engine=plan.engine,
        status=plan.status,
        wall_time_s=plan.wall_time_s,
        gap=plan.gap,
        jobs_placed=len(placed_jobs),
        jobs_pending=len(jobs) - len(placed_jobs),
        pods_bound=len(plan.bindings),
        accelerators_placed=sum(units.values()),
        weighted_accelerators_placed=int(value.stages.get("placed", 0)),
        utilisation=float(usage[:, acc].sum() / capacity) if capacity else 0.0,
        mean_domain_tier=float(np.mean(tiers)) if tiers else None,
        mean_pair_lca_tier=float(np.mean(pair_tiers)) if pair_tiers else None,
        free_leaves=free_leaves,
        free_tier2=free_tier2,
        largest_free_domain_nodes=largest,
        evictions=len(after.evicted),
        broken_gangs=values["broken_gangs"],  # one definition: policy/objective.py
        objective_stages=dict(value.stages),
        jobs=jobs,
        accelerators_placed_by_priority={str(p): n for p, n in units.items()},
        jobs_placed_by_priority={str(p): n for p, n in placed_per_priority.items()},
        accelerator_unit_scale=unit_scale(problem),
        gpu_fragmentation=plan_gpu_fragmentation(problem, usage),
    )
