"""The hint a search starts from.

Why: CP-SAT finds tight packings slowly, so every search is given a complete hint — the warm
start (the baseline's plan), the best plan of an earlier round, or the previous stage's
solution — and, before every stage, the plan is also repacked tier-first (:mod:`.repack`):
the better of the two seeds the hint. A complete hint the model is checked to accept (small
models only: the check costs a presolve) becomes the incumbent a stage keeps when its own search
finds nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..assignment import Assignment
from .hint import Hint, hint_from_assignment, hint_is_feasible
from .model import PlacementModel

if TYPE_CHECKING:
    from .runner import Run

HINT_CHECK_LIMIT = 50_000  # variables above which the hint is not checked by a separate solve


def start_from(run: Run, pm: PlacementModel, seed_hint: Assignment, stats: dict | None) -> None:
    """Hint the model with ``seed_hint`` (or its better repacking). A complete hint the model is
    checked to accept becomes the incumbent; ``stats`` records the check."""
    h = hint_from_assignment(run.problem, pm.vars, seed_hint)
    if pm.evict is not None:
        h = with_evictions(pm, h, seed_hint)
    # the repacked hint only while time is left (it costs a repacking of the whole queue)
    values = run.better_hint(pm, seed_hint).values if h.complete and run.budget.wall_left() > 0 else h.values
    run.set_hint(pm, values)
    size = len(pm.model.proto.variables)
    feasible = None  # larger models: the check would cost a full presolve
    if not (h.complete and h.fits_nodes):
        feasible = False
    elif size <= HINT_CHECK_LIMIT and run.budget.wall_left() > 0:
        check = min(5.0, max(1.0, 0.1 * run.settings.time_limit))
        feasible = hint_is_feasible(pm.model, values, run.settings, check, wall_cap=max(run.budget.wall_left(), 0.01))
    if feasible and len(values) == size:
        run.incumbent = [values[i] for i in range(size)]
    if stats is not None:
        stats["hint_dropped_pods"] = h.dropped
        stats["hint_feasible"] = feasible


def with_evictions(pm: PlacementModel, hint: Hint, assignment: Assignment) -> Hint:
    """``hint`` completed with the eviction variables of ``assignment``; capacity is checked
    node by node with the evicted pods gone (the model's classes cannot see it)."""
    assert pm.evict is not None
    values, stray = pm.evict.hint_values(assignment)
    problem = pm.problem
    left = problem.allocatable - problem.used - assignment.usage(problem)
    for pod in assignment.evicted:
        if pod in problem.running_pods:
            left[problem.running_pods[pod]] += problem.group_request[problem.pod_group[pod]]
    touched = sorted({n for per in assignment.counts.values() for n, c in per.items() if c > 0})
    fits = bool((left[touched] >= 0).all()) if touched else True
    return Hint(
        values={**hint.values, **values}, complete=hint.complete and stray == 0,
        dropped=hint.dropped + stray, fits_nodes=fits,
    )
