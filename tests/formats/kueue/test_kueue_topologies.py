"""Several Kueue Topologies in one input (issue 23 §1): each ResourceFlavor's Topology a subtree
over the nodes its nodeLabels select, a workload's constraints read against and kept in its
flavor's Topology; a Topology whose flavor takes nodes another tree holds read as a constraint
tree (``test_kueue_crossing.py``)."""

from __future__ import annotations

from pathlib import Path

import yaml
from scheduler_docs import write_docs

from toposolve.formats.load import load_instance

DUMP = Path(__file__).resolve().parents[3] / "instances" / "kueue-two-flavors.yaml"
BLOCK = "cloud.google.com/gce-topology-block"


def docs() -> list[dict]:
    return list(yaml.safe_load_all(DUMP.read_text(encoding="utf-8")))


def named(items: list[dict], kind: str, name: str) -> dict:
    return next(d for d in items if d["kind"] == kind and d["metadata"]["name"] == name)


def test_each_workload_is_constrained_in_its_flavors_topology():
    inst = load_instance(DUMP, warn=lambda _: None)
    tiers = {hn.name: hn.tier for hn in inst.hypernodes}
    assert tiers["gpu-topology"] == 4 and tiers["cpu-topology"] == 3
    got = {j.name: (j.network_topology.mode, j.network_topology.highest_tier_allowed,
                    j.network_topology.within_hypernode, j.topology_name)
           for j in inst.jobs if j.network_topology is not None}
    assert got == {
        "running-train": ("hard", 2, "gpu-topology", "gpu-topology"),
        "train": ("hard", 3, "gpu-topology", "gpu-topology"),  # block: tier 3 of gpu-topology
        "etl": ("hard", 2, "cpu-topology", "cpu-topology"),  # zone: tier 2 of cpu-topology
        "finetune": ("hard", 2, "gpu-topology", "gpu-topology"),
        "batch": ("soft", 2, "cpu-topology", "cpu-topology"),
    }


def test_a_level_of_another_flavors_topology_loads_as_a_constraint_no_node_satisfies(tmp_path):
    """Kueue leaves such a workload pending (NoMatchingFlavor), so the input loads: the podset's
    constraint names the missing level, with one warning line naming the workload and level."""
    changed = docs()
    named(changed, "Workload", "etl")["spec"]["podSets"][0]["topologyRequest"] = {
        "required": BLOCK}
    lines: list[str] = []
    inst = load_instance(write_docs(tmp_path, changed), warn=lines.append)
    etl = next(j for j in inst.jobs if j.name == "etl")
    assert etl.network_topology.missing_level == BLOCK
    assert etl.network_topology.highest_tier_allowed is None
    assert etl.flavor == "cpu-flavor"
    (line,) = [x for x in lines if "Workload/default/etl" in x]
    assert f"podset 'worker' level '{BLOCK}': not a level of Topology 'cpu-topology'" in line
    assert "stays pending" in line
    assert all(j.network_topology is None or j.network_topology.missing_level is None
               for j in inst.jobs if j.name != "etl")


def test_a_topology_whose_flavor_takes_a_node_of_another_tree_is_a_constraint_tree(tmp_path):
    changed = docs()
    named(changed, "ResourceFlavor", "cpu-flavor")["spec"]["nodeLabels"] = {}  # every node
    named(changed, "Node", "gpu-3")["metadata"]["labels"]["topology.kubernetes.io/zone"] = "z"
    inst = load_instance(write_docs(tmp_path, changed), warn=lambda _: None)
    assert [t.name for t in inst.constraint_trees] == ["cpu-topology"]
    (tree,) = inst.constraint_trees
    held = {m.selector.exact_match for h in tree.hypernodes for m in h.members if m.type == "Node"}
    assert held == {"cpu-0", "cpu-1", "cpu-2", "cpu-3", "gpu-3"}  # every node with a zone label
    etl = next(j for j in inst.jobs if j.name == "etl")
    assert (etl.network_topology.tree, etl.network_topology.within_hypernode) == (
        "cpu-topology", "cpu-topology")


def test_a_node_without_its_flavors_levels_is_named_once(tmp_path):
    changed = docs()
    del named(changed, "Node", "cpu-3")["metadata"]["labels"]["topology.kubernetes.io/zone"]
    lines: list[str] = []
    load_instance(write_docs(tmp_path, changed), warn=lines.append)
    assert [line for line in lines if "lack a level label" in line] == [
        "1 node(s) lack a level label of Topology 'cpu-topology' and stay outside the topology "
        "(first: cpu-3)"]


def test_a_node_lacking_only_the_lower_level_stays_outside_its_block(tmp_path):
    # Kueue's TAS snapshot takes only nodes carrying every level (NodeMatchesFlavor,
    # pkg/util/tas/node.go at kueue@ff69552): gpu-0 keeps its block label yet leaves the tree
    changed = docs()
    del named(changed, "Node", "gpu-0")["metadata"]["labels"][
        "cloud.google.com/gce-topology-subblock"]
    lines: list[str] = []
    inst = load_instance(write_docs(tmp_path, changed), warn=lines.append)
    held = {m.selector.exact_match for h in inst.hypernodes for m in h.members
            if m.type == "Node"}
    assert "gpu-0" not in held and "gpu-1" in held
    assert any("lack a level label" in line and "gpu-0" in line for line in lines)
