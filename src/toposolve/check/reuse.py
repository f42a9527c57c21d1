"""What the checker derives from the cluster alone, derived once while a caller promises that
the cluster does not change.

A replay checks hundreds of plans on instances that share one list of nodes and one list of
HyperNodes. Inside :func:`fixed_cluster`, an instance whose ``nodes`` and ``hypernodes`` are
those very list objects gets the HyperNode tree and the node index built for the first such
instance; any other instance is indexed from scratch as always. The checker still derives both
itself, from the instance model (nothing comes from an engine).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from toposolve.check.tree import HyperNodeTree, build_tree
from toposolve.core.errors import InputError
from toposolve.core.instance import HyperNode, Instance, Node


@dataclass
class _Fixed:
    nodes: Sequence[Node]
    hypernodes: Sequence[HyperNode]
    parts: tuple[HyperNodeTree, dict[str, Node]] | None = field(default=None)


_FIXED: ContextVar[_Fixed | None] = ContextVar("toposolve_checker_fixed_cluster", default=None)


@contextmanager
def fixed_cluster(nodes: Sequence[Node], hypernodes: Sequence[HyperNode]) -> Iterator[None]:
    """Within the block, derive the tree and node index of instances on exactly these lists
    once. The caller promises not to change the lists nor the objects in them meanwhile."""
    token = _FIXED.set(_Fixed(nodes, hypernodes))
    try:
        yield
    finally:
        _FIXED.reset(token)


def node_index(instance: Instance) -> dict[str, Node]:
    """Nodes by name; :class:`InputError` on a duplicate name."""
    nodes: dict[str, Node] = {}
    for node in instance.nodes:
        if node.name in nodes:
            raise InputError("duplicate node", file=instance.source, obj=f"Node/{node.name}")
        nodes[node.name] = node
    return nodes


def cluster_parts(instance: Instance) -> tuple[HyperNodeTree, dict[str, Node]]:
    """The instance's HyperNode tree and node index (shared inside :func:`fixed_cluster`)."""
    fixed = _FIXED.get()
    shared = (
        fixed is not None
        and instance.nodes is fixed.nodes
        and instance.hypernodes is fixed.hypernodes
    )
    if shared and fixed.parts is not None:
        return fixed.parts
    nodes = node_index(instance)  # a duplicate node is reported before any tree error
    parts = (build_tree(instance), nodes)
    if shared:
        fixed.parts = parts
    return parts
