"""Levels of node labels → a HyperNode tree (Kueue and KAI ``Topology`` objects).

A ``Topology`` lists node-label keys, top level first. A domain at level ``i`` is identified by
its **label path**, the values of levels ``0..i`` (values need not be unique across parents:
rack ``r1`` of block ``b1`` and rack ``r1`` of block ``b2`` are different domains). Each domain
becomes a HyperNode:

* name: the path values joined by ``/`` (label values cannot contain ``/``, so names are unique);
* tier: the lowest level is tier 1, the top level tier ``len(levels)``; ``tierName``: the label key;
* members: lowest-level HyperNodes hold their nodes (``exactMatch``), higher ones their children.

A node missing one of the level labels is outside the topology: it is left under the virtual root
and reported (Kueue and KAI both leave such nodes out of topology-constrained placement).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model.instance import HyperNode, Member, MemberSelector, Node

PATH_SEPARATOR = "/"


def domain_name(values: Sequence[str]) -> str:
    """HyperNode name of the domain with label path ``values``."""
    return PATH_SEPARATOR.join(values)


def hypernodes_from_levels(
    nodes: Sequence[Node], levels: Sequence[str]
) -> tuple[list[HyperNode], list[str]]:
    """HyperNodes of the label-level tree and the names of nodes outside it."""
    depth = len(levels)
    children: dict[tuple[str, ...], list[str]] = {}  # domain path -> child HyperNode names
    leaf_nodes: dict[tuple[str, ...], list[str]] = {}  # lowest-level path -> node names
    outside: list[str] = []
    for node in nodes:
        values = [node.labels.get(key) for key in levels]
        if any(v is None for v in values):
            outside.append(node.name)
            continue
        path = tuple(values)  # type: ignore[arg-type]
        if path not in leaf_nodes:
            leaf_nodes[path] = []
            for i in range(depth - 1, 0, -1):  # register the path's ancestors once
                parent = path[:i]
                known = parent in children
                children.setdefault(parent, []).append(domain_name(path[: i + 1]))
                if known:
                    break
        leaf_nodes[path].append(node.name)

    def hypernode(path: tuple[str, ...], member_type: str, names: list[str]) -> HyperNode:
        return HyperNode(
            name=domain_name(path),
            tier=depth - len(path) + 1,
            tier_name=levels[len(path) - 1],
            members=[
                Member(type=member_type, selector=MemberSelector(exact_match=n)) for n in names
            ],
        )

    result = [hypernode(path, "Node", names) for path, names in leaf_nodes.items()]
    result += [hypernode(path, "HyperNode", names) for path, names in children.items()]
    return result, outside
