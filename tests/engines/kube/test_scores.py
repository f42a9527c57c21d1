"""RequestedToCapacityRatio: the shape function and its argument validation."""

from __future__ import annotations

import numpy as np
import pytest

from toposolve.core.kube_scoring import RATIO, ScoringStrategy
from toposolve.engines.common.node_scores import (
    broken_linear,
    least_allocated,
    most_allocated,
    requested_to_capacity_ratio,
)

UTIL = np.arange(0, 101)


def test_the_shape_interpolates_between_points_and_holds_its_ends():
    shape = ((20, 2), (60, 8))
    got = broken_linear(shape, np.array([0, 20, 40, 59, 60, 100]))
    # (80 - 20) * 39 / 40 = 58.5, truncated
    assert got.tolist() == [20, 20, 50, 20 + 58, 80, 80]


def test_a_falling_shape_truncates_towards_zero_as_go_does():
    # 100 + (-100 * 33) / 100: Go gives 100 - 33 = 67 (not floor's 66)
    assert broken_linear(((0, 10), (100, 0)), np.array([33])).tolist() == [67]


@pytest.mark.parametrize(("shape", "same_as"), [(((0, 10), (100, 0)), least_allocated),
                                                (((0, 0), (100, 10)), most_allocated)])
def test_linear_shapes_score_as_least_or_most_allocated(shape, same_as):
    alloc = np.full((101, 1), 100)
    requested = UTIL[:, None]
    weights = np.array([1])
    ratio = requested_to_capacity_ratio(requested, alloc, weights, shape)
    plain = same_as(requested, alloc, weights)
    # a resource scoring 0 drops out of the mean: with one resource both give 0 there
    assert np.array_equal(ratio, plain)


def test_resources_scoring_zero_leave_the_weighted_mean():
    alloc = np.array([100, 100])
    # cpu at 50% scores 50, memory at 0% scores 0 and is not averaged in
    score = requested_to_capacity_ratio(np.array([50, 0]), alloc, np.array([1, 3]),
                                        ((0, 0), (100, 10)))
    assert int(score) == 50


@pytest.mark.parametrize(("shape", "message"), [
    ((), "at least one shape point"),
    (((0, 1), (101, 2)), "utilization 101 is not in 0-100"),
    (((50, 1), (50, 2)), "sorted in increasing order"),
    (((0, 11),), "score 11 is not in 0-10"),
])
def test_bad_shapes_are_refused(shape, message):
    with pytest.raises(ValueError, match=message):
        ScoringStrategy(type=RATIO, shape=shape)
