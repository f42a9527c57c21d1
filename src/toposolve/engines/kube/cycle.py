"""kube-scheduler's workload scheduling cycle with Topology-Aware Workload Scheduling.

Order: pending pod groups by priority (descending), then creation (the scheduling queue's
PrioritySort), each one cycle. A cycle generates one candidate placement per domain of the
group's topology key (TopologyPlacement; only the domain holding the group's running pods when
some run; all nodes without a key), evaluates the one holding the pods' nominated nodes first
(taken when feasible), runs the pod-by-pod algorithm in each (filter: the pod fits and its
predicates pass; node choice: its nominated node, else the highest NodeResourcesFit +
BalancedAllocation score), keeps the placements where at least ``minAvailable`` pods (running
included) and at least one new pod are scheduled, scores them (PlacementBinPacking +
PodGroupPodsCount; strategies and weights from the KubeSchedulerConfiguration, upstream's
defaults otherwise) and binds the best one's pods. Ties: the first placement in domain-name
order, the first node in name order (upstream: at random). A CompositePodGroup hierarchy runs
its nested cycle (:mod:`~toposolve.engines.kube.composite`); both use
:mod:`~toposolve.engines.kube.placement`. Rules and upstream lines: ``docs/kube-fidelity.md``.
"""

from __future__ import annotations

import numpy as np

from toposolve.core.assignment import Assignment
from toposolve.core.kube_scoring import KubeScoring, ScoringStrategy
from toposolve.core.problem import Problem
from toposolve.engines.common.admission import admission_order
from toposolve.engines.common.capacity import Capacity
from toposolve.engines.common.devices import DeviceCapacity, capacity_for
from toposolve.engines.common.node_scores import NodeScoring
from toposolve.engines.common.pod_run import Trial
from toposolve.engines.common.queues import QueueLedger
from toposolve.engines.kube.composite import Context, hierarchy, is_hierarchy, place
from toposolve.engines.kube.placement import (
    Domains,
    candidates,
    placement_scores,
    run_pods,
    upper_bounds,
)
from toposolve.engines.kube.reasons import (
    NO_PLACEMENT,
    NO_POD,
    NOMINATED_IDLE,
    gang_unschedulable,
    placements_unavailable,
    pod_fit_error,
)
from toposolve.engines.kube.scores import PlacementScoring


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
    cap = capacity_for(problem)  # per-device sharing: the device plugin's first fit
    node = NodeScoring.of(problem, config)
    scoring = PlacementScoring.of(problem, config)
    domains = Domains(problem)
    assignment = Assignment()
    queues = QueueLedger(problem)
    for j in admission_order(problem):
        why = _within_queue(problem, queues, j) or _schedule_group(
            problem, cap, node, domains, j, scoring, assignment)
        if why is not None:
            assignment.reasons[j] = why
        else:
            queues.take(j, [g for g in problem.jobs[j].groups
                            for _ in range(sum(assignment.counts.get(g, {}).values()))])
    if isinstance(cap, DeviceCapacity):
        cap.add_devices_to(assignment)
    return assignment


