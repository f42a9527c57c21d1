"""The checker's own label-selector semantics (check/labels.py), case by case."""

from __future__ import annotations

import pytest

from toposolve.check.labels import requirement_holds, selector_holds
from toposolve.core.instance import LabelRequirement, LabelSelector

LABELS = {"zone": "a", "gpus": "8", "name": "x"}


@pytest.mark.parametrize(
    ("key", "operator", "values", "holds"),
    [
        ("zone", "In", ["a", "b"], True),
        ("zone", "In", ["b"], False),
        ("rack", "In", ["a"], False),  # absent label: In never holds
        ("zone", "NotIn", ["b"], True),
        ("zone", "NotIn", ["a"], False),
        ("rack", "NotIn", ["a"], True),  # absent label: NotIn holds
        ("zone", "Exists", [], True),
        ("rack", "Exists", [], False),
        ("rack", "DoesNotExist", [], True),
        ("zone", "DoesNotExist", [], False),
        ("gpus", "Gt", ["4"], True),
        ("gpus", "Gt", ["8"], False),
        ("gpus", "Lt", ["9"], True),
        ("name", "Gt", ["1"], False),  # not an integer: neither Gt nor Lt holds
        ("rack", "Lt", ["1"], False),  # absent: neither holds
    ],
)
def test_each_operator_on_present_and_absent_labels(key, operator, values, holds):
    assert (
        requirement_holds(LabelRequirement(key=key, operator=operator, values=values), LABELS)
        is holds
    )


def test_a_selector_needs_every_match_label_and_every_expression():
    exists = LabelRequirement(key="gpus", operator="Exists")
    assert selector_holds(LabelSelector(), LABELS)  # empty selector: everything
    assert selector_holds(
        LabelSelector(match_labels={"zone": "a"}, match_expressions=[exists]), LABELS
    )
    assert not selector_holds(
        LabelSelector(match_labels={"zone": "b"}, match_expressions=[exists]), LABELS
    )
    missing = LabelRequirement(key="rack", operator="Exists")
    assert not selector_holds(
        LabelSelector(match_labels={"zone": "a"}, match_expressions=[missing]), LABELS
    )
