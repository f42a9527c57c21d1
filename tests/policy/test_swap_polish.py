"""Pairwise swaps between leaves (docs/ranks.md, section 8): a permutation of the same pods, each
block in its capped cell, strictly fewer ring edges between leaves; on three leaves of one spine
the polished order reaches the edge floor every fixed-shape candidate misses."""

from __future__ import annotations

import numpy as np
from builders import inner, instance, leaf, nodes

from toposolve.core.parallelism import parse_parallelism
from toposolve.core.problem import compile_problem
from toposolve.policy.comm import layout_edges, measure
from toposolve.policy.comm_stage import level_tiers, node_cells
from toposolve.policy.edge_floor import plan_edge_floor
from toposolve.policy.profiles import CommWeights
from toposolve.policy.ranks import JobPods, optimise
from toposolve.policy.swap_polish import polish

TEXT = "tp=8,dp=4,pp=4"
EDGE_WEIGHTS = CommWeights(tp=1000, pp=1, dp=1, tier_factor=1.0001)


def one_spine():
    """Three spines of three 6-node leaves; the job on 5, 5 and 6 nodes of the second spine."""
    tree = [leaf(f"L{k}", [f"node{6 * k + i}" for i in range(6)]) for k in range(9)]
    tree += [inner(f"S{s}", [f"L{3 * s + i}" for i in range(3)], 2) for s in range(3)]
    problem = compile_problem(instance(nodes(54), tree, []))
    chosen = np.array([19, 20, 21, 22, 23, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35])
    return problem, JobPods("a", tuple(map(str, range(16))), chosen, parse_parallelism(TEXT), 8)


def test_the_polished_order_reaches_the_edge_floor_on_three_leaves():
    """Edge floor 88 (11 H-edges; an exact CP-SAT model over the rank assignments finds 88
    optimal, docs/ranks.md section 8); the candidates cut 96, the polished best 88."""
    problem, pods = one_spine()
    assert plan_edge_floor(problem, pods.nodes, TEXT, 8) == 88
    name, _, metrics = optimise(problem, pods, EDGE_WEIGHTS)
    assert name.endswith(", polished")
    assert metrics.cross_leaf_edges == 88


def test_polish_swaps_inside_capped_cells_and_cuts_fewer_edges():
    problem, pods = one_spine()
    cells = node_cells(problem.topology, level_tiers(problem.topology))[pods.nodes]
    edges = layout_edges(pods.layout, 8)
    start = np.arange(16)  # index order
    polished = polish(start, cells[:, 0], cells[:, 1], edges)
    assert polished is not None and sorted(polished.tolist()) == list(range(16))
    before = measure(problem.topology, pods.nodes[start], edges).cross_leaf_edges
    after = measure(problem.topology, pods.nodes[polished], edges).cross_leaf_edges
    assert after < before
    # swaps only between pods of one capped cell: with each pod its own capped cell, none
    assert polish(start, cells[:, 0], np.arange(16), edges) is None
    # every pod in one leaf: nothing to lower
    assert polish(start, np.zeros(16, np.int64), cells[:, 1], edges) is None
