"""kube-scheduler's score configuration that the ``kube`` engine mirrors: what one
KubeSchedulerConfiguration profile sets (scoring strategies, score plugin weights), with the
checks of upstream's plugin-argument validation (``docs/kube-fidelity.md``).

Each ``*_problem`` function returns why a value is refused, or None; the reader raises it as a
located input error, the model as a ``ValueError``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, model_validator

RATIO = "RequestedToCapacityRatio"
STRATEGY_TYPES = ("LeastAllocated", "MostAllocated", RATIO)
DEFAULT_RESOURCES = (("cpu", 1), ("memory", 1))  # the plugins' default resources and weights
MAX_RESOURCE_WEIGHT = 100
MAX_UTILIZATION = 100
MAX_SHAPE_SCORE = 10


def strategy_type_problem(kind: str) -> str | None:
    """Why a scoring strategy type is refused (upstream: ``Unsupported value``), or None."""
    if kind in STRATEGY_TYPES:
        return None
    return f"unsupported value {kind!r}: supported values: {', '.join(STRATEGY_TYPES)}"


def resource_weight_problem(name: str, weight: int) -> str | None:
    """Why a strategy's resource weight is refused (not in (0, 100]), or None."""
    if 0 < weight <= MAX_RESOURCE_WEIGHT:
        return None
    return f"resource weight of {name} not in valid range (0, 100], got {weight}"


def shape_problem(shape: tuple[tuple[int, int], ...]) -> tuple[int, str] | None:
    """(point index, why) when a ``RequestedToCapacityRatio`` shape is refused: no point, a
    utilization outside 0-100 or not increasing, a score outside 0-10; else None."""
    if not shape:
        return 0, "RequestedToCapacityRatio needs at least one shape point"
    for i, (util, score) in enumerate(shape):
        if not 0 <= util <= MAX_UTILIZATION:
            return i, f"utilization {util} is not in 0-100"
        if i and util <= shape[i - 1][0]:
            return i, "utilization values must be sorted in increasing order"
        if not 0 <= score <= MAX_SHAPE_SCORE:
            return i, f"score {score} is not in 0-10"
    return None


class ScoringStrategy(BaseModel):
    """A ``scoringStrategy``: its type, ``(resource, weight)`` pairs and, for
    ``RequestedToCapacityRatio``, the ``(utilization, score)`` shape points."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: str
    resources: tuple[tuple[str, int], ...] = DEFAULT_RESOURCES
    shape: tuple[tuple[int, int], ...] = ()

    @model_validator(mode="after")
    def _valid(self) -> ScoringStrategy:
        if (why := strategy_type_problem(self.type)) is not None:
            raise ValueError(f"scoring strategy type: {why}")
        for name, weight in self.resources:
            if (why := resource_weight_problem(name, weight)) is not None:
                raise ValueError(why)
        if self.type == RATIO and (bad := shape_problem(self.shape)) is not None:
            raise ValueError(f"shape point {bad[0]}: {bad[1]}")
        if self.type != RATIO and self.shape:
            raise ValueError("a shape is only allowed when the type is RequestedToCapacityRatio")
        return self


class KubeScoring(BaseModel):
    """The score configuration of the profile the ``kube`` engine runs: the placement scores
    (PlacementBinPacking's strategy, its weight and PodGroupPodsCount's) and the pod-by-pod node
    scores (NodeResourcesFit's strategy, its weight and NodeResourcesBalancedAllocation's).
    A weight 0 leaves that score out (its plugin disabled); the defaults are upstream's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    placement: ScoringStrategy = ScoringStrategy(type="MostAllocated")
    placement_fit_weight: int = 1
    pods_count_weight: int = 1
    node: ScoringStrategy = ScoringStrategy(type="LeastAllocated")
    node_fit_weight: int = 1
    balanced_weight: int = 1
    balanced_resources: tuple[str, ...] = ("cpu", "memory")
