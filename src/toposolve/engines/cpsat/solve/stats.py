"""CP-SAT's own statistics, written to ``plan.stats`` in this order (fields left
:data:`~toposolve.engines.contract.UNSET` are left out)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toposolve.engines.contract import UNSET, EngineStats, Unset


@dataclass
class CpsatStats(EngineStats):
    """What one CP-SAT run measured.

    ``stages``: one record per solve (stage, status, objective, bound, gap, seconds,
    deterministic_time…); ``rounds`` / ``refined_classes``: refinement of the exact model;
    ``lifted``: whole-node pods lifted above the leaves (:mod:`.lift`); model sizes from
    ``variables`` to ``victim_jobs``; ``hint_*``: the warm start's check (``hint_feasible``:
    true, false, ``"unknown"`` when the check ran out of time, null when it was not run);
    ``plan_round``: the refinement round whose stages found the returned plan (null: the warm
    start or a repacking came back); ``plan_source``: which
    repacking the coarse model's plan came from; ``eviction``: disruption against the warm
    start; ``cut_short``: what the time limit cut short.
    """

    rounds: int = 0
    refined_classes: int = 0
    hint_feasible: bool | str | None = None
    plan_round: int | None | Unset = UNSET
    aggregation_level: int | Unset = UNSET
    lifted: bool | Unset = UNSET
    build_seconds: float | Unset = UNSET
    variables: int | Unset = UNSET
    constraints: int | Unset = UNSET
    count_variables: int | Unset = UNSET
    node_classes: int | Unset = UNSET
    modelled_jobs: int | Unset = UNSET
    eviction_slots: int | Unset = UNSET
    victim_jobs: int | Unset = UNSET
    hint_dropped_pods: int | Unset = UNSET
    plan_source: str | None | Unset = UNSET
    eviction_model: str | Unset = UNSET
    eviction: dict[str, Any] | Unset = UNSET
    stages: list[dict[str, Any]] = field(default_factory=list)
    repacked_hints: int = 0
    cut_short: list[str] = field(default_factory=list)

    def record_size(self, size: dict[str, int]) -> None:
        """Set the model sizes (``PlacementModel.size()``: variables, constraints, …)."""
        for name, value in size.items():
            setattr(self, name, value)
