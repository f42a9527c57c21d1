"""Rules ``pdb`` (PodDisruptionBudgets) and ``repair`` (plans with failed nodes).

``pdb``: per budget, re-derived here from the instance (its namespace's pods the selector
matches; a None selector matches none), the moved pods whose eviction the Eviction API charges
to it (:func:`~toposolve.core.disruption.takes_disruption`: not a pod still starting, nor a
not-Ready one its ``unhealthyPodEvictionPolicy`` lets go; pods moved off a failed node are gone
already) must not exceed the disruptions it allows (healthy: running Ready, not on a failed
node); in a plan with waves, per wave, the budget re-derived once the earlier waves'
replacements are Ready (:class:`~toposolve.core.disruption.WaveLedger`). A moved pod two
budgets cover is refused (the eviction API does), unless still starting. Evictions beyond a
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
from toposolve.core.disruption import READY, STARTING, WaveLedger
from toposolve.core.instance import Instance, PodDisruptionBudget
from toposolve.core.plan import Plan


def _covered(ctx: Context, pdb: PodDisruptionBudget) -> list[PodInfo]:
    if pdb.selector is None:
        return []
    return [ctx.pods[f"{job.namespace}/{task.pod_name(job.name, i)}"]
            for job in ctx.instance.jobs if job.namespace == pdb.namespace
            for task in job.tasks for i in range(task.replicas)
            if selector_holds(pdb.selector, task.labels_of(i))]


def _ledger(ctx: Context, pdb: PodDisruptionBudget, covered: list[PodInfo]) -> WaveLedger:
    """The budget before the plan: healthy = covered pods running Ready on a node that has
    not failed."""
    failed = set(ctx.plan.failed)
    healthy = sum(1 for p in covered if p.running_on in ctx.nodes
                  and p.running_on not in failed and p.health == READY)
    scale = sum(job.replicas for job in {id(p.job): p.job for p in covered}.values())
    return WaveLedger(pdb.min_available, pdb.max_unavailable, pdb.unhealthy_pod_eviction_policy,
                      len(covered), scale, healthy)


def _budgets(ctx: Context) -> Iterable[tuple[PodDisruptionBudget, dict[str, PodInfo],
                                             WaveLedger]]:
    for pdb in ctx.instance.disruption_budgets:
        covered = _covered(ctx, pdb)
        yield pdb, {p.name: p for p in covered}, _ledger(ctx, pdb, covered)


def _waves(ctx: Context) -> dict[int, list[str]]:
    """The moved pods by wave (a plan without waves: all in wave 1), in wave order."""
    waves: dict[int, list[str]] = {}
    for m in ctx.plan.moves:
        if m.pod in ctx.moved:
            waves.setdefault(m.wave or 1, []).append(m.pod)
    return dict(sorted(waves.items()))


def check_disruption(ctx: Context) -> list[Violation]:
    """Moves beyond a PodDisruptionBudget (wave by wave in a plan with waves), and the
    ``repair`` rule."""
    out: list[Violation] = []
    failed = set(ctx.plan.failed)
    if not failed and not (ctx.moved and ctx.instance.disruption_budgets):
        return out
    waves, staged = _waves(ctx), any(m.wave is not None for m in ctx.plan.moves)
    seen: set[str] = set()
    for pdb, covered, ledger in _budgets(ctx):
        for wave, pods in waves.items():
            mine = [covered[p] for p in pods if p in covered]
            # a pod moved off a failed node is gone already: no eviction
            evicted = [p for p in mine if p.running_on not in failed]
            for pod in sorted(p.name for p in evicted if p.health != STARTING and p.name in seen):
                out.append(Violation("pdb", f"Pod/{pod}", "moved, but more than one "
                                     "PodDisruptionBudget covers it (the eviction API refuses)"))
            seen |= {p.name for p in evicted if p.health != STARTING}
            charged, allowed = sum(ledger.charged(p.health) for p in evicted), ledger.allowed()
            if charged > allowed:
                what = f"wave {wave} moves" if staged else "the plan moves"
                out.append(Violation("pdb", f"PodDisruptionBudget/{pdb.key}",
                                     f"{what} {charged} of its pods, more than the {allowed} "
                                     "disruptions it allows"))
            # the wave's replacements are Ready before the next: pods not healthy recover
            ledger.wave_done(sum(1 for p in mine
                                 if p.running_on in failed or p.health != READY))
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
    for pdb, covered, ledger in _budgets(ctx):
        evicted = len(set(ctx.evicted) & set(covered))
        allowed = ledger.allowed()
        if evicted > allowed:
            out.append(f"PodDisruptionBudget/{pdb.key}: the plan evicts {evicted} of its pods, "
                       f"more than the {allowed} disruptions it allows (Volcano honours budgets "
                       "only with its pdb plugin)")
    return out
