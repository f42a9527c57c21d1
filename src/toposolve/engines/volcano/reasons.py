"""Why a job stayed pending, in words a user can act on.

The checks go from the most basic to the most specific: predicates, queue capability, the whole
cluster, the job's tier limit, then its SubJobs' limits counted in whole SubJobs (which also tells
when the job's limit is what keeps SubJobs apart, see :mod:`toposolve.engines.common.blockers`);
the first that explains the failure wins. Otherwise the job lost to the placements of jobs ahead of
it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from toposolve.core.instance import Node, PodConstraints
from toposolve.core.problem import POD_COUNT_RESOURCE, Problem, node_exclusion
from toposolve.engines.common.blockers import describe_request, subjob_shortfall

# the kube-scheduler Filter plugins' texts (k8s.io/kubernetes v1.36.1, vendored by Volcano)
from toposolve.engines.common.filter_reasons import (
    NODE_AFFINITY,
    UNSCHEDULABLE,
    taint_of,
    untolerated_taint,
)
from toposolve.engines.volcano.fit_errors import (
    POD_NUMBER_EXCEEDED,
    JobTasks,
    gang_condition,
    nodes_unavailable,
    resource_rank,
)
from toposolve.engines.volcano.readiness import Gang
from toposolve.engines.volcano.state import ClusterState


class EngineView(Protocol):
    """What :func:`pending_reason` reads of the allocate action's state."""

    problem: Problem
    state: ClusterState
    gang: Gang
    job_limit: Sequence[int | None]
    subjob_limit: Sequence[int | None]

    def job_gradients(self, j: int) -> list[list[int]]: ...

    def subjob_gradients(self, s: int, H: int) -> list[list[int]]: ...


def pending_reason(engine: EngineView, j: int) -> str:
    """The first of the checks that explains why job ``j`` stayed pending.

    Parameters
    ----------
    engine
        The allocate action after its last pass (its state is the cluster as it left it).
    j
        Index of the pending job in ``engine.problem.jobs``.

    Returns
    -------
    str
        One sentence a user can act on.
    """
    problem = engine.problem
    state = engine.state
    topo = problem.topology
    cj = problem.jobs[j]
    groups = [g for g in cj.groups if engine.gang.pending_of_group(g) > 0]
    if not groups:
        return "nothing left to place"
    need = max(0, cj.min_available - engine.gang.job_count(j))
    for g in groups:
        if not problem.group_feasible[g].any():
            return (
                f"no node passes the predicates of task {problem.group_task[g]!r} "
                "(nodeSelector, affinity, taints or unschedulable)"
            )
        room = state.queue_room(g)
        if room < min(need, engine.gang.pending_of_group(g)):
            return (f"queue {cj.queue!r} capability admits only {room} more pods of task "
                    f"{problem.group_task[g]!r}")
    g = max(groups, key=lambda x: engine.gang.pending_of_group(x))
    fit = state.fit_counts(g)
    capacity = state.per_hypernode(fit)
    shape = describe_request(problem, g)
    total_fit = int(capacity[topo.root])
    if len(groups) == 1 and total_fit < need:
        return (
            f"gang needs {need} pods ({shape} each); when its turn came "
            f"the whole cluster had room for {total_fit}"
        )
    limit = engine.job_limit[j]
    if limit is not None and not (topo.tier <= limit).any():
        return f"no HyperNode has tier ≤ {limit} (the lowest tier is {topo.min_tier})"
    if limit is not None and len(groups) == 1 and limit < topo.max_tier:
        allowed = np.flatnonzero(topo.tier <= limit)
        best = int(allowed[np.argmax(capacity[allowed])])
        if capacity[best] < need:
            return (
                f"no HyperNode of tier ≤ {limit} has room for {need} pods ({shape} each); "
                f"the best, {topo.names[best]} (tier {topo.tier[best]}), holds "
                f"{int(capacity[best])}"
            )
    counted = subjob_shortfall(problem, j, need, state.fit_counts, limit,
                               lambda s: engine.subjob_limit[s], when="when its turn came, ")
    if counted is not None:
        return counted
    return _subjob_reason(engine, j) or (
        "gang cannot be completed within one allowed HyperNode after the jobs ahead of it "
        "were placed"
    )


