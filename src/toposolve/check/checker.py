"""Independent plan checker: every plan any engine emits is verified here.

It shares nothing with the engines beyond the instance model, the plan and the errors: the
HyperNode tree, SubJob membership, predicates and limits are re-derived in
:mod:`toposolve.check` so that a bug shared with an engine cannot hide.

Violation kinds (``Violation.kind``): ``unknown-pod``, ``unknown-node``, ``duplicate-binding``,
``not-running``, ``capacity``, ``predicate``, ``gang``, ``subgroup-gang``, ``tier``,
``queue-capability``, ``plan-jobs``, ``eviction``, ``move``, ``pdb``, ``repair``, ``device``
and ``wave``;
``docs/checker.md`` says what each one catches.
"""

from __future__ import annotations

from collections.abc import Sequence

from toposolve.check.context import build_context
from toposolve.check.devices import check_devices
from toposolve.check.disruption import check_disruption
from toposolve.check.evictions import check_evictions
from toposolve.check.gang_tree import check_gang_tree
from toposolve.check.gangs import check_gangs, check_subgroup_gangs
from toposolve.check.jobs import EVICTION_MODES, EvictionMode, check_plan_jobs
from toposolve.check.moves import check_moves
from toposolve.check.resources import check_capacity, check_predicates, check_queue_capability
from toposolve.check.reuse import fixed_cluster
from toposolve.check.tiers import check_tiers, check_within, foreign_domains
from toposolve.check.violation import KINDS, Violation
from toposolve.check.waves import check_waves
from toposolve.core.errors import require_type
from toposolve.core.instance import Instance
from toposolve.core.plan import Plan

__all__ = ["KINDS", "PlanInvalid", "Violation", "assert_valid", "check_plan", "fixed_cluster",
           "format_report"]


class PlanInvalid(AssertionError):
    """A plan broke at least one rule; ``violations`` lists them all."""

    def __init__(self, violations: Sequence[Violation]) -> None:
        self.violations = list(violations)
        super().__init__(format_report(self.violations))


def check_plan(instance: Instance, plan: Plan,
               eviction_mode: EvictionMode = "both") -> list[Violation]:
    """Every rule ``plan`` breaks on ``instance``.

    Parameters
    ----------
    instance
        The instance the plan is for.
    plan
        Any engine's plan.
    eviction_mode
        Which evictions are explained: ``"preempt"``, ``"reclaim"``, ``"both"`` or ``"none"``.

    Returns
    -------
    list of Violation
        Empty when the plan is valid.

    Raises
    ------
    InputError
        The instance itself is malformed (a HyperNode tree that is not a tree, duplicate pods or
        jobs, a pod running on an unknown node).
    """
    require_type(instance, Instance, "instance")
    require_type(plan, Plan, "plan")
    if eviction_mode not in EVICTION_MODES:
        raise ValueError(f"eviction_mode must be one of {EVICTION_MODES}, not {eviction_mode!r}")
    ctx, violations = build_context(instance, plan)
    violations += check_predicates(ctx)
    violations += check_capacity(ctx)
    violations += check_devices(ctx)
    violations += check_gangs(ctx)
    violations += check_subgroup_gangs(ctx)
    violations += check_tiers(ctx)
    violations += check_within(ctx)
    violations += check_gang_tree(ctx)
    violations += check_queue_capability(ctx)
    violations += check_plan_jobs(ctx)
    violations += check_evictions(ctx, eviction_mode)
    violations += check_moves(ctx)
    violations += check_disruption(ctx)
    violations += check_waves(ctx)
    return violations


def domains_not_in(instance: Instance, plan: Plan) -> list[str]:
    """The HyperNode names ``plan`` reports that ``instance`` lacks (sorted): a plan made on
    another form of the cluster (labels vs HyperNodes) names its domains differently; the
    checker judges them by the pods' nodes instead."""
    require_type(instance, Instance, "instance")
    require_type(plan, Plan, "plan")
    return foreign_domains(build_context(instance, plan)[0])


def assert_valid(instance: Instance, plan: Plan, eviction_mode: EvictionMode = "both") -> None:
    """Raise :class:`PlanInvalid` listing every violation, if there is any."""
    violations = check_plan(instance, plan, eviction_mode)
    if violations:
        raise PlanInvalid(violations)


def format_report(violations: Sequence[Violation], plan: Plan | None = None, *,
                  total: int | None = None) -> str:
    """One line per violation and a summary line (counts of the plan when it is valid);
    ``total``: how many there are when ``violations`` lists only the first ones."""
    if violations or total:
        total = len(violations) if total is None else total
        more = total - len(violations)
        tail = f" ({more:,} more not shown: --all lists them)" if more else ""
        return "\n".join([*(str(v) for v in violations), f"{total:,} violations{tail}"])
    if plan is None:
        return "plan is valid"
    placed = sum(1 for j in plan.jobs if j.placed)
    return (
        f"plan is valid: {len(plan.bindings)} bindings, {len(plan.evictions)} evictions, "
        f"{placed} jobs placed"
    )
