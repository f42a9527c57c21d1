"""Why a pod group stays pending, in kube-scheduler's words: the PodGroup's status (the
placements text with the first placement's PlacementFeasible status) and the event of a pod
that found no node in that placement (its ``FitError``: the placement's nodes, each counted
under the reasons of the first default Filter plugin refusing it). Texts and the commits
read: docs/kube-fidelity.md "Reason strings".
"""

from __future__ import annotations

import numpy as np

from toposolve.core.problem import POD_COUNT_RESOURCE, Problem, node_exclusion
from toposolve.engines.common.filter_reasons import (
    TOO_MANY_PODS,
    filter_reason,
    fit_error,
    insufficient,
)

NO_PLACEMENT = "no feasible placements found"
NO_POD = "no pods were schedulable"  # RunRootSchedulingAlgorithm, nothing new scheduled
NOMINATED_IDLE = "nominated placement is feasible but no pending pod was scheduled"


def gang_unschedulable(minimum: int, scheduled: int, remaining: int) -> str:
    """GangScheduling's PlacementFeasible status once ``minCount`` is out of reach."""
    return f"minCount ({minimum}) cannot be satisfied: {scheduled} scheduled, {remaining} remaining"


def placements_unavailable(placements: int, first_status: str | None) -> str:
    """``podGroupFitError`` of the placement algorithm: ``0/<n> placements are available``,
    with ``first placement status: …`` when that status is known (None: left out)."""
    text = f"0/{placements} placements are available"
    return f"{text}, first placement status: {first_status}" if first_status else text


def excluded_reason(problem: Problem, g: int, n: int) -> str | None:
    """The first default Filter plugin refusing node ``n`` (a predicate: NodeUnschedulable,
    TaintToleration, NodeAffinity) for a pod of group ``g``, in its words; None when the node's
    predicates admit the pod."""
    constraints = problem.task_of(g).constraints
    why = node_exclusion(problem.instance.nodes[n], constraints)
    return None if why is None else filter_reason(why)


def pod_fit_error(problem: Problem, g: int, nodes: np.ndarray, free: np.ndarray) -> str | None:
    """The ``FitError`` text of the next pod of group ``g`` over a placement's ``nodes``
    (``free``: their free capacity rows, as the run left them): each node counted under the
    reasons of the first default Filter plugin that refuses it — the predicates before
    NodeResourcesFit, which gives every short resource (``Too many pods`` for the pod count).
    None when a node has room or refuses for what kube-scheduler does not check (a device that
    cannot hold a share: the device plugin's admission)."""
    counts: dict[str, int] = {}
    feasible = problem.group_feasible[g][nodes]
    for n in nodes[~feasible].tolist():
        reason = excluded_reason(problem, g, n)
        if reason is None:
            return None
        counts[reason] = counts.get(reason, 0) + 1
    request = problem.group_request[g]
    short = (request[None, :] > 0) & (free[feasible] < request[None, :])  # [F, R]
    if not short.any(axis=1).all():
        return None  # a node with room the run did not use
    pods = problem.resource_index.get(POD_COUNT_RESOURCE)
    for r, name in enumerate(problem.resources):
        if (k := int(short[:, r].sum())):
            reason = TOO_MANY_PODS if r == pods else insufficient(name)
            counts[reason] = counts.get(reason, 0) + k
    return fit_error(len(nodes), counts)
