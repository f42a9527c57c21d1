"""The objective every engine is judged by: stages, their values, and how plans compare.

Any :class:`~toposolve.core.assignment.Assignment` (heuristic, CP-SAT, hand-made) is evaluated
here, so engines are compared under one definition. Stages, named as in
:class:`toposolve.policy.profiles.ObjectiveStage`: ``placed_jobs`` and ``placed`` (maximised:
priority-weighted jobs and accelerator units placed: milli-units when a pod shares a fraction
of an accelerator, see :func:`unit_scale`), ``spread`` (the tiers of the lowest HyperNodes
holding each job and SubJob), ``fragmentation`` (free leaf domains broken),
``broken_gangs``, ``eviction_cost`` and ``evicted_pods`` (all minimised; the last three are 0
without evictions), ``comm`` (minimised: domain crossings of jobs with a parallelism layout),
``dp_span`` / ``pp_span`` (minimised: tier multiplier of their smallest reachable largest DP /
pipeline span), ``edge_floor`` / ``span_floor`` (minimised: the fewest ring edges leaving a
job's pods per leaf, :mod:`.edge_floor`; the same with DP groups kept inside the capped level's
domains, :mod:`.span_floor`), ``gpu_fragmentation`` (FGD's measure) and ``node_order`` (the
positions of the nodes new pods land on; a fixed final tie-break). Priority levels weigh with
strict dominance: one unit at a higher level outweighs every pending unit below it together.
Plans compare lexicographically in profile order, or by the weighted ``scalar``. The exact
definitions (units, level weights, each stage, the scalar and the gap): ``docs/objective.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from toposolve.core.errors import require_type
from toposolve.core.footprint import Footprint
from toposolve.core.parallelism import accelerator_indices
from toposolve.core.problem import Problem
from toposolve.core.topology import subtree_sums
from toposolve.policy.comm_stage import comm_value, dp_span_value, pp_span_value
from toposolve.policy.edge_floor import edge_floor_value
from toposolve.policy.gpu_fragmentation import gpu_fragmentation_value
from toposolve.policy.profiles import CommWeights, ObjectiveSpec
from toposolve.policy.rules import gang_ready
from toposolve.policy.span_floor import span_floor_value

MAXIMISE = {"placed", "placed_jobs"}
STAGE_NAMES = ("placed", "placed_jobs", "spread", "fragmentation", "broken_gangs", "eviction_cost",
               "evicted_pods", "comm", "dp_span", "pp_span", "edge_floor", "span_floor",
               "gpu_fragmentation", "node_order")


def sense(stage: str) -> int:
    """+1 for stages to maximise, -1 for stages to minimise."""
    return 1 if stage in MAXIMISE else -1


def accelerator_resources(problem: Problem) -> list[int]:
    """Indices of the resources counted as accelerators."""
    return accelerator_indices(problem.resources)


def accelerator_units(problem: Problem) -> np.ndarray:
    """[G] whole accelerator units one pod of each group counts (1 for pods without any)."""
    acc = accelerator_resources(problem)
    G = len(problem.group_job)
    if not acc or G == 0:
        return np.ones(G, dtype=np.int64)
    whole = -(-problem.group_request[:, acc] // 1000)  # ceil per resource
    units = whole.sum(axis=1)
    return np.where(units > 0, units, 1).astype(np.int64)


def unit_scale(problem: Problem) -> int:
    """Units per accelerator of the ``placed`` stage: 1000 (milli-accelerators) when some group
    asks a fractional amount of an accelerator resource (e.g. 300 milli of a shared GPU), else 1."""
    acc = accelerator_resources(problem)
    if not acc or len(problem.group_job) == 0:
        return 1
    return 1000 if bool((problem.group_request[:, acc] % 1000).any()) else 1


def placed_units(problem: Problem) -> np.ndarray:
    """[G] units one pod of each group counts in ``placed`` and the eviction stages.

    Whole accelerators (:func:`accelerator_units`) unless :func:`unit_scale` is 1000; then the
    pod's accelerator milli-units summed over accelerator resources (a 0.3-GPU pod counts 300, a
    whole GPU 1000) and 1000 for a pod without accelerators, as one unit counts it otherwise.
    """
    if unit_scale(problem) == 1:
        return accelerator_units(problem)
    milli = problem.group_request[:, accelerator_resources(problem)].sum(axis=1)
    return np.where(milli > 0, milli, 1000).astype(np.int64)


def dominance_weights(levels_units: dict[int, int]) -> dict[int, int]:
    """Strict-dominance weight per priority from the total units per priority (see module doc)."""
    weights: dict[int, int] = {}
    below = 0  # Σ W_l·U_l over the levels already seen
    for priority in sorted(levels_units):
        weights[priority] = 1 + below
        below += weights[priority] * levels_units[priority]
    return weights


def pending_level_units(problem: Problem) -> dict[int, int]:
    """Total :func:`placed_units` of pending pods per job priority."""
    units = placed_units(problem)
    out: dict[int, int] = {}
    for j in problem.pending_jobs:
        priority = problem.jobs[j].priority
        for g in problem.jobs[j].groups:
            pending = problem.group_pending_count(g)
            if pending:
                out[priority] = out.get(priority, 0) + int(units[g]) * pending
    return out


def group_job_priority(problem: Problem) -> list[int]:
    """[G] the priority of each group's job."""
    priority = [cj.priority for cj in problem.jobs]
    return [priority[j] for j in problem.group_job.tolist()]


