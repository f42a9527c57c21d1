"""PodDisruptionBudget arithmetic, against the Kubernetes disruption controller's rules
(pkg/controller/disruption/disruption.go at kubernetes/kubernetes 003e86297d18: percentages
round up for both fields; integer minAvailable counts the selected pods; nothing is allowed
when no pod is expected)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from toposolve.core.disruption import (
    NOT_READY,
    READY,
    STARTING,
    WaveLedger,
    disruptions_allowed,
    int_or_percent,
    scaled,
    takes_disruption,
)
from toposolve.core.instance import PodDisruptionBudget


@pytest.mark.parametrize(("value", "total", "want"), [
    (3, 10, 3), ("50%", 5, 3), ("10%", 5, 1), ("0%", 7, 0), ("100%", 7, 7), ("34%", 3, 2),
])
def test_scaled_rounds_percentages_up(value, total, want):
    assert scaled(value, total) == want


@pytest.mark.parametrize(("spec", "selected", "scale", "healthy", "want"), [
    ({"min_available": 2}, 4, 4, 4, 2),          # int: healthy - minAvailable
    ({"min_available": 2}, 4, 4, 1, 0),          # fewer healthy than asked: none, not negative
    ({"min_available": "50%"}, 3, 3, 3, 1),      # desired ceil(1.5) = 2
    ({"max_unavailable": 1}, 4, 4, 4, 1),
    ({"max_unavailable": "30%"}, 4, 4, 4, 2),    # ceil(1.2) = 2 may go
    ({"max_unavailable": 1}, 4, 4, 3, 0),        # one already down: desired 3, healthy 3
    ({"max_unavailable": "100%"}, 2, 2, 2, 2),
    ({}, 4, 4, 4, 0),                            # neither: expected stays 0, nothing may go
    ({"min_available": 0}, 0, 0, 0, 0),          # no pod expected: none
])
def test_disruptions_allowed(spec, selected, scale, healthy, want):
    got = disruptions_allowed(spec.get("min_available"), spec.get("max_unavailable"),
                              selected=selected, expected_scale=scale, healthy=healthy)
    assert got == want


def test_scale_not_selected_pods_is_the_percentage_base():
    # 2 of a 10-pod job selected: a percentage counts the controller's 10, an integer does not
    assert disruptions_allowed("50%", None, selected=2, expected_scale=10, healthy=2) == 0
    assert disruptions_allowed(1, None, selected=2, expected_scale=10, healthy=2) == 1


@pytest.mark.parametrize("bad", [-1, "150%", "5 %", "x", 1.5, True, "-5%"])
def test_bad_budget_values_are_refused(bad):
    with pytest.raises(ValueError):
        int_or_percent(bad)
    with pytest.raises(ValidationError):
        PodDisruptionBudget(name="p", min_available=bad)


def test_both_fields_are_refused():
    with pytest.raises(ValidationError, match="cannot both be set"):
        PodDisruptionBudget(name="p", min_available=1, max_unavailable="10%")


# Scenarios of pkg/controller/disruption/disruption_test.go (kubernetes/kubernetes 003e86297d18),
# as data: (test, minAvailable, maxUnavailable, pods selected, controllers' scale, healthy,
# disruptionsAllowed the test verifies). Controllers' scale is toposolve's job replicas.
PORTED = [
    ("TestReplicaSet", "20%", None, 1, 10, 1, 0),
    ("TestScaleResource", None, 5, 4, 10, 4, 0),
    ("TestReplicationController, 2 of 3 pods", "34%", None, 2, 3, 2, 0),
    ("TestReplicationController, 3 of 3 pods", "34%", None, 3, 3, 3, 1),
    ("TestStatefulSetController, 3 of 3 pods", "34%", None, 3, 3, 3, 1),
    ("TestTwoControllers, one RC of 11, 5 ready", "28%", None, 11, 11, 5, 1),
    ("TestTwoControllers, RC + RS of 22, 9 ready", "28%", None, 22, 22, 9, 2),
    ("TestTwoControllers, 7 ready", "28%", None, 22, 22, 7, 0),
    ("TestUpdateDisruptedPods", 1, None, 3, 3, 1, 0),
]


@pytest.mark.parametrize(("name", "min_available", "max_unavailable", "selected", "scale",
                          "healthy", "allowed"), PORTED, ids=[row[0] for row in PORTED])
def test_the_controllers_own_cases(name, min_available, max_unavailable, selected, scale,
                                   healthy, allowed):
    assert disruptions_allowed(min_available, max_unavailable, selected=selected,
                               expected_scale=scale, healthy=healthy) == allowed


# The Eviction API's decision per pod (pkg/registry/core/pod/storage/eviction.go): evicted when
# the budget is not consulted or allows a disruption. Cases of its eviction_test.go
# (kubernetes/kubernetes 04791b4906602ffda5ccf9bc4c84d3329f1d7080: TestEviction and
# TestEvictionIngorePDB, whose pods carry no Ready condition unless stated) and of the
# unhealthyPodEvictionPolicy branch (KEP-3017) that later versions of eviction.go add.
@pytest.mark.parametrize(("case", "state", "policy", "healthy", "desired", "allowed", "evicted"),
                         [
    ("no disruptions allowed, pod running", NOT_READY, None, 0, 0, 0, False),
    ("no disruptions allowed, pod pending", STARTING, None, 0, 0, 0, True),
    ("disruptions allowed", NOT_READY, None, 0, 0, 1, True),
    ("none allowed, pod running, pod healthy (t7)", READY, None, 2, 2, 0, False),
    ("none allowed, pod running, pod unhealthy (t8)", NOT_READY, None, 2, 2, 0, True),
    ("IfHealthyBudget, budget not met", NOT_READY, "IfHealthyBudget", 1, 2, 0, False),
    ("AlwaysAllow, budget not met", NOT_READY, "AlwaysAllow", 1, 2, 0, True),
    ("AlwaysAllow, a Ready pod still takes a disruption", READY, "AlwaysAllow", 1, 2, 0, False),
])
def test_which_evictions_take_a_disruption(case, state, policy, healthy, desired, allowed,
                                           evicted):
    charged = takes_disruption(state, policy, healthy=healthy, desired=desired)
    assert (not charged or allowed > 0) == evicted, case


def test_a_wave_ledger_counts_recovered_pods_healthy():
    ledger = WaveLedger(2, None, None, selected=3, expected_scale=3, healthy=1)
    assert (ledger.allowed(), ledger.charged(NOT_READY)) == (0, True)  # 1 healthy < 2 desired
    ledger.wave_done(1)  # a not-Ready pod's replacement is Ready: the budget is met
    assert (ledger.allowed(), ledger.charged(NOT_READY)) == (0, False)
    ledger.wave_done(1)
    assert (ledger.allowed(), ledger.charged(READY)) == (1, True)
