"""The edge floor (docs/ranks.md, section 7) against brute force: the grid's edge boundary over
every vertex set, and the floor against every rank order of tiny jobs — a lower bound always,
exact for two cells, and for three or more cells of 3- and 4-stage jobs with the end rows
coupled; the stage value and the plan floor on a hand-placed job."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from builders import example1_tree, gang, instance, nodes
from edge_floor_cases import brute_force, brute_force_whole_tp, compositions

from toposolve.core.assignment import Assignment
from toposolve.core.parallelism import parse_parallelism
from toposolve.core.problem import compile_problem
from toposolve.policy.comm import RING_KINDS, layout_edges, measure
from toposolve.policy.edge_floor import (
    edge_floor,
    edge_floor_value,
    end_row_boundary,
    grid_boundary,
    part_boundary,
    plan_edge_floor,
)
from toposolve.policy.profiles import CommWeights


def grid_edges(pp: int, dp: int) -> list[tuple[int, int]]:
    """Vertex ``s + pp·i`` is stage ``s`` of replica ``i``; DP rings as the layout counts them
    (two edges between a pair when dp = 2, none when dp = 1)."""
    out = [(s + pp * i, s + 1 + pp * i) for i in range(dp) for s in range(pp - 1)]
    if dp >= 2:
        out += [(s + pp * i, s + pp * ((i + 1) % dp)) for i in range(dp) for s in range(pp)]
    return out


@pytest.mark.parametrize(("pp", "dp"), [(1, 6), (4, 1), (2, 2), (2, 5), (3, 4), (4, 4),
                                        (5, 3), (4, 2)])
def test_grid_boundary_is_the_least_boundary_of_every_set(pp, dp):
    n = pp * dp
    a, b = np.array(grid_edges(pp, dp)).T
    sets = (np.arange(1 << n)[:, None] >> np.arange(n)[None, :]) & 1  # every vertex set
    cut = (sets[:, a] != sets[:, b]).sum(axis=1)
    size = sets.sum(axis=1)
    least = [int(cut[size == k].min()) for k in range(n + 1)]
    assert list(grid_boundary(pp, dp)) == least


@pytest.mark.parametrize(("pp", "dp"), [(3, 3), (4, 3), (4, 2), (3, 1)])
def test_end_row_boundary_is_the_least_boundary_of_every_set_by_end_rows(pp, dp):
    n = pp * dp
    a, b = np.array(grid_edges(pp, dp)).T
    sets = (np.arange(1 << n)[:, None] >> np.arange(n)[None, :]) & 1
    cut = (sets[:, a] != sets[:, b]).sum(axis=1)
    size = sets.sum(axis=1)
    end = np.isin(np.arange(n) % pp, [0, pp - 1])
    ends = sets[:, end].sum(axis=1)
    table = end_row_boundary(pp, dp)
    for k in range(n + 1):
        for e in range(2 * dp + 1):
            hit = (size == k) & (ends == e)
            if hit.any():
                assert table[k, e] == cut[hit].min(), (k, e)
            else:
                assert table[k, e] > 4 * n, (k, e)
    assert end_row_boundary(2, 4) is None and end_row_boundary(5, 2) is None


LAYOUTS = [("tp=2,pp=2,dp=3", 2), ("pp=3,dp=2", 1), ("pp=2,dp=4", 1), ("pp=4,dp=2", 1),
           ("tp=2,pp=2,dp=2", 1), ("pp=2,dp=3", 1), ("tp=4,pp=3,dp=2", 4)]


@pytest.mark.parametrize(("text", "per_pod"), LAYOUTS)
def test_floor_bounds_every_rank_order_and_is_exact_for_two_cells(text, per_pod):
    pods = parse_parallelism(text).world // per_pod
    for sizes in compositions(pods):
        floor, best = edge_floor(text, per_pod, sizes), brute_force(text, per_pod, sizes)
        assert floor <= best, sizes
        if len(sizes) <= 2:
            assert floor == best, sizes


@pytest.mark.parametrize(("text", "per_pod"), [("tp=2,pp=2,dp=3", 2), ("pp=2,dp=4", 1),
                                               ("pp=2,dp=3", 1)])
def test_floor_is_exact_for_every_cell_vector_of_two_stage_jobs(text, per_pod):
    """With two stages every stage touches an end of the pipelines (one TP piece per pod)."""
    pods = parse_parallelism(text).world // per_pod
    for sizes in compositions(pods):
        assert edge_floor(text, per_pod, sizes) == brute_force(text, per_pod, sizes), sizes


@pytest.mark.parametrize(("text", "per_pod"), [("pp=4,dp=2", 1), ("pp=3,dp=3", 1),
                                               ("pp=4,dp=3", 1), ("tp=4,pp=3,dp=2", 4)])
def test_coupled_floor_is_exact_for_three_or_more_cells(text, per_pod):
    """Cells compete for the two end rows of the pipelines: with that coupling the floor equals
    the best order on every vector of three or more cells tested (one TP piece per pod; vectors
    of at most 100,000 orders)."""
    pods = parse_parallelism(text).world // per_pod
    for sizes in compositions(pods):
        orders = math.factorial(pods) // math.prod(math.factorial(s) for s in sizes)
        if len(sizes) >= 3 and orders <= 100_000:
            assert edge_floor(text, per_pod, sizes) == brute_force(text, per_pod, sizes), sizes


def test_coupled_floor_bounds_every_order_with_two_tp_pieces_per_group():
    """tp=2 over one-GPU pods (two copies of H): still never above the best order."""
    for sizes in compositions(12):
        orders = math.factorial(12) // math.prod(math.factorial(s) for s in sizes)
        if len(sizes) >= 3 and orders <= 100_000:
            assert edge_floor("tp=2,pp=3,dp=2", 1, sizes) <= brute_force("tp=2,pp=3,dp=2", 1,
                                                                         sizes), sizes


def test_several_cells_cannot_all_sit_at_an_end_of_the_pipelines():
    """pp=4,dp=2 in four cells of 2: each cell alone is cheapest as one stage at an end of the
    pipelines (2 edges), but there are two ends: the per-cell half sum says 4, every order
    needs 6, and the coupled floor says 6. pp=4,dp=4 in four cells of four: per cell 8, but
    only two cells can be end rows; rows as cells (two end, two middle) give 12 = the floor."""
    assert brute_force("pp=4,dp=2", 1, [2, 2, 2, 2]) == edge_floor("pp=4,dp=2", 1, [2] * 4) == 6
    assert (sum(part_boundary("pp=4,dp=4", 1)[4] for _ in range(4)) // 2) == 8
    layout = parse_parallelism("pp=4,dp=4")
    edges = layout_edges(layout, 1)
    ring = np.isin(edges.kind, RING_KINDS)
    rows = np.arange(16) % 4 if layout.order.index("pp") == 0 else np.arange(16) // 4
    assert int((rows[edges.a[ring]] != rows[edges.b[ring]]).sum()) == 12
    assert edge_floor("pp=4,dp=4", 1, [4, 4, 4, 4]) == 12


def test_half_tp_group_pods_split_over_two_copies():
    """tp=8 over 4-GPU pods: the two halves of every TP group carry separate PP/DP graphs;
    a cell of n pods takes the cheapest split of n between the copies, 4 ranks per edge."""
    table = part_boundary("tp=8,pp=4,dp=4", 4)
    grid = grid_boundary(4, 4)
    assert len(table) == 33
    for n in range(33):
        split = min(grid[a] + grid[n - a] for a in range(max(0, n - 16), min(n, 16) + 1))
        assert table[n] == 4 * split


@pytest.mark.parametrize("text", ["tp=2,pp=2,dp=2", "tp=2,dp=4", "tp=2,pp=4", "tp=2,pp=3,dp=2",
                                  "tp=2,pp=4,dp=2"])
def test_whole_tp_floor_bounds_the_orders_that_keep_tp_groups_in_a_cell(text):
    """With TP groups kept inside cells the floor is ``tp · ∂(n / q)`` (end rows coupled for
    3–4 stages): a lower bound on those orders, exact for two cells (and for every vector of
    the 3- and 4-stage layouts here); counts that split a TP group have none."""
    pods = parse_parallelism(text).world
    for sizes in compositions(pods // 2):
        doubled = [2 * s for s in sizes]
        floor = edge_floor(text, 1, doubled, whole_tp=True)
        best = brute_force_whole_tp(text, doubled)
        assert floor <= best, doubled
        if len(sizes) <= 2 or parse_parallelism(text).sizes["pp"] >= 3:
            assert floor == best, doubled
    assert edge_floor(text, 1, [3, pods - 3], whole_tp=True) is None
    # the floor over every order lets the cells take pieces of TP groups: never higher
    assert edge_floor(text, 1, [4, pods - 4]) <= edge_floor(text, 1, [4, pods - 4], whole_tp=True)


def test_unsupported_layouts_have_no_floor():
    assert part_boundary("tp=4,dp=8", 8) is None  # two TP groups per pod
    assert part_boundary("pp=4,tp=2,dp=2", 1) is None  # TP not the fastest axis
    assert edge_floor("tp=8,pp=4,dp=4", 8, [8, 7]) is None  # counts short of the 16 pods


def test_plan_floor_and_stage_value_of_a_hand_placement():
    """pp=2,dp=4 over example 1 (four 2-node leaves), one pod per node: each leaf's 2 pods leave
    at least ∂(2) = 4 edges of H (a pipeline or two replicas' same stage), 8 ranks per edge:
    stage value 4 · 32 = 128, floor 64 — and the best of all 8! orders reaches it."""
    job = gang("a", 8)
    job.parallelism = "tp=8,pp=2,dp=4"
    problem = compile_problem(instance(nodes(8), example1_tree(), [job]))
    assignment = Assignment()
    assignment.counts[problem.jobs[0].groups[0]] = {n: 1 for n in range(8)}
    assert grid_boundary(2, 4)[2] == 4
    assert edge_floor_value(problem, assignment) == 4 * 4 * 8
    assert plan_edge_floor(problem, np.arange(8), "tp=8,pp=2,dp=4", 8) == 64
    edges = layout_edges(parse_parallelism("tp=8,pp=2,dp=4"), 8)
    best = min(measure(problem.topology, np.array(p), edges).cross_leaf_edges
               for p in itertools.permutations(range(8)))
    assert best == 64


def test_no_ranked_order_goes_below_the_floor_on_random_placements():
    """tp=8,pp=4,dp=4 (16 whole-node pods) over four 8-node leaves, on random nodes and on two
    random leaves' nodes: index order and the ranker's order never leave fewer cross-leaf ring
    edges than the plan's floor, and on two leaves (floor exact) the ranker, a PP edge priced
    as a DP edge (``comm-floor``'s weights), reaches it."""
    from builders import leaf as make_leaf

    from toposolve.policy.ranks import JobPods, optimise

    tree = [make_leaf(f"L{k}", [f"node{8 * k + i}" for i in range(8)]) for k in range(4)]
    problem = compile_problem(instance(nodes(32), tree, []))
    layout = parse_parallelism("tp=8,pp=4,dp=4")
    edges = layout_edges(layout, 8)
    rng = np.random.default_rng(0)
    for trial in range(40):
        two_leaves = trial % 2 == 0
        if two_leaves:
            first, second = rng.choice(4, size=2, replace=False).tolist()
            chosen = rng.permutation([8 * first + i for i in range(8)]
                                     + [8 * second + i for i in range(8)])
        else:
            chosen = rng.choice(32, size=16, replace=False)
        floor = plan_edge_floor(problem, chosen, "tp=8,pp=4,dp=4", 8)
        index = measure(problem.topology, chosen, edges).cross_leaf_edges
        pods = JobPods("a", tuple(map(str, range(16))), chosen, layout, 8)
        ranked = optimise(problem, pods, CommWeights(pp=4, dp=4))[2].cross_leaf_edges
        assert floor <= ranked <= index
        if two_leaves:
            assert ranked == floor == 8 * grid_boundary(4, 4)[8]
