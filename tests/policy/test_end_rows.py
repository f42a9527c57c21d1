"""The per-column bound on the end-row table (docs/ranks.md, section 7c) against the exact
table (3–4 stages) and against every vertex set of small grids (5–7 stages), and the coupled
floor it gives for 5 and 6 stages against every rank order."""

from __future__ import annotations

import math

import numpy as np
import pytest
from edge_floor_cases import brute_force, compositions

from toposolve.core.parallelism import parse_parallelism
from toposolve.policy.edge_floor import edge_floor, end_row_boundary, grid_boundary, part_boundary
from toposolve.policy.end_rows import column_bound, column_pp_boundary


def bounded(pp: int, dp: int) -> np.ndarray:
    """The table the floor uses: the column bound, at least the per-cell boundary."""
    return np.maximum(column_bound(pp, dp), np.array(grid_boundary(pp, dp))[:, None])


@pytest.mark.parametrize(("pp", "dp"), [(3, 1), (3, 2), (3, 5), (4, 1), (4, 2), (4, 3), (4, 6)])
def test_column_bound_equals_the_exact_table_for_three_and_four_stages(pp, dp):
    exact, bound = end_row_boundary(pp, dp), column_bound(pp, dp)
    big = 4 * pp * dp + 4
    assert ((exact >= big) == (bound >= big)).all()  # the same (n, e) have a set
    assert (bound == exact).all()


def grid_cuts(pp: int, dp: int):
    """Size, end-row count and boundary of every vertex set of the ``pp × dp`` grid."""
    n = pp * dp
    edges = [(s + pp * i, s + 1 + pp * i) for i in range(dp) for s in range(pp - 1)]
    edges += [(s + pp * i, s + pp * ((i + 1) % dp)) for i in range(dp) for s in range(pp)]
    a, b = np.array(edges).T
    sets = (np.arange(1 << n)[:, None] >> np.arange(n)[None, :]) & 1
    ends = sets[:, np.isin(np.arange(n) % pp, [0, pp - 1])].sum(axis=1)
    return sets.sum(axis=1), ends, (sets[:, a] != sets[:, b]).sum(axis=1)


@pytest.mark.parametrize(("pp", "dp"), [(5, 2), (5, 3), (6, 2), (7, 2)])
def test_column_bound_is_the_least_boundary_by_end_rows_on_small_grids(pp, dp):
    """A lower bound by its proof; on these grids equal to the least boundary of every set."""
    size, ends, cut = grid_cuts(pp, dp)
    table = bounded(pp, dp)
    for k in range(pp * dp + 1):
        for e in range(2 * dp + 1):
            hit = (size == k) & (ends == e)
            if hit.any():
                assert table[k, e] == cut[hit].min(), (k, e)
            else:
                assert column_bound(pp, dp)[k, e] >= 4 * pp * dp + 4, (k, e)


def test_column_pp_boundary():
    assert [column_pp_boundary(5, k, 0) for k in range(4)] == [0, 2, 2, 2]
    assert [column_pp_boundary(5, k, 1) for k in range(4)] == [1, 1, 1, 1]
    assert [column_pp_boundary(5, k, 2) for k in range(4)] == [2, 2, 2, 0]


@pytest.mark.parametrize("text", ["pp=5,dp=2", "pp=6,dp=2", "pp=5,dp=3"])
def test_coupled_floor_for_five_and_six_stages_equals_the_best_order(text):
    """Three or more cells (vectors of at most 100,000 orders): the per-cell half sum is short
    on most of them, the coupled floor on none."""
    pods = parse_parallelism(text).world
    short = 0
    for sizes in compositions(pods):
        orders = math.factorial(pods) // math.prod(math.factorial(s) for s in sizes)
        if len(sizes) >= 3 and orders <= 100_000:
            best = brute_force(text, 1, sizes)
            assert edge_floor(text, 1, sizes) == best, sizes
            short += -(-sum(part_boundary(text, 1)[c] for c in sizes) // 2) < best
    assert short > 0
