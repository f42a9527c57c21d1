"""Subset sums against enumeration of every subset."""

from __future__ import annotations

import itertools
import random

import pytest

from toposolve.engines.cpsat.solve import subset_sum
from toposolve.engines.cpsat.solve.subset_sum import SubsetSums, largest_subset_sum


def every_sum(weights: list[int]) -> set[int]:
    return {sum(c) for k in range(len(weights) + 1) for c in itertools.combinations(weights, k)}


@pytest.mark.parametrize("seed", range(20))
def test_largest_sum_and_witnesses_match_enumeration(seed):
    rng = random.Random(seed)
    weights = [rng.choice([2, 4, 6, 8, 12, 16, 24]) for _ in range(rng.randint(1, 9))]
    capacity = rng.randint(0, sum(weights))
    reachable = {s for s in every_sum(weights) if s <= capacity}
    assert largest_subset_sum(weights, capacity) == max(reachable)
    sums = SubsetSums(weights, capacity)
    above = rng.randint(0, capacity)
    assert sums.descending(above) == sorted((s for s in reachable if s > above), reverse=True)
    for total in reachable:
        chosen = sums.witness(total)
        assert sum(weights[k] for k in chosen) == total
        assert len(set(chosen)) == len(chosen)


def test_the_witness_prefers_the_weights_listed_last():
    # 8 = 8 or 2 + 6: the later weights (2, 6) are taken
    assert SubsetSums([8, 2, 6], 8).witness(8) == [1, 2]
    assert SubsetSums([2, 6, 8], 8).witness(8) == [2]


def test_an_unreachable_sum_has_no_witness():
    with pytest.raises(ValueError):
        SubsetSums([4, 8], 12).witness(6)


def test_too_many_steps_fall_back_to_the_capacity(monkeypatch):
    monkeypatch.setattr(subset_sum, "MAX_STEPS", 2)  # 10 // gcd 3 = 3 steps
    # true answer 9 (3 + 6); not enumerated: the capacity 10, still an upper bound
    assert largest_subset_sum([3, 6, 9], 10) == 10
    assert not SubsetSums([3, 6, 9], 10).exact
