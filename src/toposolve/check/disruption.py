"""Rules ``pdb`` (PodDisruptionBudgets) and ``repair`` (plans with failed nodes).

``pdb``: per budget, re-derived here from the instance (its namespace's pods the selector
matches; a None selector matches none), the pods the plan moves (a move evicts the pod; pods
moved off a failed node are gone already and do not count) must not exceed the disruptions the
budget allows (:func:`toposolve.core.disruption.disruptions_allowed`, pods on failed nodes not
healthy); a moved pod two budgets cover is refused (the eviction API does). Evictions beyond a
budget are not violations: Volcano deletes its victims unless its ``pdb`` plugin is on, so
:func:`disruption_warnings` reports them as warnings.

``repair`` (``Plan.failed``): no pod bound or moved onto a failed node, and a job with a pod
moved off a failed node has no pod left on one (a repair re-places a job's failed pods whole).
"""

from __future__ import annotations

from collections.abc import Iterable

from toposolve.check.context import Context, build_context
from toposolve.check.labels import selector_holds
from toposolve.check.pods import PodInfo
from toposolve.check.violation import Violation
from toposolve.core.disruption import disruptions_allowed
from toposolve.core.instance import Instance, PodDisruptionBudget
from toposolve.core.plan import Plan


def _covered(ctx: Context, pdb: PodDisruptionBudget) -> list[PodInfo]:
    if pdb.selector is None:
        return []
    return [ctx.pods[f"{job.namespace}/{task.pod_name(job.name, i)}"]
            for job in ctx.instance.jobs if job.namespace == pdb.namespace
            for task in job.tasks for i in range(task.replicas)
            if selector_holds(pdb.selector, task.labels_of(i))]


def _allowed(ctx: Context, pdb: PodDisruptionBudget, covered: list[PodInfo]) -> int:
    failed = set(ctx.plan.failed)
    healthy = sum(1 for p in covered if p.running_on in ctx.nodes and p.running_on not in failed)
    scale = sum(job.replicas for job in {id(p.job): p.job for p in covered}.values())
    return disruptions_allowed(pdb.min_available, pdb.max_unavailable, selected=len(covered),
                               expected_scale=scale, healthy=healthy)


def _budgets(ctx: Context) -> Iterable[tuple[PodDisruptionBudget, set[str], int]]:
    for pdb in ctx.instance.disruption_budgets:
        covered = _covered(ctx, pdb)
        yield pdb, {p.name for p in covered}, _allowed(ctx, pdb, covered)


def check_disruption(ctx: Context) -> list[Violation]:
    """Moves beyond a PodDisruptionBudget, and the ``repair`` rule."""
    out: list[Violation] = []
    failed = set(ctx.plan.failed)
    if not failed and not (ctx.moved and ctx.instance.disruption_budgets):
        return out
    evicting = {pod for pod, _ in ctx.moved.items()
                if ctx.pods[pod].running_on not in failed}
    seen: set[str] = set()
    for pdb, covered, allowed in _budgets(ctx):
        moved = evicting & covered
        for pod in sorted(moved & seen):
            out.append(Violation("pdb", f"Pod/{pod}", "moved, but more than one "
                                 "PodDisruptionBudget covers it (the eviction API refuses)"))
        seen |= moved
        if len(moved) > allowed:
            out.append(Violation("pdb", f"PodDisruptionBudget/{pdb.key}",
                                 f"the plan moves {len(moved)} of its pods, more than the "
                                 f"{allowed} disruptions it allows"))
    return out + _check_repair(ctx, failed)


def _check_repair(ctx: Context, failed: set[str]) -> list[Violation]:
    out = [Violation("unknown-node", "Plan", f"failed node {n!r} does not exist")
           for n in ctx.plan.failed if n not in ctx.nodes]
    for pod, node in sorted(ctx.arrivals.items()):
        if node in failed:
            out.append(Violation("repair", f"Pod/{pod}", f"put on {node!r}, a failed node"))
    repaired = ctx.jobs_of(p for p in ctx.moved if ctx.pods[p].running_on in failed)
    for key in repaired:
        left = [p.name for p in ctx.pods_of_job[key] if ctx.placement.get(p.name) in failed]
        if left:
            out.append(Violation("repair", f"Job/{key}", f"repaired in part: {len(left)} pods "
                                 f"stay on failed nodes (first {left[0]})"))
    return out


def disruption_warnings(instance: Instance, plan: Plan) -> list[str]:
    """One line per PodDisruptionBudget whose pods the plan **evicts** beyond what it allows
    (the real scheduler honours budgets in preemption only with Volcano's ``pdb`` plugin)."""
    if not instance.disruption_budgets or not plan.evictions:
        return []
    ctx, _ = build_context(instance, plan)
    out = []
    for pdb, covered, allowed in _budgets(ctx):
        evicted = len(set(ctx.evicted) & covered)
        if evicted > allowed:
            out.append(f"PodDisruptionBudget/{pdb.key}: the plan evicts {evicted} of its pods, "
                       f"more than the {allowed} disruptions it allows (Volcano honours budgets "
                       "only with its pdb plugin)")
    return out
