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

from toposolve.core.instance import HyperNode, Node
from toposolve.core.label_levels import LabelLevel, hypernodes_from_labels

PATH_SEPARATOR = "/"


def domain_name(values: Sequence[str]) -> str:
    """HyperNode name of the domain with label path ``values``."""
    return PATH_SEPARATOR.join(values)


def hypernodes_from_levels(
    nodes: Sequence[Node], levels: Sequence[str]
) -> tuple[list[HyperNode], list[str]]:
    """HyperNodes of the label-level tree and the names of nodes outside it (the common
    builder, :func:`toposolve.core.label_levels.hypernodes_from_labels`, with path identity)."""
    outside = [n.name for n in nodes if any(key not in n.labels for key in levels)]
    hypernodes = hypernodes_from_labels(
        nodes,
        [LabelLevel(key) for key in levels],
        identity="path",
        missing="skip",
        name=lambda domain: domain_name(domain.path),
        hostname_level=True,
    )
    return hypernodes, outside