def placed_pod_weights(problem: Problem) -> list[int]:
    """[G] exact ``W_level × units`` of one new pod of each group (the ``placed`` coefficient)."""
    weights = dominance_weights(pending_level_units(problem))
    return _pod_weights(problem, weights, range(len(problem.group_job)))


def _pod_weights(problem: Problem, weights: dict[int, int], groups) -> list[int]:
    """``weights[level of the group's job] × units`` (1 × units for a level not listed) of one
    pod of each of ``groups``."""
    units = placed_units(problem).tolist()
    job_of = problem.group_job.tolist()
    return [weights.get(problem.jobs[job_of[g]].priority, 1) * units[g] for g in groups]


def placed_job_weights(problem: Problem) -> dict[int, int]:
    """Job -> strict-dominance weight of placing it (the ``placed_jobs`` coefficient): the
    dominance weights of the module doc computed over job counts per priority level, so one job
    of a higher priority outweighs every job below it."""
    pending = [problem.jobs[j] for j in problem.pending_jobs]
    counts: dict[int, int] = {}
    for cj in pending:
        counts[cj.priority] = counts.get(cj.priority, 0) + 1
    weights = dominance_weights(counts)
    return {cj.index: weights[cj.priority] for cj in pending}


def eviction_pod_weights(problem: Problem) -> list[int]:
    """[G] exact ``W'_level × units`` of one evicted pod of each group."""
    units = placed_units(problem).tolist()
    priority = group_job_priority(problem)
    per_level: dict[int, int] = {}
    for g, running in enumerate(problem.group_running):
        if running:
            count = sum(running.values())
            per_level[priority[g]] = per_level.get(priority[g], 0) + units[g] * count
    weights = dominance_weights(per_level)
    return [weights.get(p, 1) * u for p, u in zip(priority, units, strict=True)]


def leaf_hypernodes(problem: Problem) -> list[int]:
    """HyperNodes of the lowest tier present (the root only when there are no real ones)."""
    topo = problem.topology
    return np.flatnonzero(np.asarray(topo.tier) == topo.min_tier).tolist()


def initially_idle_leaves(problem: Problem) -> set[int]:
    """Leaf HyperNodes without any running pod on their nodes before the plan."""
    busy = np.zeros(problem.n_nodes, dtype=np.int64)
    busy[np.fromiter(problem.running_pods.values(), dtype=np.int64,
                     count=len(problem.running_pods))] = 1
    busy_under = subtree_sums(problem.topology.members, busy)  # [H] busy nodes under each HyperNode
    return {h for h in leaf_hypernodes(problem) if busy_under[h] == 0}


@dataclass(frozen=True)
class ObjectiveValue:
    """Stage values of one plan under one :class:`ObjectiveSpec` (see the module doc)."""

    stages: dict[str, int]  # in profile order
    mode: str
    scalar: float
    weights: dict[str, float] = field(default_factory=dict)

    def signed(self) -> list[int]:
        return [sense(name) * value for name, value in self.stages.items()]

    def compare(self, other: ObjectiveValue) -> int:
        """+1 if ``self`` is better, -1 if worse, 0 if equal under this mode."""
        if self.mode == "weighted":
            return (self.scalar > other.scalar) - (self.scalar < other.scalar)
        for mine, theirs in zip(self.signed(), other.signed(), strict=True):
            if mine != theirs:
                return 1 if mine > theirs else -1
        return 0

    def better_or_equal(self, other: ObjectiveValue) -> bool:
        return self.compare(other) >= 0

    def better(self, other: ObjectiveValue) -> bool:
        return self.compare(other) > 0


def _spread(problem: Problem, assignment, placed_jobs: list[int]) -> int:
    """Sum of the tiers of the domains placed jobs and their policy SubJobs occupy
    (:mod:`toposolve.core.footprint`)."""
    tier, root = problem.topology.tier, problem.topology.root
    footprint = Footprint.of_jobs(problem, assignment, placed_jobs)
    spread = 0
    for j in placed_jobs:
        cj = problem.jobs[j]
        h = footprint.domain(cj.groups)
        spread += int(tier[root if h is None else h])
        for s in cj.subjobs:
            h = footprint.domain(
                problem.subjobs[s].groups) if problem.subjobs[s].policy >= 0 else None
            if h is not None:
                spread += int(tier[h])
    return spread


def usage_after(problem: Problem, assignment) -> np.ndarray:
    """[N, R] resources in use after ``assignment``: running pods less the evicted, plus new."""
    usage = problem.used + assignment.usage(problem)
    for pod in set(assignment.evicted):
        if pod in problem.running_pods:
            usage[problem.running_pods[pod]] -= problem.group_request[problem.pod_group[pod]]
    return usage


