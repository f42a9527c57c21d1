"""Rank orders that deal the pipeline stages to the capped cells, then order each cell alone.

The span floor's construction (docs/ranks.md, 8b): with one TP group per pod a DP group
is one stage over the replicas, so an order keeping DP groups inside the cells of a level deals
whole stages to the cells. Dealt in runs of consecutive stages, cells in depth-first order, the
PP edges between cells are ``dp`` per cell past the first whatever the order inside; the edges
between the leaves of a cell then depend only on how the cell's own ``r × dp`` grid is split
over its leaves, so :func:`dealt_orders` picks, per cell, the order of the sub-layout (``pp =
r``) with the fewest ring edges between its leaves (leaf runs reordered too, up to a few).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from toposolve.core.parallelism import Layout
from toposolve.policy.cell_orders import cell_permutations, leaf_runs
from toposolve.policy.comm import RING_KINDS, layout_edges

Orders = list[tuple[str, np.ndarray]]


def dealt_orders(capped_of_seq: np.ndarray, leaf_of_seq: np.ndarray, layout: Layout,
                 per_pod: int, inner: Callable[[Layout, int, int], Orders],
                 name: str) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """The stage-dealt order of a job whose depth-first pods lie in capped cells
    ``capped_of_seq`` and leaves ``leaf_of_seq``.

    Parameters
    ----------
    capped_of_seq, leaf_of_seq
        The capped cell and the leaf cell of each depth-first pod.
    layout, per_pod
        The job's layout and ranks per pod.
    inner
        Candidate orders of a sub-layout, ``inner(layout, per_pod, blocks)``
        (:func:`toposolve.policy.ranks.candidate_orders`).
    name
        The candidate's name.

    Returns
    -------
    list
        ``[(name, order, positions)]`` as :func:`~toposolve.policy.cell_orders.
        cell_permutations`; empty unless one TP group per pod, ``pp, dp ≥ 2``, the pods over
        two or more capped cells each holding whole stages (a multiple of ``dp`` pods), TP the
        fastest axis.
    """
    tp, pp, dp = (layout.sizes[a] for a in ("tp", "pp", "dp"))
    change = np.flatnonzero(np.diff(capped_of_seq)) + 1
    runs = np.split(np.arange(len(capped_of_seq)), change)
    if (per_pod != tp or layout.order[0] != "tp" or pp < 2 or dp < 2 or len(runs) < 2
            or any(len(r) % dp for r in runs)):
        return []
    order = np.empty(len(capped_of_seq), dtype=np.int64)
    positions = np.empty_like(order)
    stage, start = 0, 0
    for run in runs:
        stages = len(run) // dp
        sub = dataclasses.replace(layout, sizes={**layout.sizes, "pp": stages})
        sub_order, sub_positions = _best_inside(leaf_of_seq[run], sub, per_pod, inner)
        # sub-block of (stage s, replica i) -> the job's block of (stage + s, replica i)
        coord = _stage_replica(sub, per_pod, len(run))
        block = ((stage + coord[0]) * layout.stride("pp") + coord[1] * layout.stride("dp"))
        order[start:start + len(run)] = block[sub_order] // per_pod
        positions[start:start + len(run)] = run[sub_positions]
        stage, start = stage + stages, start + len(run)
    return [(name, order, positions)]


def _stage_replica(layout: Layout, per_pod: int, blocks: int) -> tuple[np.ndarray, np.ndarray]:
    """[blocks] stage and replica of each block of ``layout``."""
    first = np.arange(blocks, dtype=np.int64) * per_pod
    return tuple((first // layout.stride(a)) % layout.sizes[a] for a in ("pp", "dp"))


def _best_inside(leaf_of_seq: np.ndarray, sub: Layout, per_pod: int,
                 inner: Callable[[Layout, int, int], Orders]) -> tuple[np.ndarray, np.ndarray]:
    """The order of ``sub``'s blocks (and of the cell's pods) with the fewest ring edges
    between the cell's leaves: ``inner``'s candidates, their leaf runs reordered, and
    :func:`_whole_stage_leaves`; ties: the first."""
    blocks = len(leaf_of_seq)
    edges = layout_edges(sub, per_pod)
    ring = np.isin(edges.kind, RING_KINDS)
    a, b = edges.a[ring], edges.b[ring]
    identity = np.arange(blocks, dtype=np.int64)
    orders = inner(sub, per_pod, blocks)
    tried = [(order, identity) for _, order in orders]
    tried += [(order, pos) for _, order, pos in cell_permutations(leaf_of_seq, orders, edges)]
    tried += _whole_stage_leaves(leaf_of_seq, sub, per_pod, inner)
    best = None
    for order, pos in tried:
        position = np.empty(blocks, dtype=np.int64)
        position[order] = identity  # block -> its place in the (reordered) sequence
        leaf = leaf_of_seq[pos]
        cut = int((leaf[position[a]] != leaf[position[b]]).sum())
        if best is None or cut < best[0]:
            best = (cut, order, pos)
    assert best is not None
    return best[1], best[2]


def _whole_stage_leaves(leaf_of_seq: np.ndarray, sub: Layout, per_pod: int,
                        inner: Callable[[Layout, int, int], Orders]
                        ) -> list[tuple[np.ndarray, np.ndarray]]:
    """The leaves holding whole stages take the last stages one stage after another, the
    other leaves the first stages in their best order (:func:`_best_inside` of the smaller
    grid): each whole leaf then cuts only the PP edges at its stages' ends. Empty unless the
    cell has leaves of both kinds."""
    dp = sub.sizes["dp"]
    runs = leaf_runs(leaf_of_seq)
    whole = [r for r in runs if len(r) % dp == 0]
    rest = [r for r in runs if len(r) % dp]
    if not whole or not rest:
        return []
    rest_pods, whole_pods = np.concatenate(rest), np.concatenate(whole)
    rows = len(rest_pods) // dp
    smaller = dataclasses.replace(sub, sizes={**sub.sizes, "pp": rows})
    rest_order, rest_pos = _best_inside(leaf_of_seq[rest_pods], smaller, per_pod, inner)
    stage, replica = _stage_replica(smaller, per_pod, len(rest_pods))
    k = np.arange(len(whole_pods), dtype=np.int64)
    stage = np.concatenate([stage[rest_order], rows + k // dp])
    replica = np.concatenate([replica[rest_order], k % dp])
    order = (stage * sub.stride("pp") + replica * sub.stride("dp")) // per_pod
    return [(order, np.concatenate([rest_pods[rest_pos], whole_pods]))]
