"""``HyperNodeGradientForJobFn`` / ``ForSubJobFn``: candidate HyperNodes grouped by tier.

Rule (seed 000 and Volcano's ``hyperNodeGradientFn``): start from a search root, keep the root and
every HyperNode below it whose tier is ≤ the limit and that is eligible (its free resources can
hold the job's minimum, skipped once the job already has an allocated HyperNode), and return one
list per tier, tiers ascending. Inside a tier Volcano's order is a set iteration (unspecified);
toposolve orders by the tie rank (deterministic mode: by (tier, name)).
"""

from __future__ import annotations

import numpy as np

from toposolve.core.topology import Topology


def search_root(topology: Topology, hn_ancestors: np.ndarray, start: int, allocated: int | None,
                limit: int) -> int | None:
    """Where the BFS starts: ``start``, or — for a job that already has an allocated HyperNode —
    the highest ancestor of that HyperNode within the tier limit (``None`` if it conflicts)."""
    if allocated is None:
        return start
    chain = [h for h in hn_ancestors[allocated] if h >= 0]
    allowed = [h for h in chain if topology.tier[h] <= limit]
    if not allowed:
        return None
    top = allowed[-1]
    if start in hn_ancestors[top]:
        return top  # the allowed subtree lies inside the start
    if top in hn_ancestors[start]:
        return start
    return None


def hypernode_gradients(topology: Topology, subtree: np.ndarray, limit: int, eligible: np.ndarray,
                        rank: np.ndarray) -> list[list[int]]:
    """Gradients among ``subtree`` (a search root and everything below it): one list per tier
    ≤ ``limit``, ascending; ``eligible`` is a mask over ``subtree``."""
    picked = subtree[eligible & (topology.tier[subtree] <= limit)]
    if picked.size == 0:
        return []
    order = np.lexsort((rank[picked], topology.tier[picked]))
    picked = picked[order]
    tiers = topology.tier[picked]
    cuts = np.flatnonzero(np.diff(tiers)) + 1
    return [list(map(int, chunk)) for chunk in np.split(picked, cuts)]
