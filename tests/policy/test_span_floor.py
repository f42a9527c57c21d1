"""The span floor (docs/ranks.md, section 8) against brute force: on every placement of tiny
jobs over example 1 (four 2-node leaves, two spines), it is a lower bound on the cross-leaf ring
edges of every rank order whose largest DP span stays inside a spine, defined exactly where such
an order exists and never below the edge floor; above it where a job with ``dp > 2 · pp`` is
split over spines (hand placement, with the stage value)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from builders import example1_tree, gang, inner, instance, leaf, nodes
from rank_brute import capped_best

from toposolve.core.assignment import Assignment
from toposolve.core.parallelism import parse_parallelism
from toposolve.core.problem import compile_problem
from toposolve.policy.comm import layout_edges, measure
from toposolve.policy.edge_floor import edge_floor_value, plan_edge_floor
from toposolve.policy.profiles import CommWeights
from toposolve.policy.span_floor import plan_span_floor, row_split_floor, span_floor_value

SPINE_TIER = 2  # example 1: leaves s0..s3 (tier 1), spines s4, s5 (tier 2), s6 (tier 3)


@pytest.mark.parametrize("text", ["tp=8,pp=2,dp=2", "tp=8,pp=3,dp=2", "tp=8,pp=2,dp=3"])
def test_span_floor_bounds_every_order_that_keeps_dp_groups_in_spines(text):
    layout = parse_parallelism(text)
    pods = layout.world // 8
    problem = compile_problem(instance(nodes(8), example1_tree(), []))
    edges = layout_edges(layout, 8)
    for chosen in itertools.combinations(range(8), pods):
        best = capped_best(problem, chosen, edges, SPINE_TIER)
        floor = plan_span_floor(problem, np.array(chosen), text, 8, level=1)
        assert (floor is None) == (best is None), chosen
        if floor is None:
            continue
        plain = plan_edge_floor(problem, np.array(chosen), text, 8)
        assert plain <= floor <= best, chosen


def test_a_job_split_over_spines_pays_its_pp_edges():
    """tp=8,pp=2,dp=6 (12 whole-node pods) on two 6-node leaves in different spines: the edge
    floor is 2 · pp = 4 H-edges (32 ring edges: three whole pipelines per leaf, DP span above
    the spines); keeping DP groups in spines puts one stage in each, so dp = 6 PP H-edges (48
    ring edges) join them — the span floor, reached by the stage-major order (each DP group in
    one leaf)."""
    tree = [leaf(f"L{k}", [f"node{6 * k + i}" for i in range(6)]) for k in range(4)]
    tree += [inner("S0", ["L0", "L1"], 2), inner("S1", ["L2", "L3"], 2)]
    job = gang("a", 12)
    job.parallelism = "tp=8,pp=2,dp=6"
    problem = compile_problem(instance(nodes(24), tree, [job]))
    chosen = np.array([*range(6), *range(12, 18)])
    assignment = Assignment()
    assignment.counts[problem.jobs[0].groups[0]] = {int(n): 1 for n in chosen}
    weights = CommWeights(dp_span_from_level=1)
    assert edge_floor_value(problem, assignment) == 2 * 32
    assert span_floor_value(problem, assignment, weights) == 2 * 48
    assert plan_edge_floor(problem, chosen, "tp=8,pp=2,dp=6", 8) == 32
    assert plan_span_floor(problem, chosen, "tp=8,pp=2,dp=6", 8, level=1) == 48
    edges = layout_edges(parse_parallelism("tp=8,pp=2,dp=6"), 8)
    blocks = np.arange(12)  # block b is stage b % 2 of replica b // 2: stage 0 on S0
    stage_major = measure(problem.topology, chosen[(blocks % 2) * 6 + blocks // 2], edges)
    assert (stage_major.cross_leaf_edges, stage_major.largest_dp_span) == (48, 1)
    pipelines = measure(problem.topology, chosen, edges)  # index order: pipelines contiguous
    assert (pipelines.cross_leaf_edges, pipelines.largest_dp_span) == (32, 3)


def test_unaligned_jobs_keep_the_edge_floor():
    """A spine holding 3 pods of a dp = 2 job: no order keeps its DP groups in spines, so the
    stage prices it at the edge floor and the plan metric is None."""
    job = gang("a", 4)
    job.parallelism = "tp=8,pp=2,dp=2"
    problem = compile_problem(instance(nodes(8), example1_tree(), [job]))
    assignment = Assignment()
    assignment.counts[problem.jobs[0].groups[0]] = {0: 1, 1: 1, 2: 1, 4: 1}
    weights = CommWeights(dp_span_from_level=1)
    assert span_floor_value(problem, assignment, weights) == edge_floor_value(problem, assignment)
    assert plan_span_floor(problem, np.array([0, 1, 2, 4]), "tp=8,pp=2,dp=2", 8, level=1) is None


def grid_edges(pp: int, dp: int) -> list[tuple[int, int]]:
    """``H``-edges of ``P_pp × C_dp`` (vertex ``s · dp + i``: stage ``s`` of replica ``i``),
    the DP ring's two edges between the pair when ``dp = 2``."""
    out = [(s * dp + i, (s + 1) * dp + i) for s in range(pp - 1) for i in range(dp)]
    if dp >= 2:
        out += [(s * dp + i, s * dp + (i + 1) % dp) for s in range(pp) for i in range(dp)
                if dp > 2 or i == 0]
        out += [(s * dp, s * dp + 1) for s in range(pp)] if dp == 2 else []
    return out


