"""Several Kueue / KAI ``Topology`` objects in one input, as one HyperNode forest.

Topologies with the same levels share one tree. Topologies with other levels each get a subtree
under the virtual root: their domains (named ``<tree>:<path>``) under one HyperNode named after
the tree, one tier above its top level, so that level ``L`` of a Topology keeps the tier it has
alone and a constraint naming the Topology keeps its pods under that HyperNode
(``NetworkTopology.within_hypernode``). A node belongs to the tree of every Topology whose
levels it carries (and whose node selection takes it); a node in two trees is refused, unless
``crossing`` is asked for (KAI): then a tree sharing nodes with the forest becomes a tree of its
own, ``Forest.crossing`` (``ConstraintTree``). The rules and their reasons are in
``docs/label-topology.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from toposolve.core.instance import HyperNode, Member, Node
from toposolve.core.label_levels import (
    LabelLevel,
    LabelTopologyError,
    domain_name,
    hypernodes_from_labels,
    hypernodes_from_levels,
)

TREE_SEPARATOR = ":"  # in no Topology name and no label value, so names cannot clash


@dataclass
class Forest:
    """The HyperNodes of the named Topologies and where each Topology's constraints stay.

    ``within``: Topology name → the HyperNode its constraints keep their pods under (empty when
    one tree serves every Topology, as before several were supported). ``outside``: per tree
    name, the nodes its selection takes that lack one of its level labels and are in no tree.
    """

    hypernodes: list[HyperNode] = field(default_factory=list)
    within: dict[str, str] = field(default_factory=dict)
    outside: dict[str, list[str]] = field(default_factory=dict)
    # trees of their own over nodes the forest holds (``crossing=True``): tree name → HyperNodes
    # (its domains under one HyperNode named after it); ``tree_of``: Topology name → that tree
    crossing: dict[str, list[HyperNode]] = field(default_factory=dict)
    tree_of: dict[str, str] = field(default_factory=dict)


def topology_forest(
    nodes: Sequence[Node],
    topologies: Mapping[str, Sequence[str]],
    takes: Callable[[str, Node], bool] | None = None,
    crossing: bool = False,
) -> Forest:
    """The forest of ``topologies`` (name → level label keys, top first).

    Parameters
    ----------
    nodes
        The instance's nodes.
    topologies
        The Topologies the input's constraints use, in the order the tie rule follows: trees
        are named after their first Topology in this order.
    takes
        ``takes(topology, node)``: whether the Topology's node selection takes the node (Kueue:
        a ResourceFlavor naming it selects the node); default every node. With one tree, every
        node carrying its levels is in it, as before several trees were read.
    crossing
        Keep a tree that shares a node with the forest built so far as a tree of its own
        (``Forest.crossing``; trees are visited in the order above) instead of refusing it.

    Returns
    -------
    Forest

    Raises
    ------
    LabelTopologyError
        A node carries the levels of two trees, naming the node and both Topologies (without
        ``crossing``).
    """
    trees: dict[tuple[str, ...], list[str]] = {}
    for name, levels in topologies.items():
        trees.setdefault(tuple(levels), []).append(name)
    if crossing:
        main, crossing_trees = _split_crossing(nodes, trees, takes)
        if crossing_trees:
            return _with_crossing(nodes, main, crossing_trees, takes)
    if len(trees) <= 1:
        levels = next(iter(trees), ())
        if not levels:
            return Forest()
        # one tree over every node carrying its levels, as before several trees were read
        hypernodes, outside = hypernodes_from_levels(nodes, list(levels))
        return Forest(hypernodes, {}, {trees[levels][0]: outside} if outside else {})
    return _forest(nodes, trees, takes)


def _forest(nodes: Sequence[Node], trees: Mapping[tuple[str, ...], list[str]],
            takes: Callable[[str, Node], bool] | None) -> Forest:
    """One subtree per level list under a HyperNode named after it; a node in two is refused."""
    forest = Forest()
    owner: dict[str, str] = {}  # node → tree name
    for levels, names in trees.items():
        tree = names[0]
        picked = _picked(nodes, names, takes)
        members = [n for n in picked if all(key in n.labels for key in levels)]
        taken = {n.name for n in members}
        for node in members:
            other = owner.setdefault(node.name, tree)
            if other != tree:
                raise LabelTopologyError(
                    f"node {node.name} carries the levels of Topology {other!r} and of "
                    f"Topology {tree!r}, whose levels differ: toposolve places each node in "
                    "one tree, so Topologies with different levels must cover different nodes")
        forest.outside[tree] = [n.name for n in picked if n.name not in taken]
        forest.hypernodes += _subtree(tree, members, levels)
        forest.within.update({name: tree for name in names})
    # a node outside one tree is only worth a word when it is in no other tree
    forest.outside = {tree: kept for tree, names in forest.outside.items()
                      if (kept := [n for n in names if n not in owner])}
    return forest


def _with_crossing(nodes: Sequence[Node], main: Mapping[tuple[str, ...], list[str]],
                   crossing: Mapping[tuple[str, ...], list[str]],
                   takes: Callable[[str, Node], bool] | None) -> Forest:
    """The forest of the ``main`` trees (subtrees even when there is one, so that each
    constraint keeps to its Topology's nodes) and each ``crossing`` tree on its own."""
    forest = _forest(nodes, main, takes)
    for levels, names in crossing.items():
        members = [n for n in _picked(nodes, names, takes)
                   if all(key in n.labels for key in levels)]
        forest.crossing[names[0]] = _subtree(names[0], members, levels)
        forest.tree_of.update({name: names[0] for name in names})
        forest.within.update({name: names[0] for name in names})
    return forest


def _picked(nodes: Sequence[Node], names: Sequence[str],
            takes: Callable[[str, Node], bool] | None) -> list[Node]:
    """The nodes one of the Topologies ``names`` selects."""
    return [n for n in nodes if takes is None or any(takes(t, n) for t in names)]


def _split_crossing(nodes: Sequence[Node], trees: dict[tuple[str, ...], list[str]],
                    takes: Callable[[str, Node], bool] | None,
                    ) -> tuple[dict[tuple[str, ...], list[str]], dict[tuple[str, ...], list[str]]]:
    """(the trees of the forest, the crossing ones): in order, a tree joins the forest when it
    shares no node with the trees already in it."""
    main: dict[tuple[str, ...], list[str]] = {}
    crossing: dict[tuple[str, ...], list[str]] = {}
    held: set[str] = set()
    for levels, names in trees.items():
        mine = {n.name for n in _picked(nodes, names, takes)
                if all(key in n.labels for key in levels)}
        if main and mine & held:
            crossing[levels] = names
            continue
        main[levels] = names
        held |= mine
    return main, crossing


def _subtree(tree: str, nodes: Sequence[Node], levels: Sequence[str]) -> list[HyperNode]:
    """The domains of one tree, named ``<tree>:<path>``, under a HyperNode named ``tree``."""
    hypernodes = hypernodes_from_labels(
        nodes,
        [LabelLevel(key, f"{tree}{TREE_SEPARATOR}{key}") for key in levels],
        identity="path",
        missing="skip",
        name=lambda domain: f"{tree}{TREE_SEPARATOR}{domain_name(domain.path)}",
        hostname_level=True,
    )
    top = [hn.name for hn in hypernodes if hn.tier == len(levels)]
    members = [Member.exact(name, "HyperNode") for name in top]
    return [*hypernodes, HyperNode(name=tree, tier=len(levels) + 1, members=members)]