def node_order_value(assignment) -> int:
    """``Σ`` over new pods of their node's index (the instance's node order)."""
    return sum(n * c for per in assignment.counts.values() for n, c in per.items() if c > 0)


def _evicted_per_group(problem: Problem, assignment) -> dict[int, int]:
    """Running pods the plan evicts, per group."""
    out: dict[int, int] = {}
    for pod in set(assignment.evicted):
        if pod in problem.running_pods:
            g = problem.pod_group[pod]
            out[g] = out.get(g, 0) + 1
    return out


def _disruption(problem: Problem, new_per_group: dict[int, int],
                evicted_per_group: dict[int, int]) -> tuple[int, int]:
    """Gangs the evictions break, and the eviction cost: the evicted pods' weights plus, for a
    broken gang, the weights of its pods that keep running (they restart)."""
    broken = 0
    evict_w = eviction_pod_weights(problem) if evicted_per_group else []
    cost = sum(evict_w[g] * n for g, n in evicted_per_group.items())
    for j in sorted({int(problem.group_job[g]) for g in evicted_per_group}):
        groups = problem.jobs[j].groups
        before = problem.running_per_group(groups)
        left = {g: sum(problem.group_running[g].values()) - evicted_per_group.get(g, 0)
                for g in groups}
        after = {g: left[g] + new_per_group.get(g, 0) for g in groups}
        if gang_ready(problem, j, before) and not gang_ready(problem, j, after):
            broken += 1
            cost += sum(evict_w[g] * left[g] for g in groups)  # restarted
    return broken, cost


def stage_values(problem: Problem, assignment, comm: CommWeights | None = None) -> dict[str, int]:
    """Every stage's value for ``assignment`` (an :class:`Assignment`); ``comm``: the profile's
    cost model, whose tier factor prices the ``comm`` stage (default: its defaults)."""
    new_per_group = {g: sum(c for c in per.values() if c > 0)
                     for g, per in assignment.counts.items()}
    weights = _pod_weights(problem, dominance_weights(pending_level_units(problem)),
                           list(new_per_group))
    placed = sum(w * n for w, n in zip(weights, new_per_group.values(), strict=True))
    placed_jobs = sorted(assignment.placed_jobs(problem))

    new = np.zeros(problem.n_nodes, dtype=np.int64)
    new[[n for per in assignment.counts.values() for n, c in per.items() if c > 0]] = 1
    # [H] nodes with new pods under each HyperNode
    new_under = subtree_sums(problem.topology.members, new)
    fragmentation = sum(1 for h in initially_idle_leaves(problem) if new_under[h])

    evicted_per_group = _evicted_per_group(problem, assignment) if assignment.evicted else {}
    broken, cost = _disruption(problem, new_per_group, evicted_per_group)
    job_weights = placed_job_weights(problem)
    return {
        "placed": placed,
        "placed_jobs": sum(job_weights.get(j, 0) for j in placed_jobs),
        "spread": _spread(problem, assignment, placed_jobs),
        "fragmentation": fragmentation,
        "broken_gangs": broken,
        "eviction_cost": cost,
        "evicted_pods": sum(evicted_per_group.values()),
        "comm": comm_value(problem, assignment, comm),
        "dp_span": dp_span_value(problem, assignment, comm),
        "pp_span": pp_span_value(problem, assignment, comm),
        "edge_floor": edge_floor_value(problem, assignment, comm),
        "span_floor": span_floor_value(problem, assignment, comm),
        "gpu_fragmentation": gpu_fragmentation_value(problem, usage_after(problem, assignment)),
        "node_order": node_order_value(assignment),
    }


def scalar_of(values: dict[str, int], spec: ObjectiveSpec) -> float:
    """The reporting scalar of stage values (see the module doc)."""
    if spec.mode == "weighted":
        return float(sum(s.weight * sense(s.name) * values[s.name] for s in spec.stages))
    if not spec.stages:
        return 0.0
    first = spec.stages[0].name
    return float(sense(first) * values[first])


def make_value(problem: Problem, values: dict[str, int], spec: ObjectiveSpec) -> ObjectiveValue:
    """Wrap stage values as an :class:`ObjectiveValue` (stages in profile order)."""
    return ObjectiveValue(
        stages={s.name: int(values[s.name]) for s in spec.stages},
        mode=spec.mode,
        scalar=scalar_of(values, spec),
        weights={s.name: s.weight for s in spec.stages},
    )


def evaluate(problem: Problem, assignment, spec: ObjectiveSpec,
             comm: CommWeights | None = None) -> ObjectiveValue:
    """Objective value of ``assignment`` under ``spec``.

    Parameters
    ----------
    problem
        The compiled problem.
    assignment
        Any engine's (or a hand-made) :class:`~toposolve.core.assignment.Assignment`.
    spec
        The profile's objective: stages, their order and weights.
    comm
        The profile's communication cost model (the ``comm`` stage's tier factor; default:
        :class:`CommWeights`' defaults).

    Returns
    -------
    ObjectiveValue
    """
    require_type(problem, Problem, "problem")
    return make_value(problem, stage_values(problem, assignment, comm), spec)
