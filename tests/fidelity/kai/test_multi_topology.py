"""KAI's allocate tests with two Topologies over the same nodes (``data/multi_topology.yaml``):
the Topologies cross (a rack spans two zones), which one HyperNode tree per node cannot hold, so
toposolve refuses the input in one line naming a shared node and both Topologies."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from toposolve.core.errors import InputError

from .kai_objects import case_documents, load_case

DATA = yaml.safe_load((Path(__file__).parent / "data" / "multi_topology.yaml").read_text())


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda c: c["name"])
def test_crossing_topologies_over_the_same_nodes_are_refused_in_one_line(tmp_path, case):
    with pytest.raises(InputError) as info:
        load_case(tmp_path, case_documents(case))
    text = str(info.value)
    assert info.value.field == "spec.levels" and "\n" not in text
    assert "node node0 carries the levels of Topology" in text
    assert "'rack-topology'" in text and "'zone-topology'" in text

