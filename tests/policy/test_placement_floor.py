"""The edge floor over every placement (docs/ranks.md, section 7b) against brute force: every
count vector within the cells' capacities, every rank order of it."""

from __future__ import annotations

import itertools

import pytest
from edge_floor_cases import brute_force, brute_force_whole_tp

from toposolve.core.parallelism import parse_parallelism
from toposolve.policy.edge_floor import edge_floor, grid_boundary
from toposolve.policy.placement_floor import placement_floor


def count_vectors(capacity: list[int], total: int, step: int = 1):
    """Every pod count per cell within ``capacity`` adding up to ``total`` (multiples of
    ``step``)."""
    ranges = [range(0, c + 1, step) for c in capacity]
    return [v for v in itertools.product(*ranges) if sum(v) == total]


CASES = [("pp=3,dp=2", 1, [3, 2, 2, 1]), ("pp=4,dp=2", 1, [3, 3, 3]),
         ("pp=2,dp=4", 1, [5, 2, 2]), ("pp=3,dp=3", 1, [4, 4, 4]),
         ("tp=2,pp=3,dp=2", 1, [5, 5, 4]), ("pp=4,dp=3", 1, [5, 5, 5])]


@pytest.mark.parametrize(("text", "per_pod", "capacity"), CASES)
def test_placement_floor_bounds_every_placement_and_order(text, per_pod, capacity):
    """No count vector within the capacities has an order below the bound, and the bound is
    the best of them on these cases (the per-vector floor is exact on them)."""
    pods = parse_parallelism(text).world // per_pod
    best = min(brute_force(text, per_pod, [c for c in v if c])
               for v in count_vectors(capacity, pods))
    floor = placement_floor(text, per_pod, capacity)
    assert floor <= best
    assert floor == min(edge_floor(text, per_pod, v) for v in count_vectors(capacity, pods))
    if text != "tp=2,pp=3,dp=2":  # one TP piece per pod: the floor is exact on these
        assert floor == best


@pytest.mark.parametrize(("text", "capacity"), [("tp=2,pp=3,dp=2", [5, 5, 4]),
                                                ("tp=2,pp=4,dp=2", [7, 6, 5]),
                                                ("tp=2,pp=2,dp=3", [5, 4, 4])])
def test_whole_tp_placement_floor_bounds_the_orders_keeping_tp_groups_in_a_cell(text, capacity):
    """One rank per pod, two pods per TP group: a cell of capacity 5 holds two whole groups."""
    pods = parse_parallelism(text).world
    best = min(brute_force_whole_tp(text, [c for c in v if c])
               for v in count_vectors([c - c % 2 for c in capacity], pods, 2))
    floor = placement_floor(text, 1, capacity, whole_tp=True)
    assert floor <= best
    assert floor == best  # exact on these small cases
    assert placement_floor(text, 1, capacity) <= floor  # splitting TP groups can only help


def test_nvl72_racks_hold_at_most_nine_tp_groups():
    """tp=8,pp=4,dp=8 over 4-GPU trays: a rack of 18 trays holds at most 9 whole TP groups and
    ``∂(n) ≥ n`` for ``n ≤ 9`` on the 4 × 8 grid, so every placement keeping TP groups in racks
    cuts at least 32 / 2 = 16 H-edges, 128 ring edges, however many racks are free; with halves
    of TP groups spread over racks the bound is lower (a rack can hold all of one copy)."""
    assert all(grid_boundary(4, 8)[n] >= n for n in range(10))
    racks = [18] * 20
    assert placement_floor("tp=8,pp=4,dp=8", 4, racks, whole_tp=True) == 128
    assert placement_floor("tp=8,pp=4,dp=8", 4, racks) < 128
    # 15 free trays hold 7 whole TP groups (the odd tray none): the best of every count vector
    best = min(edge_floor("tp=8,pp=4,dp=8", 4, [2 * x for x in v if x], whole_tp=True)
               for v in itertools.product(range(8), repeat=6) if sum(v) == 32)
    assert placement_floor("tp=8,pp=4,dp=8", 4, [15] * 6, whole_tp=True) == best == 152


def test_no_placement_without_room():
    assert placement_floor("tp=8,pp=4,dp=4", 8, [8, 7]) is None  # 15 of 16 pods fit
    assert placement_floor("tp=8,pp=4,dp=4", 4, [9, 9, 9, 5], whole_tp=True) is None
    assert placement_floor("tp=4,dp=8", 8, [8, 8]) is None  # two TP groups per pod
