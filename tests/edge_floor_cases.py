"""Brute force for the edge floor tests (docs/ranks.md, section 7): the fewest ring edges
between cells over every rank order of a tiny job."""

from __future__ import annotations

import numpy as np

from toposolve.core.parallelism import parse_parallelism
from toposolve.policy.comm import RING_KINDS, layout_edges


def multiset_orders(sizes: list[int]) -> np.ndarray:
    """Every distinct sequence of cell labels with ``sizes[c]`` copies of ``c``."""
    out, left, prefix = [], list(sizes), []

    def extend():
        if len(prefix) == sum(sizes):
            out.append(list(prefix))
        for c, k in enumerate(left):
            if k:
                left[c] -= 1
                prefix.append(c)
                extend()
                prefix.pop()
                left[c] += 1
    extend()
    return np.array(out)


def brute_force(text: str, per_pod: int, sizes: list[int]) -> int:
    """The fewest ring edges between cells of ``sizes`` pods over every rank order."""
    layout = parse_parallelism(text)
    edges = layout_edges(layout, per_pod)
    ring = np.isin(edges.kind, RING_KINDS)
    a, b = edges.a[ring], edges.b[ring]
    orders = multiset_orders(sizes)
    return int((orders[:, a] != orders[:, b]).sum(axis=1).min())


def compositions(total: int):
    """Every multiset of cell sizes adding up to ``total`` (as non-increasing lists)."""
    def parts(left: int, most: int):
        if left == 0:
            yield []
        for first in range(min(left, most), 0, -1):
            for rest in parts(left - first, first):
                yield [first, *rest]
    return parts(total, total)


def brute_force_whole_tp(text: str, sizes: list[int]) -> int:
    """As :func:`brute_force` (one rank per pod) over the orders that keep every TP group's
    pods in one cell."""
    layout = parse_parallelism(text)
    tp, edges = layout.sizes["tp"], layout_edges(layout, 1)
    ring = np.isin(edges.kind, RING_KINDS)
    a, b = edges.a[ring], edges.b[ring]
    orders = np.repeat(multiset_orders([s // tp for s in sizes]), tp, axis=1)  # TP fastest
    return int((orders[:, a] != orders[:, b]).sum(axis=1).min())