def _within_queue(problem: Problem, queues: QueueLedger, j: int) -> str | None:
    """Why pod group ``j`` stays pending for its queue's capability, or None. kube-scheduler has
    no queues; toposolve leaves a group pending when all its pending pods could overrun a
    capability its input declares (a plan must respect it; docs/kube-fidelity.md)."""
    pending = [g for g in problem.jobs[j].groups for _ in problem.group_pending[g]]
    return queues.overrun(j, pending)


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
    if is_hierarchy(problem, j):
        return _schedule_hierarchy(Context(problem, cap, node, scoring, domains), j, assignment)
    if cj.has_subgroup_policies or cj.gang_nodes or cj.min_per_task:
        return "sub-gangs are not expressible in the Workload API"
    found = candidates(problem, domains, j)
    if isinstance(found, str):
        return found
    running = problem.running_count(cj.groups)
    nominated = nominations(problem, j)
    tried = nominated_placement([domains.nodes(d, None) for d in found],
                                nominated) if nominated else None
    if tried is not None:  # evaluated first; taken when the gang is feasible there
        trial = Trial(found[tried], domains.nodes(found[tried], cj.pool))
        if run_pods(problem, cap, node, j, trial, running):
            _bind(trial, cap, assignment)
            return None
    rows = domains.matrix(cj.limit.tier if found != [None] else None, found)
    bound = upper_bounds(problem, cap.free, j, rows, cj.pool,
                         cap.room if isinstance(cap, DeviceCapacity) else None)
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
                             for k in ok], dtype=np.int64).reshape(len(ok), len(placing.columns))
    if len(ok) == 0:
        return _pending(problem, cap, node, domains, j, found, tried, assignment)
    best = int(ok[0]) if len(ok) == 1 else int(ok[int(placement_scores(
        problem, cap, rows[ok], cj.pool, placed, proposed, running, scoring).argmax())])
    trial = trials.get(best) or Trial(found[best], domains.nodes(found[best], cj.pool))
    if best not in trials and not run_pods(problem, cap, node, j, trial, running):
        raise AssertionError("a one-group run scheduled less than its bound")
    _bind(trial, cap, assignment)
    return None


def _schedule_hierarchy(ctx: Context, j: int, assignment: Assignment) -> str | None:
    """A CompositePodGroup hierarchy's cycle (``RunRootSchedulingAlgorithm``): its pods bound
    (already reserved in the capacity), or why it stays pending."""
    outcome = place(ctx, hierarchy(ctx.problem, j), ctx.domains.nodes(None, None))
    if outcome.missed is not None and (not outcome.feasible or not outcome.pods):
        words = pod_fit_error(ctx.problem, *outcome.missed)
        if words is not None:
            assignment.scheduler_reasons[j] = words
    if not outcome.feasible:
        return outcome.reason or "the CompositePodGroup's minGroupCount cannot be met"
    if not outcome.pods:
        return NO_POD
    for g, n in outcome.pods:
        assignment.add(g, n, 1)
    return None


def _bind(trial: Trial, cap: Capacity, assignment: Assignment) -> None:
    for g, n in trial.pods:
        assignment.add(g, n, 1)
        cap.take(g, n, 1)


def _pending(problem: Problem, cap: Capacity, node: NodeScoring, domains: Domains, j: int,
             found: list[int | None], tried: int | None, assignment: Assignment) -> str:
    """Why job ``j`` stays pending when no placement admits it: upstream's PodGroup status
    (returned) and, in ``assignment.scheduler_reasons``, the event of the first pod that found
    no node in the placement upstream reports (``anyResult``: the nominated one when it was
    evaluated, else the first tried — here the first in domain-name order)."""
    if not found:
        return pending_reason(0, False, False)
    cj = problem.jobs[j]
    first = found[0 if tried is None else tried]
    report = Trial(first, domains.nodes(first, cj.pool), record=True)
    running = problem.running_count(cj.groups)
    run_pods(problem, cap, node, j, report, running)
    if report.missed is not None:
        words = pod_fit_error(problem, report.missed[0], report.nodes, report.missed[1])
        if words is not None:
            assignment.scheduler_reasons[j] = words
    status = None if report.stopped is None else gang_unschedulable(cj.min_available,
                                                                    *report.stopped)
    return pending_reason(len(found), tried is not None, running >= cj.min_available, status)


def pending_reason(placements: int, nominated_tried: bool, quorum_met: bool,
                   first_status: str | None = None) -> str:
    """Upstream's status text for a group no placement admits (``placements`` generated; the
    nominated one evaluated first or not; ``quorum_met``: the running pods alone meet the gang
    minimum, so a placement where no new pod fits still passes PlacementFeasible;
    ``first_status``: the reported placement's PlacementFeasible status, None if unknown)."""
    if not placements:
        return NO_PLACEMENT
    if nominated_tried and quorum_met:
        return placements_unavailable(placements, NOMINATED_IDLE)
    if quorum_met:  # the one placement succeeds with no new pod: the root cycle refuses it
        return NO_POD
    return placements_unavailable(placements, first_status)


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
