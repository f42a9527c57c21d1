"""A lower bound on the end-row boundary table of the grid ``H`` for any number of stages.

:func:`toposolve.policy.edge_floor.end_row_boundary` computes ``φ(n, e)`` exactly by a dynamic
programme over the ``2^pp`` stage subsets of a replica (``pp ≤ 4``). :func:`column_bound` bounds
it from below for every ``pp`` from each replica's *column type* ``(k, e)`` alone — ``e ∈
{0, 1, 2}`` of its vertices in the end rows (stages ``0`` and ``pp − 1``), ``k`` inside: the
fewest PP edges leaving such a column, and at least ``|Δe| + |Δk|`` DP edges between two
neighbouring columns, whose cyclic sum is at least twice the range of each (docs/ranks.md,
section 7c).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np


def column_pp_boundary(pp: int, inner: int, ends: int) -> int:
    """The fewest PP edges leaving a set of stages of one replica with ``ends`` of its two end
    stages and ``inner`` of the ``pp − 2`` others: 0 for none or all, 1 with one end (a prefix),
    else 2 (an interval inside, or both ends and not every stage)."""
    if (inner == 0 and ends == 0) or (inner == pp - 2 and ends == 2):
        return 0
    return 1 if ends == 1 else 2


@lru_cache(maxsize=64)
def column_bound(pp: int, dp: int) -> np.ndarray:
    """``[n, e]`` a lower bound on the fewest ``H``-edges leaving a set of ``n`` vertices of
    the ``pp × dp`` grid with ``e`` in the end rows (``pp ≥ 3``); ``big = 4·pp·dp + 4`` where no
    set has those counts.

    Over every choice of column types ``(k_i, e_i)``: ``Σ_i`` :func:`column_pp_boundary` plus,
    for ``dp ≥ 2``, ``2(max e − min e) + 2(max k − min k)``; the least over the boxes
    ``[e_lo, e_hi] × [k_lo, k_hi]`` of the box's range term and the cheapest ``dp`` column
    types inside it (a knapsack in ``(n, e)``).
    """
    big = 4 * pp * dp + 4
    shape = (pp * dp + 1, 2 * dp + 1)
    types = [(k, e, column_pp_boundary(pp, k, e)) for k in range(pp - 1) for e in range(3)]
    best = np.full(shape, big, dtype=np.int64)
    boxes = [((0, 2), (0, pp - 2))] if dp == 1 else [
        ((el, eh), (kl, kh)) for el in range(3) for eh in range(el, 3)
        for kl in range(pp - 1) for kh in range(kl, pp - 1)]
    for (el, eh), (kl, kh) in boxes:
        inside = [(k + e, e, c) for k, e, c in types if el <= e <= eh and kl <= k <= kh]
        table = np.full(shape, big, dtype=np.int64)
        table[0, 0] = 0
        for _ in range(dp):  # dp columns, each one type of the box
            step = np.full(shape, big, dtype=np.int64)
            for h, e, c in inside:
                np.minimum(step[h:, e:], table[:shape[0] - h, :shape[1] - e] + c,
                           out=step[h:, e:])
            table = step
        ranges = 0 if dp == 1 else 2 * (eh - el) + 2 * (kh - kl)
        best = np.minimum(best, table + ranges)
    return np.minimum(best, big)
