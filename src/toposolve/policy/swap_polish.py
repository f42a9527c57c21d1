"""Pairwise swaps that lower a rank order's ring edges between leaves (docs/ranks.md, section 8b).

The candidate orders follow a few fixed shapes; on three or more leaves of one domain the best
split of the grid can be another shape (``tp=8,dp=4,pp=4`` over leaves of 5, 5 and 6 pods: every
candidate cuts 12 ``H``-edges, the best order 11). :func:`polish` swaps the pods of two blocks in
different leaves of the same capped cell while that lowers the ring edges between leaves (the
swap lowering them most first), so every block keeps its capped cell: DP groups stay where the
order kept them.
"""

from __future__ import annotations

import numpy as np

from toposolve.policy.comm import RING_KINDS, Edges

#: the most blocks polished (the swap table is blocks × blocks per step)
MOST_POLISHED_BLOCKS = 256


def polish(pod_of_block: np.ndarray, leaf_of_pod: np.ndarray, capped_of_pod: np.ndarray,
           edges: Edges) -> np.ndarray | None:
    """``pod_of_block`` with pods of two blocks swapped, repeatedly, while a swap lowers the
    ring edges between leaves; None when none does or past :data:`MOST_POLISHED_BLOCKS`.

    Parameters
    ----------
    pod_of_block
        [blocks] pod holding each block (an index into ``leaf_of_pod``).
    leaf_of_pod, capped_of_pod
        [pods] the leaf cell and the capped cell (swaps stay inside one) of each pod.
    edges
        The layout's edges between blocks.

    Ties: the swap of the lowest pair of blocks (row-major) among those lowering the most.
    """
    n = len(pod_of_block)
    if n > MOST_POLISHED_BLOCKS or n < 3:
        return None
    ring = np.isin(edges.kind, RING_KINDS)
    weight = np.zeros((n, n), dtype=np.int64)
    np.add.at(weight, (edges.a[ring], edges.b[ring]), 1)
    weight = weight + weight.T
    pods = pod_of_block.copy()
    _, leaf = np.unique(leaf_of_pod[pods], return_inverse=True)
    capped = capped_of_pod[pods]
    apart = (leaf[:, None] != leaf[None, :]) & (capped[:, None] == capped[None, :])
    changed = False
    to_leaf = weight @ np.eye(leaf.max() + 1, dtype=np.int64)[leaf]  # [block, leaf] weights
    for _ in range(n * n):
        own = to_leaf[np.arange(n), leaf]
        cross = to_leaf[:, leaf]  # [u, v]: u's weight into v's leaf
        # edges between leaves after swapping u and v, less before (u–v stays cut)
        delta = own[:, None] - cross + own[None, :] - cross.T + 2 * weight
        delta = np.where(apart, delta, 0)
        best = int(np.argmin(delta))
        if delta.flat[best] >= 0:
            break
        u, v = divmod(best, n)
        lu, lv = leaf[u], leaf[v]
        to_leaf[:, lu] += weight[:, v] - weight[:, u]
        to_leaf[:, lv] += weight[:, u] - weight[:, v]
        leaf[u], leaf[v] = lv, lu
        pods[u], pods[v] = pods[v], pods[u]
        apart = (leaf[:, None] != leaf[None, :]) & (capped[:, None] == capped[None, :])
        changed = True
    return pods if changed else None
