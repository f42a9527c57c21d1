"""The lingjun preset: the real three-tier Clos, leaves named by their label path."""

from __future__ import annotations

from collections import Counter

import pytest

from toposolve import solve
from toposolve.core.errors import InputError
from toposolve.core.problem import compile_problem
from toposolve.generate import generate, generate_document


@pytest.fixture(scope="module")
def instance():
    return generate("lingjun", load=0.9, seed=3)


def test_the_real_tree(instance):
    problem = compile_problem(instance)
    topo = problem.topology
    assert len(instance.nodes) == 847
    tiers = Counter(h.tier for h in instance.hypernodes)
    assert tiers == {1: 119, 2: 3, 3: 1}
    leaf_sizes = Counter(
        int(topo.node_count[h]) for h in range(len(topo.names)) if topo.tier[h] == 1
    )
    assert leaf_sizes == {8: 68, 7: 23, 6: 15, 5: 7, 2: 3, 4: 2, 3: 1}
    assert sorted(int(topo.node_count[h]) for h in range(len(topo.names)) if topo.tier[h] == 2) == [
        179,
        306,
        362,
    ]


def test_leaves_are_label_paths(instance):
    asw = Counter(n.labels["network.alibaba.com/asw"] for n in instance.nodes)
    paths = {
        tuple(n.labels[f"network.alibaba.com/{k}"] for k in ("dsw", "psw", "asw"))
        for n in instance.nodes
    }
    assert len(paths) == 119 and len(asw) < 119  # an ASW label alone is not a leaf
    leaf = next(h for h in instance.hypernodes if h.tier == 1)
    members = {m.selector.exact_match for m in leaf.members}
    node = next(n for n in instance.nodes if n.name in members)
    assert (
        leaf.name
        == "-".join(node.labels[f"network.alibaba.com/{k}"] for k in ("dsw", "psw", "asw")).lower()
    )


def test_seeded_jobs_place_and_check(instance):
    assert generate_document("lingjun", load=0.9, seed=3) == generate_document(
        "lingjun", load=0.9, seed=3
    )
    assert instance.jobs and any(
        j.network_topology and j.network_topology.mode == "hard" for j in instance.jobs
    )
    plan = solve(instance, "volcano")
    assert any(j.placed for j in plan.jobs)


def test_nodes_cannot_be_changed():
    with pytest.raises(InputError, match="847 hosts"):
        generate("lingjun", nodes=100)
