"""HyperNode tree building: selectors, virtual root, LCA, arrays and every tree error."""

from __future__ import annotations

import numpy as np
import pytest
from builders import example1_tree, inner, leaf, nodes

from toposolve.core.errors import InputError
from toposolve.core.instance import (
    HyperNode,
    LabelRequirement,
    LabelSelector,
    Member,
    MemberSelector,
    Node,
)
from toposolve.core.topology import build_topology


def test_example1_tree_shape_and_root():
    topo = build_topology(nodes(8), example1_tree())
    assert topo.names[-1] == "<cluster-top-hypernode>"
    assert topo.max_tier == 4  # highest real tier + 1
    idx = topo.index
    assert topo.parent[idx["s0"]] == idx["s4"] and topo.parent[idx["s6"]] == topo.root
    assert list(topo.node_count[[idx["s0"], idx["s4"], idx["s6"], topo.root]]) == [2, 4, 8, 8]
    assert topo.node_at_tier[5, 0] == -1  # column t is tier t: no tier-0 HyperNode here
    assert [topo.names[h] for h in topo.node_at_tier[5, 1:]] == [
        "s2",
        "s5",
        "s6",
        "<cluster-top-hypernode>",
    ]


def test_lca_of_hypernodes_and_nodes():
    topo = build_topology(nodes(8), example1_tree())
    idx = topo.index
    assert topo.names[topo.lca(idx["s0"], idx["s1"])] == "s4"
    assert topo.names[topo.lca(idx["s0"], idx["s3"])] == "s6"
    assert topo.names[topo.lca_of_nodes([0, 1])] == "s0"
    assert topo.names[topo.lca_of_nodes([1, 2])] == "s4"
    assert topo.names[topo.lca_of_nodes([0, 4])] == "s6"
    assert topo.names[topo.lca_of_nodes([])] == "<cluster-top-hypernode>"


def test_no_hypernodes_gives_a_tier1_root_holding_every_node():
    topo = build_topology(nodes(3), [])
    assert topo.names == ("<cluster-top-hypernode>",)
    assert topo.max_tier == 1 and topo.node_count[0] == 3


def test_nodes_outside_every_hypernode_hang_off_the_root():
    topo = build_topology(nodes(3), [leaf("r0", ["node0", "node1"])])
    assert topo.node_home[2] == topo.root
    assert topo.node_at_tier[2, 0] == -1


def test_regex_is_unanchored_re2_and_label_selectors_work():
    node_list = [
        Node(name="gpu-a-1", labels={"rack": "a", "gen": "9"}),
        Node(name="gpu-a-2", labels={"rack": "a", "gen": "10"}),
        Node(name="cpu-b-1", labels={"rack": "b"}),
    ]
    regex = HyperNode(
        name="rx", tier=1, members=[Member(selector=MemberSelector(regex_match="a-"))]
    )
    labels = HyperNode(
        name="lb",
        tier=1,
        members=[
            Member(
                selector=MemberSelector(
                    label_match=LabelSelector(
                        match_labels={"rack": "b"},
                        match_expressions=[LabelRequirement(key="gen", operator="DoesNotExist")],
                    )
                )
            )
        ],
    )
    topo = build_topology(node_list, [regex, labels])
    assert [topo.names[h] for h in topo.node_home] == ["rx", "rx", "lb"]


def test_exact_match_of_a_missing_node_is_ignored():
    topo = build_topology(nodes(2), [leaf("r0", ["node0", "gone"])])
    assert topo.node_count[topo.index["r0"]] == 1


def test_gt_lt_label_requirements():
    node_list = [Node(name="a", labels={"gen": "9"}), Node(name="b", labels={"gen": "10"})]
    sel = LabelSelector(
        match_expressions=[LabelRequirement(key="gen", operator="Gt", values=["9"])]
    )
    topo = build_topology(
        node_list,
        [HyperNode(name="new", tier=1, members=[Member(selector=MemberSelector(label_match=sel))])],
    )
    assert topo.node_home[1] == topo.index["new"] and topo.node_home[0] == topo.root


