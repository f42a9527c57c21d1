"""Rank orders that list a job's leaf cells in another order than the depth-first one.

The ranker's candidates (:mod:`toposolve.policy.ranks`) hand the depth-first pods the rank
blocks in a fixed sequence, so which cells share a band of stages or a pipeline depends on the
order of the cells in the tree. For the cross-leaf ring edges only the cell sizes matter: for a
job over a few leaves, :func:`cell_permutations` tries every order of its leaf runs under each
candidate and keeps, per candidate, the one with the fewest cross-leaf ring edges (counted on the
pods' cells, fast); the ranker then measures it exactly like the others (docs/ranks.md, 7b).
"""

from __future__ import annotations

import itertools

import numpy as np

from toposolve.policy.comm import RING_KINDS, Edges

#: the most leaf cells whose orders are all tried (6! = 720 per candidate)
MOST_PERMUTED_CELLS = 6


def leaf_runs(leaf_of_seq: np.ndarray) -> list[np.ndarray]:
    """Positions of each run of equal leaf cells along a depth-first sequence."""
    change = np.flatnonzero(np.diff(leaf_of_seq)) + 1
    return np.split(np.arange(len(leaf_of_seq)), change)


def cell_permutations(leaf_of_seq: np.ndarray, orders: list[tuple[str, np.ndarray]],
                      edges: Edges) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Per candidate ``(name, order)``, the order of the leaf runs of ``leaf_of_seq`` (the leaf
    cell of each depth-first pod) with the fewest ring edges between cells, when it has fewer
    than the depth-first one.

    Returns
    -------
    list
        ``(name, order, positions)``: the depth-first pods reordered by ``positions`` (a
        permutation of the sequence) take the blocks in ``order``. Empty for one run or more
        than :data:`MOST_PERMUTED_CELLS`. Ties: the first permutation in lexicographic order.
    """
    runs = leaf_runs(leaf_of_seq)
    if not 2 <= len(runs) <= MOST_PERMUTED_CELLS:
        return []
    ring = np.isin(edges.kind, RING_KINDS)
    # one row per pair of blocks, weighted by its ring edges (one per TP coordinate)
    pairs, weight = np.unique(np.stack([edges.a[ring], edges.b[ring]], axis=1), axis=0,
                              return_counts=True)
    a, b = pairs[:, 0], pairs[:, 1]
    perms = list(itertools.permutations(range(len(runs))))
    sizes = np.array([len(r) for r in runs])
    # [perms, positions]: the cell (run) at each position once the runs are listed in that order
    cell_at = np.stack([np.repeat(np.array(p), sizes[list(p)]) for p in perms])
    out = []
    for name, order in orders:
        position = np.empty(len(order), dtype=np.int64)
        position[order] = np.arange(len(order))  # block -> position in the sequence
        cut = (cell_at[:, position[a]] != cell_at[:, position[b]]) @ weight
        best = int(np.argmin(cut))  # the first of the fewest
        if cut[best] < cut[0]:
            out.append((f"{name}, leaves reordered", order,
                        np.concatenate([runs[i] for i in perms[best]])))
    return out
