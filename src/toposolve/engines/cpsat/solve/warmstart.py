"""The hint a search starts from: which plan, and the model seeded with it.

Why: CP-SAT finds tight packings slowly, so every search is given a complete hint. The plan to
start from is chosen in one place, :func:`choose_start`: the best of the plans offered — the
warm start (the baseline's plan), the best plan of an earlier round, the previous stage's
solution — replaced by its tier-first repacking (:mod:`.repack`) when that is better and time is
left. Its encoding is :mod:`.hint`'s. A complete hint the model is checked to accept (small
models only: the check costs a presolve) becomes the incumbent a stage keeps when its own search
finds nothing (:func:`start_from`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from toposolve.core.assignment import Assignment
from toposolve.core.problem import Problem
from toposolve.engines.cpsat.model.hint import Hint, hint_from_assignment, hint_is_feasible
from toposolve.engines.cpsat.model.model import PlacementModel
from toposolve.engines.cpsat.post.repack import repack
from toposolve.engines.cpsat.solve.budget import Budget
from toposolve.engines.cpsat.solve.parameters import Settings
from toposolve.engines.cpsat.solve.stats import CpsatStats
from toposolve.policy.objective import evaluate
from toposolve.policy.profiles import CommWeights, ObjectiveSpec


class Run(Protocol):
    """What the warm start reads and sets of the stage runner (:class:`.runner.Run`)."""

    problem: Problem
    spec: ObjectiveSpec
    comm: CommWeights
    settings: Settings
    budget: Budget
    repacked: int
    incumbent: Any

    def set_hint(self, pm: PlacementModel, values: dict[int, int]) -> None: ...


HINT_CHECK_LIMIT = 50_000  # variables above which the hint is not checked by a separate solve


@dataclass
class Start:
    """The plan a search starts from, its encoding, and the values the model is hinted with
    (the encoding's, or its better repacking's)."""

    plan: Assignment
    hint: Hint
    values: dict[int, int]


def choose_start(run: Run, pm: PlacementModel, plans: Sequence[Assignment]) -> Start:
    """The hint to start from: the best of ``plans`` (ties: the earlier), or its tier-first
    repacking when that is better and the deadline has not passed (a repacking of the whole
    queue costs time)."""
    plan = plans[0]
    if len(plans) > 1:
        value = evaluate(run.problem, plan, run.spec, run.comm)
        for other in plans[1:]:
            other_value = evaluate(run.problem, other, run.spec, run.comm)
            if other_value.better(value):
                plan, value = other, other_value
    hint = hint_from_assignment(pm, plan)
    chosen = hint
    if hint.complete and run.budget.wall_left() > 0:
        chosen = _repacked_if_better(run, pm, plan, hint)
    return Start(plan, hint, chosen.values)


def _repacked_if_better(run: Run, pm: PlacementModel, plan: Assignment, hint: Hint) -> Hint:
    """The hint of ``plan``'s tier-first repacking when that is better and fits, else ``hint``."""
    if pm.evict is not None or not run.spec.stages or run.problem.has_devices:
        return hint  # repacking knows nothing of evictions or devices; without stages nothing
        # is better
    packed = repack(run.problem, plan)
    if packed is None:
        return hint
    if not evaluate(run.problem, packed, run.spec, run.comm).better(
            evaluate(run.problem, plan, run.spec, run.comm)):
        return hint
    packed_hint = hint_from_assignment(pm, packed)
    if not (packed_hint.complete and packed_hint.fits_nodes):
        return hint
    run.repacked += 1
    return packed_hint


def start_from(run: Run, pm: PlacementModel, plans: Sequence[Assignment],
               stats: CpsatStats | None) -> None:
    """Hint the model with :func:`choose_start` of ``plans``. A complete hint the model is
    checked to accept becomes the incumbent; ``stats`` records the check."""
    start = choose_start(run, pm, plans)
    h, values = start.hint, start.values
    run.set_hint(pm, values)
    size = len(pm.model.proto.variables)
    feasible: bool | str | None = None  # larger models: the check would cost a full presolve
    if not (h.complete and h.fits_nodes):
        feasible = False
    elif size <= HINT_CHECK_LIMIT and run.budget.wall_left() > 0:
        check = min(5.0, max(1.0, 0.1 * run.settings.time_limit))
        told = hint_is_feasible(pm.model, values, run.settings, check,
                                wall_cap=max(run.budget.wall_left(), 0.01))
        feasible = "unknown" if told is None else told
    if feasible is True and len(values) == size:
        run.incumbent = [values[i] for i in range(size)]
    if stats is not None:
        stats.hint_dropped_pods = h.dropped
        stats.hint_feasible = feasible
