"""The span floor: the edge floor of the rank orders that keep every DP group inside one domain
of a capped level (docs/ranks.md, section 8).

For a job with one TP group per pod (``per_pod = tp``), a DP group is one row of the grid ``H``
(one pipeline stage over the ``dp`` replicas). An order whose largest DP span is at most the
tier of level ``c`` puts whole rows into each level-``c`` cell, so a job over ``k`` such cells
has at least ``(k − 1) · dp`` PP ``H``-edges between them, and each leaf holding a count of its
pods that is not a multiple of ``dp`` holds part of a DP ring (at least two ``H``-edges leaving
the leaf inside its level-``c`` cell). :func:`span_floor_value` prices an aligned job (every
level-``c`` cell holding whole DP groups) at the larger of that and the edge floor's per-leaf
sum (:func:`~toposolve.policy.edge_floor.job_table`), in the edge floor's units (twice the ring
edges); any other job at the per-leaf sum. The plan metric :func:`plan_span_floor` is tighter:
:func:`row_split_floor` deals the stages to the cells and bounds each cell's leaves on its own
stages (section 8b).
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

import numpy as np

from toposolve.core.parallelism import parse_parallelism
from toposolve.core.problem import Problem
from toposolve.policy.comm_stage import (
    group_size,
    job_pods,
    level_tiers,
    node_cells,
    placed_cells,
)
from toposolve.policy.edge_floor import edge_floor, grid_boundary, job_table
from toposolve.policy.profiles import CommWeights


def split_prices(problem: Problem, j: int) -> tuple[int, int] | None:
    """``(per cell, per partial leaf)`` of job ``j`` in the edge floor's units: ``2 · tp · dp``
    for each level-``c`` cell past the first and ``2 · tp`` for a leaf holding part of a DP
    group; None when the job has no :func:`~toposolve.policy.edge_floor.job_table`, not one
    TP group per pod, or ``pp < 2`` or ``dp < 2`` (nothing to price)."""
    text, pods = problem.jobs[j].parallelism, job_pods(problem, j)
    if text is None or job_table(problem, j) is None:
        return None
    layout = parse_parallelism(text)
    tp, pp, dp = (layout.sizes[a] for a in ("tp", "pp", "dp"))
    if layout.world != pods * tp or pp < 2 or dp < 2 or group_size(problem, j, "dp") != dp:
        return None
    return 2 * tp * dp, 2 * tp


def job_span_floor(table: tuple[int, ...], prices: tuple[int, int] | None, dp: int,
                   leaf_counts: np.ndarray, capped_counts: np.ndarray) -> int:
    """One job's span floor from its pod counts per leaf and per level-``c`` cell."""
    floor = sum(table[int(n)] for n in leaf_counts)
    if prices is None or (capped_counts % dp).any():
        return floor  # no order keeps every DP group inside a level-c cell: the edge floor
    per_cell, per_leaf = prices
    split = per_cell * (len(capped_counts) - 1) + per_leaf * int((leaf_counts % dp != 0).sum())
    return max(floor, split)


def span_floor_value(problem: Problem, assignment, weights: CommWeights | None = None) -> int:
    """The ``span_floor`` stage value: :func:`job_span_floor` summed over the placed layout jobs
    that have a :func:`~toposolve.policy.edge_floor.job_table` (running pods included), the
    capped level ``c`` being ``weights.dp_span_from_level`` (at most the level below the
    root)."""
    total = 0
    start = (weights or CommWeights()).dp_span_from_level
    for j, cells, _ in placed_cells(problem, assignment, weights, per_pod=True,
                                    counted=lambda j: job_table(problem, j) is not None):
        if cells.shape[1] == 0:
            continue
        level = min(start, cells.shape[1] - 1)
        _, leaf_counts = np.unique(cells[:, 0], return_counts=True)
        _, capped_counts = np.unique(cells[:, level], return_counts=True)
        dp = parse_parallelism(problem.jobs[j].parallelism).sizes["dp"]
        total += job_span_floor(job_table(problem, j), split_prices(problem, j), dp,
                                leaf_counts, capped_counts)
    return total


def plan_span_floor(problem: Problem, nodes: np.ndarray, text: str, per_pod: int,
                    level: int) -> int | None:
    """The fewest cross-leaf ring edges an order keeping every DP group inside a level-``level``
    cell can have on one job's pods on ``nodes`` (one entry per pod), as far as this floor
    sees: the larger of :func:`~toposolve.policy.edge_floor.edge_floor` (end rows coupled) and,
    with one TP group per pod, :func:`row_split_floor` (the stages dealt to the cells, each
    cell's leaves bounded on its own rows). None when the layout has no edge floor or no such
    order exists (a level-``level`` cell holds part of a DP group)."""
    cells = node_cells(problem.topology, level_tiers(problem.topology))
    if cells.shape[1] == 0:
        return 0
    picked = cells[np.asarray(nodes, dtype=np.int64)]
    leaf_ids, leaf_of = np.unique(picked[:, 0], return_inverse=True)
    capped_ids, capped_of = np.unique(picked[:, min(level, cells.shape[1] - 1)],
                                      return_inverse=True)
    leaf_counts = np.bincount(leaf_of, minlength=len(leaf_ids))
    capped = np.bincount(capped_of, minlength=len(capped_ids))
    layout = parse_parallelism(text)
    tp, pp, dp = (layout.sizes[a] for a in ("tp", "pp", "dp"))
    floor = edge_floor(text, per_pod, leaf_counts.tolist())
    if floor is None or (capped % dp).any():
        return None
    if per_pod != tp or pp < 2 or dp < 2:
        return floor
    split = tp * dp * (len(capped) - 1) + tp * int((leaf_counts % dp != 0).sum())
    cell_of_leaf = np.zeros(len(leaf_ids), dtype=np.int64)
    cell_of_leaf[leaf_of] = capped_of
    per_cell = tuple(tuple(sorted(leaf_counts[cell_of_leaf == c].tolist()))
                     for c in range(len(capped)))
    rows = row_split_floor(tp, pp, dp, per_cell)
    return max(floor, split, rows if rows is not None else 0)


