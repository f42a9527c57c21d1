"""The edge floor over every placement: a lower bound on a job's cross-leaf ring edges that no
placement within the cells' free capacity and no rank order goes below.

:func:`toposolve.policy.edge_floor.edge_floor` bounds one placement (the job's pod count per
cell). Its terms are sums over the cells — the per-cell boundary and, for 3–4 stages, the
per-cell boundary by end-row vertices with the end rows adding up — so the least of each over
every count vector within the capacities is a min-plus sum over the cells
(:func:`placement_floor`); the larger of the two bounds every placement's floor. ``whole_tp``:
over the orders that keep every TP group inside one cell (a TP group's pods in one NVLink
domain), each cell then holding whole groups (docs/ranks.md, section 7b).
"""

from __future__ import annotations

import numpy as np

from toposolve.core.parallelism import parse_parallelism
from toposolve.policy.edge_floor import (
    NO_SET,
    end_row_table,
    grid_boundary,
    min_plus,
    part_boundary,
    supported,
)


def placement_floor(text: str, per_pod: int, capacity, whole_tp: bool = False) -> int | None:
    """The fewest PP + DP ring edges (per rank) between cells that a job of layout ``text``
    (``per_pod`` ranks per pod, all pods pending) can have under any placement holding at most
    ``capacity[c]`` of its pods in cell ``c`` and any rank order (``whole_tp``: any order that
    keeps every TP group inside one cell): a lower bound, the least
    :func:`~toposolve.policy.edge_floor.edge_floor` term by term.

    Returns
    -------
    int or None
        None when the layout is not supported or the cells cannot hold the job.
    """
    layout = parse_parallelism(text)
    if not supported(layout, per_pod):
        return None
    q = layout.sizes["tp"] // per_pod
    pods = layout.world // per_pod
    pp, dp = layout.sizes["pp"], layout.sizes["dp"]
    if whole_tp:  # one copy of H per TP group: count whole groups, one H-edge = tp ring edges
        caps = [int(c) // q for c in capacity]
        cell = np.array(grid_boundary(pp, dp), dtype=np.int64)
        units, unit, ends = pods // q, layout.sizes["tp"], 2 * dp
    else:  # the part table is already in ring edges, per_pod per H-edge
        caps = [int(c) for c in capacity]
        cell = np.array(part_boundary(text, per_pod), dtype=np.int64) // per_pod
        units, unit, ends = pods, per_pod, 2 * dp * q
    if sum(min(c, units) for c in caps) < units:
        return None
    total = _least_sum(cell[:, None], caps, (units + 1, 1))[units, 0]
    coupled = end_row_table(text, per_pod, whole_tp)
    if coupled is not None:
        total = max(total, _least_sum(coupled, caps, (units + 1, ends + 1))[units, ends])
    return -(-int(total) // 2) * unit


def _least_sum(table: np.ndarray, caps: list[int], shape: tuple[int, int]) -> np.ndarray:
    """``best[n, e]``: the least ``Σ_c table[n_c, e_c]`` over cells with ``n_c ≤ caps[c]``,
    ``Σ n_c = n`` and ``Σ e_c = e`` (a min-plus sum over the cells; equal capacities are
    summed once and reused by doubling)."""
    best = np.full(shape, NO_SET, dtype=np.int64)
    best[0, 0] = 0
    for cap, count in sorted(_counts(min(c, shape[0] - 1) for c in caps).items()):
        power = np.minimum(table[:cap + 1], NO_SET)
        while count:  # binary powers of the capped table
            if count & 1:
                best = min_plus(best, power, shape)
            count >>= 1
            if count:
                power = min_plus(power, power, shape)
    return best


def _counts(values) -> dict[int, int]:
    out: dict[int, int] = {}
    for v in values:
        if v > 0:
            out[v] = out.get(v, 0) + 1
    return out
