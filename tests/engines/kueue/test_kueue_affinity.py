"""TASRespectNodeAffinityPreferred through the engine contract: off by default as in Kueue (the
preferred terms change nothing), on with a profile's ``kueue.feature_gates``."""

from __future__ import annotations

import pytest
import yaml
from fidelity.kueue.cases import documents, load_cases

import toposolve
from toposolve.formats.load import load_instance


@pytest.fixture
def case(tmp_path):
    """Kueue's table case "with preferred affinity": one pod preferring region us-west, two equal
    racks of one node each (rack-other sorts first by its label value)."""
    case = next(c for c in load_cases() if c["name"] == "with preferred affinity")
    path = tmp_path / "case.yaml"
    path.write_text(yaml.safe_dump_all(documents(case)))
    return load_instance(path, warn=lambda _: None)


def _nodes(plan) -> set[str]:
    return {b.node for b in plan.bindings}


def test_preferred_affinity_is_ignored_by_default(case):
    assert _nodes(toposolve.solve(case, "kueue")) == {"node-other"}  # equal domains: label order


def test_profile_gate_orders_domains_by_affinity(case, tmp_path):
    path = tmp_path / "profile.yaml"
    path.write_text("kueue:\n  feature_gates:\n    TASRespectNodeAffinityPreferred: true\n")
    assert _nodes(toposolve.solve(case, "kueue", toposolve.load_profile(path))) == {
        "node-preferred"
    }