def dealt_best(pp: int, dp: int, per_cell) -> int:
    """Brute force: the fewest ``H``-edges between leaves over every labelling of the grid's
    vertices by leaf (``per_cell[c]`` the leaves' sizes of cell ``c``) whose stages (DP groups)
    each lie inside one cell."""
    leaves = [(c, n) for c, counts in enumerate(per_cell) for n in counts]
    rows = [sum(counts) // dp for counts in per_cell]
    edges = grid_edges(pp, dp)
    best = None
    for deal in set(itertools.permutations([c for c, r in enumerate(rows) for _ in range(r)])):
        # the vertices of each cell, then every split of them over the cell's leaves
        splits = []
        for c in range(len(per_cell)):
            cell = [s * dp + i for s in range(pp) if deal[s] == c for i in range(dp)]
            mine = [k for k, (owner, _) in enumerate(leaves) if owner == c]
            labels = [k for k in mine for _ in range(leaves[k][1])]
            splits.append([dict(zip(cell, p, strict=True)) for p in set(
                itertools.permutations(labels))])
        for combo in itertools.product(*splits):
            leaf_of = {v: k for part in combo for v, k in part.items()}
            cut = sum(leaf_of[a] != leaf_of[b] for a, b in edges)
            best = cut if best is None else min(best, cut)
    return best


DEALT_CASES = [
    (3, 2, ((2,), (1, 3))), (3, 2, ((2,), (2,), (1, 1))), (3, 2, ((1, 1), (1, 3))),
    (4, 2, ((2,), (3, 3))), (4, 2, ((1, 1), (2, 4))), (4, 2, ((4,), (1, 3))),
    (4, 2, ((2,), (2,), (2, 2))), (3, 3, ((3,), (2, 4))), (3, 3, ((1, 2), (6,))),
    (3, 3, ((3,), (3,), (1, 2))), (2, 3, ((3,), (1, 2))), (2, 4, ((1, 3), (4,))),
    (3, 4, ((4,), (3, 5))), (4, 3, ((3,), (4, 5))), (4, 2, ((2,), (2, 2, 2))),
    (4, 2, ((1, 1), (2, 2, 2))), (4, 3, ((3,), (3, 3, 3))), (4, 3, ((1, 2), (3, 3, 3))),
    (4, 3, ((3,), (3,), (3, 3))),
]


@pytest.mark.parametrize(("pp", "dp", "per_cell"), DEALT_CASES)
def test_row_split_floor_equals_the_best_dealt_order(pp, dp, per_cell):
    """Against every order keeping DP groups inside cells (brute force over the grid): never
    above, and equal on every case here — the stages dealt to the cells, each cell's leaves
    bounded by the edge floor of its own run of stages (docs/ranks.md, section 8)."""
    tp = 8
    best = dealt_best(pp, dp, per_cell)
    assert row_split_floor(tp, pp, dp, per_cell) == tp * best
    leaf_counts = [n for counts in per_cell for n in counts]
    old = tp * dp * (len(per_cell) - 1) + tp * sum(1 for n in leaf_counts if n % dp)
    assert old <= tp * best


def test_the_superpod_split_the_old_span_floor_missed():
    """superpod pp=4 seed 0 (docs/ranks.md, section 8): a ``dp=16`` job with one DP group on one
    spine and three on another, split 16 / 32 over two leaves. The old floor counted 16 PP
    ``H``-edges (128 ring edges); the end stage on the first spine leaves a ``3 × 16`` grid
    whose 16-pod leaf cuts at least 7 more: 184, what the ranker reaches there."""
    assert row_split_floor(8, 4, 16, ((16,), (16, 32))) == 184
    # the middle stages on the lone spine cost two boundaries: never cheaper
    assert row_split_floor(8, 4, 16, ((16,), (16, 32))) < 8 * 16 * 2
