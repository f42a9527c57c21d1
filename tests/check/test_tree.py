"""The checker's own HyperNode tree (check/tree.py): homes, LCA, tier limits, bad trees."""

from __future__ import annotations

import pytest
from builders import example1_tree, hard, inner, instance, leaf, nodes

from toposolve.check.tree import build_tree
from toposolve.core.errors import InputError
from toposolve.core.instance import (
    ROOT_HYPERNODE,
    HyperNode,
    Member,
    MemberSelector,
    NetworkTopology,
)


def test_homes_lca_and_containment_on_example_1():
    tree = build_tree(instance(nodes(9), example1_tree(), []))
    assert (
        tree.home["node0"] == "s0" and tree.home["node8"] == ROOT_HYPERNODE
    )  # held by no HyperNode
    assert tree.root_tier == 4
    assert tree.lca(["node0", "node1"]) == "s0"
    assert tree.lca(["node0", "node3"]) == "s4"
    assert tree.lca(["node0", "node7"]) == "s6"
    assert tree.lca(["node0", "node8"]) == ROOT_HYPERNODE
    assert tree.lca([]) == ROOT_HYPERNODE
    assert tree.contains("s4", "node3") and not tree.contains("s5", "node3")


def test_tier_limit_by_number_by_name_and_unset():
    tree_nodes = [
        HyperNode(name="r0", tier=1, tier_name="rack", members=[]),
        inner("top", ["r0"], 2),
    ]
    tree = build_tree(instance(nodes(1), tree_nodes, []))
    assert tree.tier_limit(hard(1)) == 1
    assert tree.tier_limit(NetworkTopology(highest_tier_name="rack")) == 1
    assert tree.tier_limit(NetworkTopology(highest_tier_name="spine")) is None  # unknown: no limit
    assert tree.tier_limit(NetworkTopology()) == tree.root_tier


def test_regex_and_label_members_select_nodes():
    by_regex = HyperNode(
        name="r", tier=1, members=[Member(selector=MemberSelector(regex_match="node[01]$"))]
    )
    tree = build_tree(instance(nodes(3), [by_regex], []))
    assert [n for n, h in tree.home.items() if h == "r"] == ["node0", "node1"]


def bad(*hypernodes: HyperNode) -> str:
    with pytest.raises(InputError) as err:
        build_tree(instance(nodes(4), list(hypernodes), []))
    return str(err.value)


def test_a_tree_the_checker_cannot_read_is_an_input_error():
    assert "two parents" in bad(leaf("a", []), inner("p", ["a"], 2), inner("q", ["a"], 2))
    assert "cycle" in bad(inner("a", ["b"], 1), inner("b", ["a"], 2))
    assert "not lower than" in bad(leaf("a", [], tier=2), inner("p", ["a"], 2))
    assert "two HyperNodes" in bad(leaf("a", ["node0"]), leaf("b", ["node0"]))
    assert "not an existing HyperNode" in bad(inner("p", ["ghost"], 2))
    assert "reserved or used twice" in bad(leaf("a", []), leaf("a", []))
    two_tiers = [
        HyperNode(name="a", tier=1, tier_name="x"),
        HyperNode(name="b", tier=2, tier_name="x"),
    ]
    assert "names two tiers" in bad(*two_tiers)
    regex = HyperNode(name="r", tier=1, members=[Member(selector=MemberSelector(regex_match="("))])
    assert "invalid regular expression" in bad(regex)


def test_constraint_trees_are_built_alone_by_the_same_rules():
    from builders import crossing_instance

    from toposolve.check.tree import build_constraint_trees

    inst = crossing_instance([])
    trees = build_constraint_trees(inst)
    cross = trees["cross"]
    assert cross.home["node2"] == "c0" and cross.home["node0"] == ROOT_HYPERNODE
    assert cross.lca(["node1", "node2"]) == "c0" and cross.lca(["node2", "node3"]) == "cross"
    assert cross.tier["cross"] == 2 and cross.root_tier == 3
    assert build_tree(inst).lca(["node1", "node2"]) == "s4"  # c0 in the crossing tree
    inst.constraint_trees = [*inst.constraint_trees, inst.constraint_trees[0]]
    with pytest.raises(InputError, match="constraint tree 'cross' is declared twice"):
        build_constraint_trees(inst)
