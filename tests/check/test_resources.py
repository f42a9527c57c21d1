"""Node predicates (check/resources.py): cordon, taints and tolerations, selectors, affinity."""

from __future__ import annotations

import pytest

from toposolve.check.resources import predicate_failure
from toposolve.core.instance import (
    NODE_NAME_FIELD,
    LabelRequirement,
    Node,
    PodConstraints,
    Taint,
    Toleration,
)

GPU_TAINT = Taint(key="gpu", value="yes", effect="NoSchedule")


def node(**fields) -> Node:
    return Node(name="n0", labels={"zone": "a"}, **fields)


def test_a_cordoned_node_takes_no_pod():
    assert predicate_failure(node(unschedulable=True), PodConstraints()) == "node is unschedulable"


@pytest.mark.parametrize(
    ("toleration", "tolerated"),
    [
        (None, False),
        (Toleration(key="gpu", operator="Equal", value="yes"), True),
        (Toleration(key="gpu", operator="Equal", value="no"), False),
        (Toleration(key="gpu", operator="Exists"), True),
        (Toleration(operator="Exists"), True),  # empty key with Exists tolerates everything
        (Toleration(key="gpu", operator="Exists", effect="NoExecute"), False),  # other effect
        (Toleration(key="gpu", operator="Exists", effect="NoSchedule"), True),
    ],
)
def test_a_no_schedule_taint_needs_a_matching_toleration(toleration, tolerated):
    constraints = PodConstraints(tolerations=[toleration] if toleration else [])
    failure = predicate_failure(node(taints=[GPU_TAINT]), constraints)
    assert (failure is None) is tolerated
    if not tolerated:
        assert failure == "taint gpu=yes:NoSchedule is not tolerated"


def test_prefer_no_schedule_is_only_a_preference():
    assert (
        predicate_failure(
            node(taints=[Taint(key="spot", effect="PreferNoSchedule")]), PodConstraints()
        )
        is None
    )


def test_node_selector_and_required_affinity_terms():
    assert predicate_failure(node(), PodConstraints(node_selector={"zone": "a"})) is None
    assert (
        predicate_failure(node(), PodConstraints(node_selector={"zone": "b"}))
        == "nodeSelector zone=b does not match"
    )
    other_zone = [LabelRequirement(key="zone", operator="In", values=["b"])]
    by_name = [LabelRequirement(key=NODE_NAME_FIELD, operator="In", values=["n0"])]
    assert (
        predicate_failure(node(), PodConstraints(affinity_terms=[other_zone]))
        == "no required node-affinity term matches"
    )
    assert (
        predicate_failure(node(), PodConstraints(affinity_terms=[other_zone, by_name])) is None
    )  # terms are ORed
