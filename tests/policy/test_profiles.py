"""Profiles: with evictions every lexicographic profile ranks disruption right after placement
(issue 10); a weighted profile refuses."""

from __future__ import annotations

import pytest

from toposolve.core.errors import InputError
from toposolve.policy.profiles import for_eviction, load_profile

DISRUPTION = ["broken_gangs", "eviction_cost", "evicted_pods"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("volcano-default", ["placed", *DISRUPTION, "spread", "fragmentation"]),
        ("lexicographic", ["placed", *DISRUPTION, "spread", "fragmentation"]),
        ("jobs-first", ["placed_jobs", "placed", *DISRUPTION, "spread", "fragmentation"]),
        ("preemption", ["placed", *DISRUPTION, "spread"]),
    ],
)
def test_disruption_comes_right_after_placement(name, expected):
    profile = load_profile(name)
    assert [s.name for s in for_eviction(profile, "preempt").objective.stages] == expected
    assert for_eviction(profile, None) is profile  # without evictions nothing changes


def test_stages_listed_out_of_order_are_moved():
    profile = load_profile("preemption")
    stages = list(reversed(profile.objective.stages))  # spread, evicted_pods, …, placed
    shuffled = profile.model_copy(
        update={"objective": profile.objective.model_copy(update={"stages": stages})}
    )
    names = [s.name for s in for_eviction(shuffled, "reclaim").objective.stages]
    assert names == ["placed", *DISRUPTION, "spread"]


def test_a_weighted_profile_refuses_to_evict():
    with pytest.raises(InputError, match="objective.mode"):
        for_eviction(load_profile("weighted"), "both")
