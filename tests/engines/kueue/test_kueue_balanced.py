"""TASBalancedPlacement through the engine contract: off by default as in Kueue, on with the
``kueue-balanced`` profile (``kueue.feature_gates``)."""

from __future__ import annotations

from collections import Counter

import pytest
import yaml
from fidelity.kueue.cases import documents, load_cases

import toposolve
from toposolve.formats.load import load_instance


@pytest.fixture
def basic(tmp_path):
    """Kueue's table case "balanced placement; basic": 25 pods preferring a rack, two racks of
    15."""
    case = next(c for c in load_cases() if c["name"] == "balanced placement; basic")
    path = tmp_path / "basic.yaml"
    path.write_text(yaml.safe_dump_all(documents(case)))
    return load_instance(path, warn=lambda _: None)


def _per_node(plan) -> list[int]:
    return sorted(Counter(b.node for b in plan.bindings).values())


def test_balanced_placement_is_off_by_default(basic):
    assert _per_node(toposolve.solve(basic, "kueue")) == [10, 15]  # BestFit fills a rack first


def test_profile_turns_balanced_placement_on(basic):
    plan = toposolve.solve(basic, "kueue", "kueue-balanced")  # checked inside solve()
    assert _per_node(plan) == [12, 13]  # the table's wanted 13 + 12


def test_an_unknown_gate_is_an_input_error(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("kueue:\n  feature_gates:\n    TASBalancedPlacemnt: true\n")
    with pytest.raises(toposolve.InputError, match="feature_gates"):
        toposolve.load_profile(path)