def _subjob_reason(engine: EngineView, j: int) -> str | None:
    """A hard-limited SubJob of job ``j`` that no allowed HyperNode can hold, in words."""
    problem, state, topo = engine.problem, engine.state, engine.problem.topology
    for s in problem.jobs[j].subjobs:
        sj_limit = engine.subjob_limit[s]
        sj = problem.subjobs[s]
        if sj_limit is None or sj.policy < 0:
            continue
        sj_groups = [x for x in sj.groups if engine.gang.pending_of_group(x) > 0]
        if len(sj_groups) != 1:
            continue
        cap = state.per_hypernode(state.fit_counts(sj_groups[0]))
        allowed = np.flatnonzero(topo.tier <= sj_limit)
        if not allowed.size:
            return (f"no HyperNode has tier ≤ {sj_limit} (the lowest tier is {topo.min_tier}) for "
                    f"SubJob {sj.id}")
        if cap[allowed].max() < sj.min_available:
            return (
                f"no HyperNode of tier ≤ {sj_limit} has room for a SubJob of {sj.min_available} "
                f"pods ({describe_request(problem, sj_groups[0])} each)"
            )
    return None


def flat_condition(engine: EngineView, j: int, groups: list[int]) -> str | None:
    """Volcano's PodGroup condition for job ``j`` of one task (one group) right after its gang
    failed on the flat path (no topology; the failed attempt's placements still in the state).

    Returns None for a job of several groups (Volcano's loop past a failed pod is replayed by
    :mod:`~toposolve.engines.volcano.flat_loop`) and where Volcano's words depend on what
    toposolve does not model: a node excluded by something other than resources, pod count and
    the predicates of :func:`_predicate_reason` (a ``withinHyperNode`` mask)."""
    problem, state = engine.problem, engine.state
    if len(groups) > 1:
        return None
    placed = {g: state.group_count(g) - problem.group_running_count(g) for g in groups}
    failed = next((g for g in groups if placed[g] < len(problem.group_pending[g])), None)
    if failed is None:
        return None
    origin = None
    if placed[failed] < state.queue_room(failed):  # a full queue skips the task, no fit error
        reasons = node_fit_reasons(problem, state.idle, failed)
        if reasons is None:
            return None
        # the first pod that failed; Volcano takes the first failed task in map order
        pod = problem.group_pending[failed][placed[failed]].split("/", 1)[-1]
        origin = (pod, nodes_unavailable([r for rs in reasons for r in rs], nodes=len(reasons)))
    statuses = Counter({"Pending": sum(len(problem.group_pending[g]) for g in groups),
                        "Running": sum(problem.group_running_count(g) for g in groups)})
    return gang_condition(JobTasks(+statuses, problem.jobs[j].min_available,
                                   sum(placed.values()), origin))


def node_fit_reasons(problem: Problem, idle: np.ndarray, g: int,
                     nodes: np.ndarray | None = None) -> list[list[str]] | None:
    """The reasons each node (``nodes``, by default all; ``idle`` their free capacity) refuses a
    pod of group ``g``, as Volcano's allocate predicate and predicates plugin give them (None: a
    node has room, or is excluded by what toposolve does not word)."""
    keep = [r for r, name in enumerate(problem.resources) if name != POD_COUNT_RESOURCE]
    names = [problem.resources[r] for r in keep]
    pods = problem.resource_index.get(POD_COUNT_RESOURCE)
    constraints = problem.task_of(g).constraints
    every = np.arange(problem.n_nodes) if nodes is None else nodes
    free = idle[every]
    # the resource check returns before the predicates plugin: its first short resource alone
    order = sorted(range(len(keep)), key=lambda r: resource_rank(names[r]))
    short = (problem.group_request[g][keep][order] > free[:, keep][:, order])
    first = short.argmax(axis=1)
    full = (free[:, pods] < problem.group_request[g][pods] if pods is not None
            else np.zeros(every.size, dtype=bool))
    by_name = {n.name: n for n in problem.instance.nodes}
    out = []
    for k, n in enumerate(every.tolist()):
        if short[k, first[k]]:
            out.append([f"Insufficient {names[order[first[k]]]}"])
            continue
        reasons = [POD_NUMBER_EXCEEDED] if full[k] else []
        if not problem.group_feasible[g][n]:
            why = _predicate_reason(by_name[problem.topology.node_names[n]], constraints)
            if why is None:
                return None
            reasons.append(why)
        if not reasons:
            return None
        out.append(reasons)
    return out


