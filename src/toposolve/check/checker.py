"""Independent plan checker: every plan any engine emits is verified here.

It shares nothing with the engines beyond the instance model, the plan and the errors: the
HyperNode tree, SubJob membership, predicates and limits are re-derived in
:mod:`toposolve.check` so that a bug shared with an engine cannot hide.

Violation kinds (``Violation.kind``):

``unknown-pod``, ``unknown-node``
    a binding or eviction names a pod or node the instance does not have;
``duplicate-binding``
    a pod bound twice, or bound while it runs and is not evicted;
``not-running``
    an eviction of a pod that is not running, runs on another node, or was evicted already;
``capacity``
    on a node that receives bindings, running (not evicted) plus bound pods request more of a
    resource than is allocatable (``pods``: one pod = 1000 milli where the node declares it);
``predicate``
    a pod bound to an unschedulable node, or against nodeSelector, required node affinity or an
    untolerated NoSchedule/NoExecute taint;
``gang``
    a job that receives bindings ends below minAvailable, or below a per-task minimum;
``subgroup-gang``
    a SubJob that receives bindings ends below subGroupSize, or a job that receives bindings
    has fewer than minSubGroups SubJobs of a policy at subGroupSize, or (deeper gang trees) a
    required GangGroup, or one that receives bindings, has fewer satisfied members than its
    minimum (:mod:`toposolve.check.gang_tree`);
``tier``
    a hard job's, GangGroup's or SubJob's placed pods are not under one HyperNode of tier ≤ its
    limit, or a reported HyperNode does not exist / exceeds the limit / misses some of the pods;
``queue-capability``
    a queue that receives bindings ends above its capability;
``plan-jobs``
    the plan's job list disagrees with its bindings or names unknown jobs or SubJobs;
``eviction``
    an eviction that neither preemption (a job of the same queue with strictly higher
    priority receives bindings) nor reclaim (the victim's queue is reclaimable, another queue
    receives bindings, and the queue gives back no more than it holds above its deserved share)
    explains, as allowed by ``eviction_mode``; a job that loses pods and receives bindings; new
    pods that take room freed by evicting a job they may not evict (``docs/eviction.md``).
"""

from __future__ import annotations

from collections.abc import Sequence

from toposolve.check.context import build_context
from toposolve.check.evictions import check_evictions
from toposolve.check.gang_tree import check_gang_tree
from toposolve.check.gangs import check_gangs, check_subgroup_gangs
from toposolve.check.jobs import EVICTION_MODES, EvictionMode, check_plan_jobs
from toposolve.check.resources import check_capacity, check_predicates, check_queue_capability
from toposolve.check.reuse import fixed_cluster
from toposolve.check.tiers import check_tiers
from toposolve.check.violation import KINDS, Violation
from toposolve.core.instance import Instance
from toposolve.core.plan import Plan

__all__ = ["KINDS", "PlanInvalid", "Violation", "assert_valid", "check_plan", "fixed_cluster", "format_report"]


class PlanInvalid(AssertionError):
    """A plan broke at least one rule; ``violations`` lists them all."""

    def __init__(self, violations: Sequence[Violation]) -> None:
        self.violations = list(violations)
        super().__init__(format_report(self.violations))


def check_plan(instance: Instance, plan: Plan, eviction_mode: EvictionMode = "both") -> list[Violation]:
    """Every rule ``plan`` breaks on ``instance`` (empty list: the plan is valid).

    Raises :class:`~toposolve.core.errors.InputError` if the instance itself is malformed (a
    HyperNode tree that is not a tree, duplicate pods or jobs, a pod running on an unknown node).
    """
    if eviction_mode not in EVICTION_MODES:
        raise ValueError(f"eviction_mode must be one of {EVICTION_MODES}, not {eviction_mode!r}")
    ctx, violations = build_context(instance, plan)
    violations += check_predicates(ctx)
    violations += check_capacity(ctx)
    violations += check_gangs(ctx)
    violations += check_subgroup_gangs(ctx)
    violations += check_tiers(ctx)
    violations += check_gang_tree(ctx)
    violations += check_queue_capability(ctx)
    violations += check_plan_jobs(ctx)
    violations += check_evictions(ctx, eviction_mode)
    return violations


def assert_valid(instance: Instance, plan: Plan, eviction_mode: EvictionMode = "both") -> None:
    """Raise :class:`PlanInvalid` listing every violation, if there is any."""
    violations = check_plan(instance, plan, eviction_mode)
    if violations:
        raise PlanInvalid(violations)


def format_report(violations: Sequence[Violation], plan: Plan | None = None) -> str:
    """One line per violation and a summary line (counts of the plan when it is valid)."""
    if violations:
        return "\n".join([*(str(v) for v in violations), f"{len(violations)} violations"])
    if plan is None:
        return "plan is valid"
    placed = sum(1 for j in plan.jobs if j.placed)
    return (
        f"plan is valid: {len(plan.bindings)} bindings, {len(plan.evictions)} evictions, "
        f"{placed} jobs placed"
    )
