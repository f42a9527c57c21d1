"""An instance's constraint trees (KAI or Kueue Topologies crossing the main tree) as the level
keys of their own Topologies, for the KAI and Kueue writers; the main tree likewise when it was
read from one.

A constraint tree read from a KAI or Kueue Topology names each tier ``<tree>:<nodeLabel>``
(``HyperNode.tier_name``) and its nodes keep those labels, so the Topology is written back with
the same levels. A tree whose tiers do not name a label every one of its nodes carries cannot be
written that way: it is left out with one warning line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from toposolve.core.instance import ConstraintTree, HyperNode, Instance, Node
from toposolve.core.label_levels import HOSTNAME_LABEL
from toposolve.core.topology import build_topology
from toposolve.formats.k8s.levels import Levels


def tree_levels(tree: ConstraintTree, nodes: Sequence[Node]) -> Levels | None:
    """The levels of one constraint tree, None when its tiers are not node labels.

    Parameters
    ----------
    tree
        The constraint tree.
    nodes
        The nodes as written (their labels).

    Returns
    -------
    Levels or None
        Keys top first; the tree's root tier (no ``tier_name``) has no key.
    """
    prefix = f"{tree.name}:"
    keys: dict[int, str] = {}
    for h in tree.hypernodes:
        if h.tier_name is None:
            continue
        key = h.tier_name.removeprefix(prefix)
        if keys.setdefault(h.tier, key) != key:
            return None  # two labels on one tier: not a Topology's level
    members = {m.selector.exact_match for h in tree.hypernodes for m in h.members
               if m.type == "Node"}
    labelled = {n.name: n.labels for n in nodes}
    if not keys or any(name not in labelled or any(k not in labelled[name] for k in keys.values())
                       for name in members):
        return None
    order = sorted(keys, reverse=True)
    ordered = [keys[t] for t in order]
    if HOSTNAME_LABEL in ordered[:-1] or len(set(ordered)) != len(ordered):
        return None
    return Levels(ordered, dict(keys))


def main_tops(instance: Instance) -> list[HyperNode]:
    """The main tree's top HyperNodes (those the virtual root holds).

    Parameters
    ----------
    instance
        The instance being written.

    Returns
    -------
    list of HyperNode
        In the instance's order.
    """
    topo = build_topology(instance.nodes, instance.hypernodes, source=instance.source)
    root = len(topo.names) - 1
    top = {topo.names[h] for h in range(root) if int(topo.parent[h]) == root}
    return [h for h in instance.hypernodes if h.name in top]


def own_main_levels(instance: Instance) -> tuple[str, Levels, list[Node]] | None:
    """The main tree as the Topology it was read from: when its one top HyperNode is a
    Topology's root (no ``tier_name``, as the KAI and Kueue readers name a tree crossed by
    another) and its tiers are labels its nodes carry, that Topology's name, levels and the nodes
    with their hostname labels; None otherwise (the writer relabels the tree).

    Parameters
    ----------
    instance
        The instance being written.

    Returns
    -------
    tuple of str, Levels and list of Node, or None
    """
    tops = main_tops(instance)
    if len(tops) != 1 or tops[0].tier_name is not None:
        return None
    nodes = [n.model_copy(update={"labels": {**n.labels, HOSTNAME_LABEL: n.name}})
             for n in instance.nodes]
    tree = ConstraintTree(name=tops[0].name, hypernodes=instance.hypernodes)
    levels = tree_levels(tree, nodes)
    return None if levels is None else (tree.name, levels, nodes)


def constraint_levels(instance: Instance, nodes: Sequence[Node],
                      warn: Callable[[str], None]) -> dict[str, Levels]:
    """The levels of every constraint tree that can be written as its own Topology.

    Parameters
    ----------
    instance
        The instance being written.
    nodes
        The nodes as written.
    warn
        Called with one line per tree left out.

    Returns
    -------
    dict of str to Levels
        Tree name → its levels, in the instance's order.
    """
    out: dict[str, Levels] = {}
    for tree in instance.constraint_trees:
        levels = tree_levels(tree, nodes)
        if levels is None:
            warn(f"constraint tree {tree.name!r} is left out (its tiers are not node labels "
                 "every node of it carries); constraints naming it use the main Topology")
            continue
        out[tree.name] = levels
    return out