#: the most deals of stages to cells :func:`row_split_floor` tries (8 stages over 8 cells: 8!)
MOST_ROW_DEALS = 40_320


def row_split_floor(tp: int, pp: int, dp: int, per_cell: tuple[tuple[int, ...], ...]) -> int | None:
    """A floor on the cross-leaf ring edges of the orders of a ``tp, pp, dp`` job (one TP group
    per pod) keeping every DP group (a stage) inside one capped cell, the cells' leaves holding
    ``per_cell`` pods (each cell a multiple of ``dp``; docs/ranks.md, section 8).

    Each order deals the ``pp`` stages to the cells, ``|cell| / dp`` each: ``dp`` PP ``H``-edges
    per pair of consecutive stages in different cells, plus the edges between the leaves of
    each cell inside its own stages (:func:`_inside_cell`: for one run of ``r`` consecutive
    stages the edge floor of the ``P_r × C_dp`` grid over its leaves). The least total over
    every deal; None past :data:`MOST_ROW_DEALS`."""
    rows = [sum(c) // dp for c in per_cell]
    if _deals(rows) > MOST_ROW_DEALS:
        return None
    best = None
    for deal in _multiset_orders(tuple(rows)):
        total = tp * dp * sum(a != b for a, b in zip(deal, deal[1:], strict=False))
        for c, counts in enumerate(per_cell):
            runs = tuple(len(list(g)) for k, g in itertools.groupby(deal) if k == c)
            total += _inside_cell(tp, dp, counts, runs)
        best = total if best is None else min(best, total)
    return best


#: the most states (used capacity per run of stages) :func:`_runs_floor` keeps
MOST_RUN_STATES = 100_000


@lru_cache(maxsize=4096)
def _inside_cell(tp: int, dp: int, counts: tuple[int, ...], runs: tuple[int, ...]) -> int:
    """Ring edges between a cell's leaves (``counts`` pods each) inside its stages, dealt in
    ``runs`` of consecutive stages: for one run the edge floor of its ``P_r × C_dp`` grid, for
    several :func:`_runs_floor`; at least one ``H``-edge per leaf holding part of a stage."""
    partial = tp * sum(1 for n in counts if n % dp)
    if len(counts) < 2:
        return partial
    if len(runs) == 1:
        inside = edge_floor(f"tp={tp},pp={runs[0]},dp={dp}", tp, list(counts))
    else:
        inside = _runs_floor(dp, counts, runs)
        inside = None if inside is None else tp * inside
    return max(partial, inside or 0)


def _runs_floor(dp: int, counts: tuple[int, ...], runs: tuple[int, ...]) -> int | None:
    """``H``-edges between leaves over several runs (disjoint grids): each leaf's pods split
    over the runs, every run filled, each leaf leaving at least Lemma 1's ``∂`` in each run;
    half the least sum, rounded up (a dynamic programme over the leaves, the state the pods
    each run has taken). None past :data:`MOST_RUN_STATES` states."""
    sizes = [r * dp for r in runs]
    if math.prod(n + 1 for n in sizes) > MOST_RUN_STATES:
        return None
    tables = [grid_boundary(r, dp) for r in runs]
    states = {(0,) * len(runs): 0}
    for n in counts:
        nxt: dict[tuple[int, ...], int] = {}
        for used, cost in states.items():
            for split in _splits(n, [s - u for s, u in zip(sizes, used, strict=True)]):
                key = tuple(u + k for u, k in zip(used, split, strict=True))
                value = cost + sum(t[k] for t, k in zip(tables, split, strict=True))
                if value < nxt.get(key, value + 1):
                    nxt[key] = value
        states = nxt
    total = states.get(tuple(sizes))
    return None if total is None else -(-total // 2)


def _splits(n: int, room: list[int]):
    """Every way to put ``n`` pods into parts of at most ``room[j]`` each."""
    if len(room) == 1:
        if n <= room[0]:
            yield (n,)
        return
    for k in range(min(n, room[0]) + 1):
        for rest in _splits(n - k, room[1:]):
            yield (k, *rest)


def _deals(rows: list[int]) -> int:
    """How many distinct sequences deal ``rows[c]`` stages to each cell ``c``."""
    return math.factorial(sum(rows)) // math.prod(math.factorial(r) for r in rows)


def _multiset_orders(rows: tuple[int, ...]):
    """Every sequence holding cell ``c`` ``rows[c]`` times, in lexicographic order."""
    if not any(rows):
        yield ()
        return
    for c, r in enumerate(rows):
        if r:
            rest = rows[:c] + (r - 1,) + rows[c + 1:]
            for tail in _multiset_orders(rest):
                yield (c, *tail)