@pytest.mark.parametrize(
    "tree, message",
    [
        ([inner("a", ["b"], 2), inner("b", ["a"], 1)], "cycle"),
        ([inner("p", ["c"], 2), inner("q", ["c"], 2), leaf("c", [])], "already has parent"),
        ([inner("p", ["missing"], 2)], "does not exist"),
        (
            [
                HyperNode(
                    name="p",
                    tier=2,
                    members=[Member(type="HyperNode", selector=MemberSelector(regex_match="c.*"))],
                )
            ],
            "regexMatch is not allowed",
        ),
        (
            [
                HyperNode(
                    name="p", tier=1, members=[Member(selector=MemberSelector(regex_match="(a"))]
                )
            ],
            "invalid regular expression",
        ),
        ([inner("p", ["c"], 1), leaf("c", [], tier=1)], "not lower"),
        ([leaf("r0", ["node0"]), leaf("r1", ["node0"])], "already a member"),
        ([leaf("r0", ["node0"]), leaf("r0", ["node1"])], "duplicate HyperNode"),
    ],
)
def test_tree_errors_are_input_errors_naming_the_hypernode(tree, message):
    with pytest.raises(InputError) as err:
        build_topology(nodes(2), tree, source="cluster.yaml")
    text = str(err.value)
    assert message in text
    assert text.startswith("cluster.yaml: HyperNode/")
    assert "\n" not in text


def test_tier_names_resolve_and_conflicting_names_fail():
    tree = example1_tree()
    for hn in tree:
        hn.tier_name = {1: "rack", 2: "spine", 3: "core"}[hn.tier]
    topo = build_topology(nodes(8), tree)
    assert topo.tier_limit(None, "spine") == 2
    tree[0].tier_name = "spine"  # tier 1 claiming tier 2's name
    with pytest.raises(InputError, match="tierName"):
        build_topology(nodes(8), tree)


def test_membership_matrix_matches_ancestor_chains():
    topo = build_topology(nodes(8), example1_tree())
    dense = topo.members.toarray()
    for n in range(8):
        chain = set(topo.ancestors(int(topo.node_home[n])))
        assert set(np.flatnonzero(dense[:, n])) == chain


def nvlink_tree() -> list[HyperNode]:
    """Volcano's tier-0 shape: NVLink pairs (tier 0) under two leaves (tier 1) under a spine."""
    return [
        *(leaf(f"nvl{k}", [f"node{2 * k}", f"node{2 * k + 1}"], tier=0) for k in range(4)),
        inner("leaf0", ["nvl0", "nvl1"], 1),
        inner("leaf1", ["nvl2", "nvl3"], 1),
        inner("spine", ["leaf0", "leaf1"], 2),
    ]


def test_tier_zero_hypernodes_sit_below_the_leaves():
    topo = build_topology(nodes(8), nvlink_tree())
    assert (topo.min_tier, topo.max_tier) == (0, 3)  # the root is the highest tier + 1
    assert [topo.names[h] for h in topo.node_at_tier[5]] == [
        "nvl2",
        "leaf1",
        "spine",
        "<cluster-top-hypernode>",
    ]
    assert [topo.names[h] for h in topo.node_leaf] == [
        "nvl0",
        "nvl0",
        "nvl1",
        "nvl1",
        "nvl2",
        "nvl2",
        "nvl3",
        "nvl3",
    ]
    assert topo.names[topo.lca_of_nodes([0, 1])] == "nvl0"
    assert topo.names[topo.lca_of_nodes([1, 2])] == "leaf0"


def test_only_tier_zero_hypernodes_give_a_tier_one_root():
    topo = build_topology(nodes(4), [leaf("nvl0", ["node0", "node1"], tier=0)])
    assert (topo.min_tier, topo.max_tier) == (0, 1)
    # node2 and node3 have no lowest-tier HyperNode: Volcano's FindHyperNodeForNode finds none
    assert [topo.names[h] if h >= 0 else None for h in topo.node_leaf] == [
        "nvl0",
        "nvl0",
        None,
        None,
    ]