def _predicate_reason(node: Node, constraints: PodConstraints) -> str | None:
    """The first predicate that refuses the pod in Volcano's plugin order (NodeUnschedulable,
    NodeAffinity — nodeSelector and required affinity —, TaintToleration), in the plugin's words;
    None when the node's predicates admit it."""
    why = node_exclusion(node, constraints)  # Kueue's order: taints before nodeSelector
    if why is None or why == "unschedulable":
        return None if why is None else UNSCHEDULABLE
    if not why.startswith("taint "):
        return NODE_AFFINITY
    if node_exclusion(node.model_copy(update={"taints": []}), constraints) is not None:
        return NODE_AFFINITY
    return untolerated_taint(*taint_of(why))


def hypernode_condition(engine: EngineView, j: int) -> str | None:
    """Volcano's PodGroup condition for job ``j`` after the HyperNode search failed, for a job
    of one task whose gang is all its pods, with nothing running and no SubGroups.

    Every HyperNode H of every job gradient is tried, and in H every HyperNode h of the SubJob's
    gradients (fit errors reset before each), so the errors are the last h's (``In hyperNode
    <h>: …``; none when the last H's SubJob prefilter left nothing to try); a pod allocated in
    any try and discarded stays ``Schedulable``. None for other jobs."""
    problem, state = engine.problem, engine.state
    cj = problem.jobs[j]
    groups = [g for g in cj.groups if engine.gang.pending_of_group(g) > 0]
    if len(cj.subjobs) != 1 or problem.subjobs[cj.subjobs[0]].policy >= 0 or len(cj.groups) != 1:
        return None
    (g,) = cj.groups
    count = len(problem.group_pending[g])
    if (groups != [g] or cj.min_available != count or problem.group_running_count(g)
            or state.queue_room(g) < count):
        return None
    schedulable, last = 0, None
    for big in (h for gradient in engine.job_gradients(j) for h in gradient):
        last = None  # fit errors are reset before each HyperNode of the job
        for h in (h for inner in engine.subjob_gradients(cj.subjobs[0], big) for h in inner):
            placed = int(min(count, state.fit_counts(g, state.nodes_in(h)).sum()))
            if placed == count:
                return None
            schedulable, last = max(schedulable, placed), (h, placed)
    origin = None
    if last is not None:
        h, placed = last
        nodes = state.nodes_in(h)
        # every node took what it could before the next pod failed on all of them
        idle = state.idle.copy()
        idle[nodes] -= state.fit_counts(g, nodes)[nodes, None] * problem.group_request[g]
        reasons = node_fit_reasons(problem, idle, g, nodes)
        if reasons is None:
            return None
        pod = problem.group_pending[g][placed].split("/", 1)[-1]
        # Volcano names no HyperNode for its ClusterTopHyperNode (toposolve's virtual root)
        name = None if h == problem.topology.root else problem.topology.names[h]
        origin = (pod, nodes_unavailable([r for rs in reasons for r in rs], name,
                                         nodes=len(reasons)))
    return gang_condition(JobTasks(Counter({"Pending": count}), cj.min_available, schedulable,
                                   origin))


