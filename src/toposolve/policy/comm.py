"""Rank order that follows the network (docs/ranks.md).

A job's ranks form TP rings, PP chains and DP rings (:mod:`toposolve.core.parallelism`); its pods
hold consecutive blocks of ranks. This module measures, for one placement and one assignment of
rank blocks to pods, how those edges cross the HyperNode tree, and builds the assignment that
follows a depth-first traversal of the tree.

The *span* of an edge (or of a group of ranks) is the tier of the lowest HyperNode holding the
nodes of both ends (of every member); :data:`NODE_LOCAL` (-1) when they are on one node. An edge
*leaves a tier-t domain* when its span is above ``t``; a *cross-leaf* edge leaves a domain of the
lowest tier present.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from toposolve.core.parallelism import AXES, Layout
from toposolve.core.topology import Topology
from toposolve.policy.profiles import CommWeights

NODE_LOCAL = -1
KINDS = AXES  # edge classes: 0 tp, 1 pp, 2 dp
RING_KINDS = (1, 2)  # the edges the "ring" counts read: PP chains and DP rings


@dataclass(frozen=True)
class Edges:
    """The edges of a layout between rank blocks (edges inside one block left out)."""

    a: np.ndarray  # [E] block of one end
    b: np.ndarray  # [E] block of the other end
    kind: np.ndarray  # [E] index into KINDS
    dp_groups: np.ndarray  # [groups, dp] block of each member of each DP group
    pp_chains: np.ndarray  # [chains, pp] block of each stage of each pipeline


@dataclass(frozen=True)
class CommMetrics:
    """How one job's communication crosses the tree (see the module docstring).

    ``leaving`` maps each tier ``t`` below the root to the ring edges (PP and DP, counted per
    rank) that leave a tier-``t`` domain; ``largest_*_span`` is the largest span of one DP group
    or PP chain (None when the layout has none); ``cost`` is the weighted cost of every edge,
    TP included (:class:`~toposolve.policy.profiles.CommWeights`).
    """

    leaving: dict[int, int]
    cross_leaf_edges: int
    largest_dp_span: int | None
    largest_pp_span: int | None
    cost: float


def layout_edges(layout: Layout, per_pod: int) -> Edges:
    """TP rings, PP chains and DP rings of ``layout`` between blocks of ``per_pod`` ranks.

    A ring of ``n ≥ 2`` ranks has ``n`` edges (two between the same pair when ``n = 2``); a
    chain of ``n`` stages has ``n - 1``.
    """
    rank = np.arange(layout.world, dtype=np.int64)
    ends: list[tuple[np.ndarray, np.ndarray, int]] = []
    for k, axis in enumerate(KINDS):
        size, stride = layout.sizes[axis], layout.stride(axis)
        if size < 2:
            continue
        coord = (rank // stride) % size
        if axis == "pp":
            src = rank[coord < size - 1]
            dst = src + stride
        else:
            src = rank
            dst = rank + stride * ((coord + 1) % size - coord)
        ends.append((src // per_pod, dst // per_pod, k))
    a = np.concatenate([e[0] for e in ends]) if ends else np.zeros(0, np.int64)
    b = np.concatenate([e[1] for e in ends]) if ends else np.zeros(0, np.int64)
    kind = np.concatenate([np.full(len(e[0]), e[2]) for e in ends]) if ends else a.copy()
    apart = a != b
    return Edges(a[apart], b[apart], kind[apart], _groups(layout, "dp", rank) // per_pod,
                 _groups(layout, "pp", rank) // per_pod)


def _groups(layout: Layout, axis: str, rank: np.ndarray) -> np.ndarray:
    """[groups, size] ranks of each group along ``axis`` (none when its size is 1)."""
    size, stride = layout.sizes[axis], layout.stride(axis)
    if size < 2:
        return np.zeros((0, size), dtype=np.int64)
    base = rank[(rank // stride) % size == 0]
    return base[:, None] + stride * np.arange(size, dtype=np.int64)[None, :]


def group_components(groups: np.ndarray, blocks: int) -> np.ndarray:
    """[blocks] component label of each rank block: blocks sharing a group (a row of ``groups``,
    e.g. :attr:`Edges.dp_groups`) are joined, transitively; a label is its component's lowest
    block. With one TP group per pod the DP components are the DP groups themselves; with several
    TP groups per pod, or TP groups split over pods, a component is the set of pods that must
    share a domain for every group in it to stay inside that domain (docs/ranks.md, section 6b).
    """
    parent = list(range(blocks))

    def root(b: int) -> int:
        while parent[b] != b:
            parent[b] = parent[parent[b]]
            b = parent[b]
        return b

    for row in np.unique(groups, axis=0).tolist() if groups.size else []:
        first = root(row[0])
        for b in row[1:]:
            other = root(b)
            if other != first:  # the lower root stays the label
                first, other = min(first, other), max(first, other)
                parent[other] = first
    return np.array([root(b) for b in range(blocks)], dtype=np.int64)


def pair_spans(topo: Topology, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """[E] span of each pair of nodes ``x[e]``, ``y[e]`` (:data:`NODE_LOCAL` for one node)."""
    if len(x) == 0:
        return np.zeros(0, dtype=np.int64)
    table = topo.node_at_tier
    tx = table[x]
    same = (tx == table[y]) & (tx >= 0)  # the root's column is always True
    return np.where(x == y, NODE_LOCAL, np.argmax(same, axis=1))


def group_spans(topo: Topology, nodes: np.ndarray) -> np.ndarray:
    """[G] span of each row of ``nodes`` ([G, k] node indices)."""
    if nodes.size == 0:
        return np.zeros(len(nodes), dtype=np.int64)
    t = topo.node_at_tier[nodes]  # [G, k, tiers]
    low, high = t.min(axis=1), t.max(axis=1)
    span = np.argmax((low == high) & (low >= 0), axis=1)
    return np.where(nodes.min(axis=1) == nodes.max(axis=1), NODE_LOCAL, span)


def measure(topo: Topology, node_of_block: np.ndarray, edges: Edges,
            weights: CommWeights | None = None) -> CommMetrics:
    """The :class:`CommMetrics` of one job.

    Parameters
    ----------
    topo
        The tree.
    node_of_block
        [blocks] node index of the pod holding each rank block.
    edges
        :func:`layout_edges` of the job's layout.
    weights
        The cost model (default: :class:`CommWeights`' defaults).
    """
    weights = weights or CommWeights()
    span = pair_spans(topo, node_of_block[edges.a], node_of_block[edges.b])
    ring = np.isin(edges.kind, RING_KINDS)
    tiers = sorted({int(t) for t in topo.tier.tolist()} - {topo.max_tier})
    leaving = {t: int((span[ring] > t).sum()) for t in tiers}
    kind_weight = np.array([weights.tp, weights.pp, weights.dp], dtype=float)[edges.kind]
    factor = np.where(span == NODE_LOCAL, 0.0,
                      weights.tier_factor ** (span - topo.min_tier).astype(float))
    return CommMetrics(
        leaving=leaving,
        cross_leaf_edges=int((span[ring] > topo.min_tier).sum()),
        largest_dp_span=_largest(group_spans(topo, node_of_block[edges.dp_groups])),
        largest_pp_span=_largest(group_spans(topo, node_of_block[edges.pp_chains])),
        cost=float((kind_weight * factor).sum()),
    )


def _largest(spans: np.ndarray) -> int | None:
    return int(spans.max()) if len(spans) else None


@lru_cache(maxsize=8)
def dfs_keys(topo: Topology) -> np.ndarray:
    """[N] each node's position key in the depth-first traversal of the tree.

    The traversal starts at the root and visits a HyperNode's own nodes (by node index) before
    its child HyperNodes, children in index order (by tier, then name). Sorting nodes by the key
    lists every HyperNode's nodes as one consecutive run.
    """
    pre = np.empty(len(topo.names), dtype=np.int64)
    stack, k = [topo.root], 0
    while stack:
        h = stack.pop()
        pre[h] = k
        k += 1
        stack.extend(reversed(topo.children[h]))
    n = len(topo.node_names)
    return pre[topo.node_home] * max(1, n) + np.arange(n, dtype=np.int64)


def dfs_order(topo: Topology, nodes: np.ndarray) -> np.ndarray:
    """Indices of ``nodes`` (pods' node indices) in depth-first order, ties by position."""
    return np.lexsort((np.arange(len(nodes)), dfs_keys(topo)[nodes]))
