"""The edge floor: the fewest ring edges between cells any rank order reaches, from pod counts.

A job with a ``tp×pp×dp`` layout whose pods each hold part of one TP group (``per_pod`` divides
``tp``, TP the fastest axis) has, per TP piece, a copy of the grid ``H`` = ``pp`` stages × ``dp``
replicas (PP paths, DP rings); each ``H``-edge stands for ``per_pod`` ring edges. Given how many
of the job's pods each cell (leaf) holds, :func:`edge_floor` is a lower bound on the PP + DP
ring edges (per rank) between cells under *every* rank order: half the sum, over the cells, of
the fewest edges leaving a set of that many pods (:func:`part_boundary`, exact by compression:
docs/ranks.md, section 7). It is the exact minimum for two cells. With three or more cells
they compete for the two end rows of the pipelines; for 3 or more stages the floor couples the
cells' end-row vertices (:func:`end_row_table`: exact per cell for 3–4 stages, a per-column
bound beyond, :mod:`toposolve.policy.end_rows`), exact on every small case tested. The
``edge_floor`` objective stage is the per-cell sum over the cells of the lowest level
(:func:`edge_floor_value`; the coupled bound is not a sum of per-cell terms, so not the
stage's table).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from toposolve.core.parallelism import Layout, parse_parallelism
from toposolve.core.problem import Problem
from toposolve.policy.comm_stage import job_pods, level_tiers, node_cells, placed_cells
from toposolve.policy.end_rows import column_bound


@lru_cache(maxsize=256)
def grid_boundary(pp: int, dp: int) -> tuple[int, ...]:
    """``∂(n)`` for ``n = 0 … pp·dp``: the fewest edges of the ``pp × dp`` grid ``H`` (PP paths
    of ``pp`` stages, DP rings over ``dp`` replicas; two edges between a pair when ``dp = 2``,
    none when ``dp = 1``) leaving a set of ``n`` vertices.

    Every replica's part of an optimal set may be taken as a prefix of its stages (height
    ``h_i``), so ``∂ = Σ_i [0 < h_i < pp] + Σ_i |h_i − h_{i+1}|`` (cyclic), least when the heights
    are sorted around the ring: ``2(max − min)`` plus the partial replicas (section 7).
    """
    best = np.full(pp * dp + 1, 4 * pp * dp + 4, dtype=np.int64)
    partial = [int(0 < h < pp) for h in range(pp + 1)]
    for top in range(pp + 1):
        best[top * dp] = min(best[top * dp], dp * partial[top])  # every replica at one height
        for low in range(top if dp > 1 else 0):
            for at_top in range(1, dp):
                for at_low in range(1, dp - at_top + 1):
                    middle = dp - at_top - at_low  # heights strictly between: all partial
                    if middle and top - low < 2:
                        continue
                    cost = (2 * (top - low) + at_top * partial[top] + at_low * partial[low]
                            + middle)
                    base = top * at_top + low * at_low
                    lo, hi = base + middle * (low + 1), base + middle * (top - 1)
                    best[lo:hi + 1] = np.minimum(best[lo:hi + 1], cost)
    return tuple(int(v) for v in best)


#: the column DP of :func:`end_row_boundary` enumerates ``2^pp`` stage subsets per replica
MOST_END_ROW_STAGES = 4


@lru_cache(maxsize=64)
def end_row_boundary(pp: int, dp: int) -> np.ndarray | None:
    """``φ[n, e]``: the fewest edges of the grid ``H`` (as :func:`grid_boundary`) leaving a set
    of ``n`` vertices of which ``e`` lie in the two end rows (stages ``0`` and ``pp − 1``);
    a large value where no set has those counts. None for ``pp < 3`` (every vertex is in an end
    row) or ``pp >`` :data:`MOST_END_ROW_STAGES`.

    Exact: a dynamic programme over the replicas around the DP ring, every stage subset of each
    replica (a subset's PP boundary, end-row vertices, and ``|S_i Δ S_{i+1}|`` DP edges to the
    next), the first replica's subset kept to close the ring (section 7).
    """
    if pp < 3 or pp > MOST_END_ROW_STAGES:
        return None
    subsets = np.arange(1 << pp)
    bits = (subsets[:, None] >> np.arange(pp)[None, :]) & 1
    size, ends = bits.sum(axis=1), bits[:, 0] + bits[:, -1]
    inner = (bits[:, 1:] != bits[:, :-1]).sum(axis=1)
    diff = ((subsets[:, None] ^ subsets[None, :])[:, :, None] >> np.arange(pp)) & 1
    diff = diff.sum(axis=2)
    big = 4 * pp * dp + 4
    k_top, e_top = pp * dp + 1, 2 * dp + 1
    cost = np.full((len(subsets), len(subsets), k_top, e_top), big, dtype=np.int32)
    cost[subsets, subsets, size, ends] = inner  # [first, current, n, e]
    for _ in range(dp - 1):
        nxt = np.full_like(cost, big)
        for c in subsets.tolist():
            step = (cost + diff[None, :, c, None, None]).min(axis=1) + inner[c]
            nxt[:, c, size[c]:, ends[c]:] = step[:, :k_top - size[c], :e_top - ends[c]]
        cost = np.minimum(nxt, big)
    closed = cost + (diff[:, :, None, None] if dp > 1 else 0)
    return np.minimum(closed.min(axis=(0, 1)), big)


def supported(layout: Layout, per_pod: int) -> bool:
    """Whether :func:`part_boundary` covers the layout: TP the fastest axis and ``per_pod``
    dividing ``tp`` (pods hold a piece of one TP group each)."""
    tp = layout.sizes["tp"]
    return per_pod >= 1 and tp % per_pod == 0 and (tp == 1 or layout.order[0] == "tp")


@lru_cache(maxsize=256)
def part_boundary(text: str, per_pod: int, whole_tp: bool = False) -> tuple[int, ...] | None:
    """Per ``n = 0 … pods``: the fewest PP + DP ring edges (per rank) leaving a cell holding
    ``n`` of the job's pods, over every rank order; None when not :func:`supported`.

    The ``q = tp / per_pod`` copies of ``H`` (one per TP piece) share no ring edge, so the
    cell's pods split over them: a min-plus sum of :func:`grid_boundary`, times ``per_pod``.
    That lets a cell hold one piece of many TP groups (their other pieces elsewhere: TP edges
    across cells). ``whole_tp``: over the orders that keep every TP group inside one cell
    instead, ``tp · ∂(n / q)``; a count that is not a multiple of ``q`` (a TP group must be
    split there) is priced as the cheaper whole count next to it (not a bound there)."""
    layout = parse_parallelism(text)
    if not supported(layout, per_pod):
        return None
    grid = np.array(grid_boundary(layout.sizes["pp"], layout.sizes["dp"]), dtype=np.int64)
    q = layout.sizes["tp"] // per_pod
    if whole_tp:
        whole = [layout.sizes["tp"] * int(v) for v in grid]
        return tuple(whole[n // q] if n % q == 0 else min(whole[n // q], whole[n // q + 1])
                     for n in range(q * (len(grid) - 1) + 1))
    total = grid
    for _ in range(layout.sizes["tp"] // per_pod - 1):
        size = len(total) + len(grid) - 1
        nxt = np.full(size, np.iinfo(np.int64).max // 4, dtype=np.int64)
        for a, cost in enumerate(grid.tolist()):
            nxt[a:a + len(total)] = np.minimum(nxt[a:a + len(total)], total + cost)
        total = nxt
    return tuple(int(v) * per_pod for v in total)


#: no set has these counts (kept far from overflow through the min-plus sums)
NO_SET = np.iinfo(np.int64).max // 8


def min_plus(left: np.ndarray, right: np.ndarray,
             shape: tuple[int, ...] | None = None) -> np.ndarray:
    """``out[k] = min_a left[a] + right[k − a]`` (1-D) or over both axes (2-D); entries at or
    above :data:`NO_SET` stand for no set. ``shape``: keep only the first entries of each axis
    (the sums that can still matter)."""
    if left.size > right.size:
        left, right = right, left  # loop over the smaller operand's entries
    full = tuple(a + b - 1 for a, b in zip(left.shape, right.shape, strict=True))
    shape = full if shape is None else tuple(min(a, b) for a, b in zip(full, shape, strict=True))
    out = np.full(shape, NO_SET, dtype=np.int64)
    for index in zip(*np.nonzero(left < NO_SET), strict=True):
        if any(i >= s for i, s in zip(index, shape, strict=True)):
            continue
        window = tuple(slice(i, min(i + r, s))
                       for i, r, s in zip(index, right.shape, shape, strict=True))
        part = right[tuple(slice(0, w.stop - w.start) for w in window)]
        out[window] = np.minimum(out[window], part + left[index])
    return np.minimum(out, NO_SET)


@lru_cache(maxsize=256)
def end_row_table(text: str, per_pod: int, whole_tp: bool = False) -> np.ndarray | None:
    """Per cell pod count ``n`` and end-row vertex count ``e`` (over every copy of ``H``): the
    fewest ``H``-edges leaving the cell, :func:`end_row_boundary` min-plus summed over the
    ``q = tp / per_pod`` copies (``whole_tp``: the same set in every copy, ``n = q · size``,
    ``e`` counted in one copy). For ``pp >`` :data:`MOST_END_ROW_STAGES` a lower bound
    instead: :func:`~toposolve.policy.end_rows.column_bound`, at least :func:`grid_boundary`
    (docs/ranks.md, section 7c). None for ``pp < 3`` (nothing to couple)."""
    layout = parse_parallelism(text)
    pp, dp = layout.sizes["pp"], layout.sizes["dp"]
    if not supported(layout, per_pod) or pp < 3:
        return None
    grid = end_row_boundary(pp, dp)
    if grid is None:
        whole = np.array(grid_boundary(pp, dp), dtype=np.int64)[:, None]
        grid = np.maximum(column_bound(pp, dp), whole)
    grid = np.where(grid > 4 * pp * dp, NO_SET, grid).astype(np.int64)
    if whole_tp:
        return grid
    total = grid
    for _ in range(layout.sizes["tp"] // per_pod - 1):
        total = min_plus(total, grid)
    return np.minimum(total, NO_SET)


def _end_row_total(text: str, per_pod: int, counts: list[int], whole_tp: bool) -> int | None:
    """The least ``Σ_cells`` boundary (``H``-edges) when the cells' end-row vertices add up to
    the two end rows of every copy they share — the coupling the per-cell floor ignores."""
    table = end_row_table(text, per_pod, whole_tp)
    if table is None:
        return None
    layout = parse_parallelism(text)
    q = layout.sizes["tp"] // per_pod
    copies, per_set = (1, q) if whole_tp else (q, 1)
    best = np.zeros(1, dtype=np.int64)
    for c in counts:
        best = np.minimum(min_plus(best, table[c // per_set]), NO_SET)
    return int(best[copies * 2 * layout.sizes["dp"]])


def edge_floor(text: str, per_pod: int, cell_pods, whole_tp: bool = False) -> int | None:
    """A lower bound on the job's PP + DP ring edges (per rank) between cells under every rank
    order, when its cells hold ``cell_pods`` of its pods (all of them together): the half sum of
    :func:`part_boundary` over the cells, rounded up to whole ``H``-edges (exact for two cells);
    for ``pp ≥ 3`` the larger half sum with the cells' end-row vertices coupled
    (:func:`end_row_table`: the end rows hold ``2·dp`` vertices per copy, so
    not every cell can sit at an end of the pipelines). None when the layout is not
    :func:`supported` or the counts do not add up to its pods. ``whole_tp``: over the orders
    that keep every TP group inside one cell; None when a cell holds a count of pods that no
    such order allows (not a multiple of ``tp / per_pod``)."""
    table = part_boundary(text, per_pod, whole_tp)
    counts = [int(c) for c in cell_pods if int(c) > 0]
    if table is None or sum(counts) != len(table) - 1:
        return None
    unit = per_pod
    if whole_tp:
        q = parse_parallelism(text).sizes["tp"] // per_pod
        if any(c % q for c in counts):
            return None
        unit = per_pod * q
    total = sum(table[c] for c in counts)
    coupled = _end_row_total(text, per_pod, counts, whole_tp)
    if coupled is not None:
        total = max(total, coupled * unit)
    return -(-total // (2 * unit)) * unit


def plan_edge_floor(problem: Problem, nodes: np.ndarray, text: str, per_pod: int,
                    whole_tp: bool = False) -> int | None:
    """:func:`edge_floor` of one job's pods on ``nodes`` (one entry per pod) over the cells of
    the lowest tier (leaves; a node outside every leaf is its own cell): the fewest cross-leaf
    ring edges any rank order (keeping TP groups inside leaves: ``whole_tp``) reaches on this
    placement."""
    cells = node_cells(problem.topology, level_tiers(problem.topology))
    if cells.shape[1] == 0:
        return 0
    _, counts = np.unique(cells[np.asarray(nodes, dtype=np.int64), 0], return_counts=True)
    return edge_floor(text, per_pod, counts.tolist(), whole_tp)


def job_table(problem: Problem, j: int) -> tuple[int, ...] | None:
    """:func:`part_boundary` of job ``j`` (its ranked pods, pending and running) over every rank
    order, or None: the stage's per-leaf table, without the end-row coupling of
    :func:`edge_floor` (not separable per leaf). (The ``whole_tp`` table made NVL72 placements
    worse: docs/ranks.md, 7.)"""
    text, pods = problem.jobs[j].parallelism, job_pods(problem, j)
    if text is None or pods <= 0 or parse_parallelism(text).world % pods:
        return None
    table = part_boundary(text, parse_parallelism(text).world // pods)
    return table if table is not None and len(table) == pods + 1 else None


def edge_floor_value(problem: Problem, assignment, weights=None) -> int:
    """The ``edge_floor`` stage value: ``Σ_jobs Σ_leaves table(pods in the leaf)`` over the
    placed layout jobs :func:`job_table` covers (running pods included) — twice the sum of
    their edge floors before rounding."""
    total = 0
    for j, cells, _ in placed_cells(problem, assignment, weights, per_pod=True,
                                    counted=lambda j: job_table(problem, j) is not None):
        if cells.shape[1] == 0:
            continue
        table = job_table(problem, j)
        _, counts = np.unique(cells[:, 0], return_counts=True)
        total += sum(table[int(c)] for c in counts)
    return total
