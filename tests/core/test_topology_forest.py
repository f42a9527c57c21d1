"""Several Kueue/KAI Topologies as one HyperNode forest: one tree when the levels agree, a
subtree per level list otherwise (tiers as each Topology alone has them), nodes in two trees
refused, or, with ``crossing``, the later tree kept as a tree of its own."""

from __future__ import annotations

import pytest

from toposolve.core.instance import Node
from toposolve.core.label_levels import LabelTopologyError, hypernodes_from_levels
from toposolve.core.topology import build_topology
from toposolve.core.topology_forest import topology_forest

HOST = "kubernetes.io/hostname"
GPU_LEVELS = ["x/spine", "x/rack", HOST]
CPU_LEVELS = ["x/zone", HOST]


def node(name: str, **labels: str) -> Node:
    return Node(name=name, labels={HOST: name, **{f"x/{k}": v for k, v in labels.items()}})


NODES = [node("g0", spine="s0", rack="r0"), node("g1", spine="s0", rack="r1"),
         node("c0", zone="a"), node("c1", zone="b"), node("bare")]


def test_one_level_list_is_the_single_tree_of_before():
    forest = topology_forest(NODES, {"t1": GPU_LEVELS, "t2": list(GPU_LEVELS)})
    alone, outside = hypernodes_from_levels(NODES, GPU_LEVELS)
    assert forest.hypernodes == alone and forest.within == {}
    assert forest.outside == {"t1": outside} and outside == ["c0", "c1", "bare"]


def test_two_level_lists_give_two_subtrees_with_their_own_tiers():
    forest = topology_forest(NODES, {"gpu": GPU_LEVELS, "cpu": CPU_LEVELS})
    topo = build_topology(NODES, forest.hypernodes)
    tier = dict(zip(topo.names, topo.tier.tolist(), strict=True))
    # level L of a Topology keeps the tier it has alone: spine 3, rack 2, host 1; zone 2, host 1
    assert tier["gpu:s0"] == 3 and tier["gpu:s0/r1"] == 2 and tier["gpu:s0/r1/g1"] == 1
    assert tier["cpu:a"] == 2 and tier["cpu:b/c1"] == 1
    # each tree hangs under a HyperNode named after it, one tier above its top level
    assert tier["gpu"] == 4 and tier["cpu"] == 3
    members = {name: sorted(topo.node_names[n] for n in topo.members[h].indices)
               for h, name in enumerate(topo.names)}
    assert members["gpu"] == ["g0", "g1"] and members["cpu"] == ["c0", "c1"]
    assert forest.within == {"gpu": "gpu", "cpu": "cpu"}
    assert forest.outside == {"gpu": ["bare"], "cpu": ["bare"]}  # g*/c* are in the other tree


def test_topologies_with_the_same_levels_share_the_tree_of_the_first():
    forest = topology_forest(NODES, {"cpu": CPU_LEVELS, "gpu-b": GPU_LEVELS, "gpu-a": GPU_LEVELS})
    assert forest.within == {"cpu": "cpu", "gpu-b": "gpu-b", "gpu-a": "gpu-b"}
    assert "gpu-a" not in {hn.name for hn in forest.hypernodes}


def test_a_node_carrying_the_levels_of_two_trees_is_refused_naming_both():
    both = [*NODES, node("x0", spine="s1", rack="r0", zone="a")]
    with pytest.raises(LabelTopologyError) as info:
        topology_forest(both, {"gpu": GPU_LEVELS, "cpu": CPU_LEVELS})
    text = str(info.value)
    assert "node x0" in text and "'gpu'" in text and "'cpu'" in text and "\n" not in text


def test_node_selection_decides_which_tree_takes_a_node():
    both = [*NODES, node("x0", spine="s1", rack="r0", zone="a")]
    takes = {"gpu": {"g0", "g1"}, "cpu": {"c0", "c1", "x0"}}
    forest = topology_forest(both, {"gpu": GPU_LEVELS, "cpu": CPU_LEVELS},
                             lambda name, n: n.name in takes[name])
    topo = build_topology(both, forest.hypernodes)
    assert topo.names[int(topo.node_home[topo.node_index["x0"]])] == "cpu:a/x0"
    assert forest.outside == {}  # "bare" is taken by neither


def test_with_crossing_a_tree_sharing_nodes_with_the_forest_is_a_tree_of_its_own():
    both = [*NODES, node("x0", spine="s1", rack="r0", zone="a")]
    forest = topology_forest(both, {"gpu": GPU_LEVELS, "cpu": CPU_LEVELS}, crossing=True)
    # the first tree stays in the forest, as a subtree so that its constraints keep to it
    main = build_topology(both, forest.hypernodes)
    assert main.names[int(main.node_home[main.node_index["x0"]])] == "gpu:s1/r0/x0"
    assert "cpu" not in main.index and forest.tree_of == {"cpu": "cpu"}
    cross = build_topology(both, forest.crossing["cpu"])
    tier = dict(zip(cross.names, cross.tier.tolist(), strict=True))
    assert tier["cpu:a"] == 2 and tier["cpu:a/x0"] == 1 and tier["cpu"] == 3
    held = sorted(cross.node_names[n] for n in cross.members[cross.index["cpu"]].indices)
    assert held == ["c0", "c1", "x0"]
    assert forest.within == {"gpu": "gpu", "cpu": "cpu"}


def test_crossing_changes_nothing_where_the_trees_are_disjoint():
    plain = topology_forest(NODES, {"gpu": GPU_LEVELS, "cpu": CPU_LEVELS})
    asked = topology_forest(NODES, {"gpu": GPU_LEVELS, "cpu": CPU_LEVELS}, crossing=True)
    assert asked == plain and not asked.crossing
    one = topology_forest(NODES, {"gpu": GPU_LEVELS}, crossing=True)
    assert one == topology_forest(NODES, {"gpu": GPU_LEVELS})
