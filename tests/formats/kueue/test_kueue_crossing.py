"""Kueue ResourceFlavors over the same nodes naming Topologies whose domains cross (issue 23 §1):
the first Topology keeps the main tree, the other is a constraint tree of its own (Kueue: one
TAS snapshot per flavor), and its workloads' constraints are measured in it."""

from __future__ import annotations

from pathlib import Path

from toposolve.core.problem import compile_problem
from toposolve.formats.load import load_instance

DUMP = Path(__file__).resolve().parents[3] / "instances" / "kueue-crossing-topologies.yaml"
ZONE_TIER, RACK_TIER = 3, 2  # zone > rack > host in zone-topology; rack > host in rack-topology


def nodes_of(hypernodes) -> set[str]:
    return {m.selector.exact_match for h in hypernodes for m in h.members if m.type == "Node"}


def test_the_second_flavors_topology_is_a_constraint_tree_over_the_same_nodes():
    inst = load_instance(DUMP, warn=lambda _: None)
    assert [t.name for t in inst.constraint_trees] == ["zone-topology"]
    assert nodes_of(inst.constraint_trees[0].hypernodes) == nodes_of(inst.hypernodes)
    assert len(nodes_of(inst.hypernodes)) == 8


def test_each_workload_is_constrained_in_its_flavors_tree():
    inst = load_instance(DUMP, warn=lambda _: None)
    got = {j.name: (j.topology_name, j.network_topology and (
        j.network_topology.mode, j.network_topology.highest_tier_allowed,
        j.network_topology.tree, j.network_topology.within_hypernode)) for j in inst.jobs}
    assert got == {
        "running-train": ("rack-topology", ("hard", RACK_TIER, None, "rack-topology")),
        "train": ("rack-topology", ("hard", RACK_TIER, None, "rack-topology")),
        "eval": ("zone-topology", ("hard", ZONE_TIER, "zone-topology", "zone-topology")),
        "loader": ("zone-topology", ("soft", ZONE_TIER, "zone-topology", "zone-topology")),
        "zone-batch": ("zone-topology", None),  # implied: placed in its flavor's snapshot
        "batch": ("rack-topology", None),
    }


def test_the_problem_compiles_the_constraint_tree_and_its_crossing_jobs():
    problem = compile_problem(load_instance(DUMP, warn=lambda _: None))
    assert list(problem.trees) == ["zone-topology"]
    names = {j: problem.instance.jobs[j].name for j in problem.crossing_jobs}
    assert sorted(names.values()) == ["eval", "loader"]
