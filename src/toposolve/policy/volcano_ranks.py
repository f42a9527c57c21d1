"""Volcano's rank-order proposal as a rank assignment for a given placement (docs/ranks.md).

Volcano PR #4312 (volcano-sh/volcano@13455a8a, re-opened as #4628) schedules a job's tasks in
rank order and scores each task's nodes: the lowest common HyperNode with the job's allocated
HyperNode first, then the leaf HyperNode holding most of the job's tasks, then the lowest node
IP; in hard mode by the lowest IP alone. Here the nodes are given (any engine's placement) and
the rule decides, rank block by rank block, which of the job's placed pods takes the block.
"""

from __future__ import annotations

import numpy as np

from toposolve.core.topology import Topology

BASE_SCORE = 100.0


def _lca_scores(topo: Topology, leaves: np.ndarray, allocated: int) -> np.ndarray:
    """Volcano's ``networkTopologyAwareScore`` of each leaf against the job's allocated
    HyperNode: 100 for the same HyperNode, else ``100·(maxTier − t)/(maxTier − minTier)`` for
    the tier ``t`` of their lowest common real HyperNode, 0 without one (or one tier only)."""
    real = topo.tier[:-1]
    low, high = (int(real.min()), int(real.max())) if len(real) else (0, 0)
    chain = np.full(topo.max_tier + 1, -2, dtype=np.int64)
    for h in topo.ancestors(allocated):
        chain[topo.tier[h]] = h
    scores = np.zeros(len(leaves))
    for i, leaf in enumerate(leaves.tolist()):
        if leaf < 0:
            continue
        if leaf == allocated:
            scores[i] = BASE_SCORE
            continue
        lca = next((h for h in topo.ancestors(leaf) if chain[topo.tier[h]] == h), topo.root)
        if lca != topo.root and high > low:
            scores[i] = BASE_SCORE * (high - int(topo.tier[lca])) / (high - low)
    return scores


def volcano_blocks(topo: Topology, nodes: np.ndarray, hard: bool) -> np.ndarray:
    """``pod_of_block`` by Volcano's rule: block ``b`` (the ``b``-th task in rank order) takes,
    among the pods not taken yet, the best one by the rule in the module docstring.

    Parameters
    ----------
    topo
        The tree.
    nodes
        [P] node index of each of the job's pods (the slots the blocks are handed to).
    hard
        The job's network topology is hard (Volcano then scores nodes by IP alone).

    Returns
    -------
    numpy.ndarray
        [P] index into ``nodes`` of the pod holding each block. The node IP is not in the
        model: node index stands in for it (toposolve's generators list a leaf's nodes
        together, as the PR assumes a leaf's IPs are one contiguous range); ties after it go
        to the lowest pod index.
    """
    n = len(nodes)
    leaves, slot = np.unique(topo.node_leaf[nodes], return_inverse=True)
    in_leaf = np.zeros(len(leaves), dtype=np.int64)  # the job's blocks taken in each leaf
    scores: dict[int, np.ndarray] = {}  # allocated HyperNode -> score of each leaf
    free = np.ones(n, dtype=bool)
    allocated = -1
    out = np.empty(n, dtype=np.int64)
    for block in range(n):
        candidates = np.flatnonzero(free)
        keys = [candidates, nodes[candidates]]
        if not hard and allocated >= 0:
            if allocated not in scores:
                scores[allocated] = _lca_scores(topo, leaves, allocated)
            here = slot[candidates]
            keys += [-in_leaf[here], -scores[allocated][here]]
        pick = int(candidates[np.lexsort(keys)[0]])
        out[block] = pick
        free[pick] = False
        leaf = int(leaves[slot[pick]])
        if leaf >= 0:  # a node in no leaf HyperNode counts for none (Volcano finds none)
            in_leaf[slot[pick]] += 1
            allocated = leaf if allocated < 0 else topo.lca(allocated, leaf)
    return out
