"""Stages dealt to the capped cells, each cell ordered alone (docs/ranks.md, section 8): the
ranker reaches the span floor of its placement where the depth-first candidates miss it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from builders import example1_tree, inner, instance, leaf, nodes
from rank_brute import capped_best

from toposolve.core.parallelism import parse_parallelism
from toposolve.core.problem import compile_problem
from toposolve.policy.comm import dfs_order, layout_edges, measure
from toposolve.policy.comm_stage import level_tiers, node_cells
from toposolve.policy.dealt_orders import dealt_orders
from toposolve.policy.profiles import CommWeights
from toposolve.policy.ranks import JobPods, aligned_orders, candidate_orders, optimise
from toposolve.policy.span_floor import plan_span_floor

SPINE_TIER = 2
#: the ranker pricing a cross-leaf edge far above its tier: its pick is the fewest edges
EDGE_WEIGHTS = CommWeights(tp=1000, pp=1, dp=1, tier_factor=1.0001, dp_span_first=True,
                           dp_span_from_level=1)


def spines_problem():
    """Three spines of three 6-node leaves."""
    tree = [leaf(f"L{k}", [f"node{6 * k + i}" for i in range(6)]) for k in range(9)]
    tree += [inner(f"S{s}", [f"L{3 * s + i}" for i in range(3)], 2) for s in range(3)]
    return compile_problem(instance(nodes(54), tree, []))


def job(chosen, text: str) -> JobPods:
    chosen = np.asarray(chosen, dtype=np.int64)
    return JobPods("a", tuple(map(str, range(len(chosen)))), chosen, parse_parallelism(text), 8)


def test_dealt_stages_reach_the_span_floor_the_aligned_order_misses():
    """tp=8,pp=4,dp=5 on 20 nodes over three spines (5, 10, 5 pods): the span floor is 184
    (23 H-edges); the aligned order (DP groups per spine, pipelines inside) leaves 192, the
    dealt order 184 with every DP group inside one spine."""
    problem = spines_problem()
    text = "tp=8,pp=4,dp=5"
    pods = job([1, 4, 5, 6, 9, 10, 11, 15, 16, 17, 18, 20, 29, 30, 34, 37, 38, 46, 47, 53], text)
    assert plan_span_floor(problem, pods.nodes, text, 8, level=1) == 184
    topo, edges = problem.topology, layout_edges(pods.layout, 8)
    seq = dfs_order(topo, pods.nodes)
    aligned = dict(aligned_orders(topo, pods.nodes[seq], pods.layout, 8))
    pod_of_block = np.empty(20, dtype=np.int64)
    pod_of_block[aligned["dp groups per tier-2 domain"]] = seq
    assert measure(topo, pods.nodes[pod_of_block], edges).cross_leaf_edges == 192
    name, pod_of_block, metrics = optimise(problem, pods, EDGE_WEIGHTS, span_cap=SPINE_TIER)
    assert name == "stages dealt to tier-2 domains"
    assert (metrics.cross_leaf_edges, metrics.largest_dp_span) == (184, SPINE_TIER)
    assert sorted(pod_of_block.tolist()) == list(range(20))


@pytest.mark.parametrize("text", ["tp=8,pp=4,dp=6", "tp=8,pp=4,dp=5", "tp=8,pp=3,dp=6",
                                  "tp=8,dp=4,pp=4", "tp=8,pp=2,dp=8"])
def test_the_ranker_reaches_the_span_floor_on_random_placements(text):
    """Seeded random placements holding whole DP groups per spine (the stages dealt to the
    spines at random, their pods on random nodes of it): the ranker's fewest edges under the
    spine cap equal the span floor (which the brute-force tests of test_span_floor.py show is
    never above the best such order), so it is the best order there."""
    problem = spines_problem()
    layout = parse_parallelism(text)
    pp, dp = layout.sizes["pp"], layout.sizes["dp"]
    rng = np.random.default_rng(1)
    for _ in range(30):
        spine_of_stage = rng.integers(0, 3, pp)
        per_spine = np.bincount(spine_of_stage, minlength=3) * dp
        if (per_spine > 18).any():
            continue
        chosen = np.sort(np.concatenate([18 * s + rng.choice(18, c, replace=False)
                                         for s, c in enumerate(per_spine.tolist())]))
        floor = plan_span_floor(problem, chosen, text, 8, level=1)
        _, _, metrics = optimise(problem, job(chosen, text), EDGE_WEIGHTS, span_cap=SPINE_TIER)
        assert metrics.largest_dp_span <= SPINE_TIER, chosen
        assert metrics.cross_leaf_edges == floor, chosen


def test_dealt_orders_keep_every_dp_group_inside_one_cell():
    problem = spines_problem()
    text = "tp=8,pp=4,dp=5"
    pods = job([1, 4, 5, 6, 9, 10, 11, 15, 16, 17, 18, 20, 29, 30, 34, 37, 38, 46, 47, 53], text)
    topo = problem.topology
    seq = dfs_order(topo, pods.nodes)
    cells = node_cells(topo, level_tiers(topo))[pods.nodes[seq]]
    [(_, order, positions)] = dealt_orders(cells[:, 1], cells[:, 0], pods.layout, 8,
                                           candidate_orders, "dealt")
    assert sorted(order.tolist()) == list(range(20))
    assert sorted(positions.tolist()) == list(range(20))
    pod_of_block = np.empty(20, dtype=np.int64)
    pod_of_block[order] = seq[positions]
    groups = layout_edges(pods.layout, 8).dp_groups
    spine = cells[np.argsort(seq)][:, 1]  # spine of each pod (index into pods)
    assert all(len(set(spine[pod_of_block[g]].tolist())) == 1 for g in groups)
    # one capped cell, or a cell holding part of a stage: nothing dealt
    assert dealt_orders(np.zeros(20, np.int64), cells[:, 0], pods.layout, 8,
                        candidate_orders, "dealt") == []
    assert dealt_orders(cells[:, 0], cells[:, 0], pods.layout, 8, candidate_orders,
                        "dealt") == []


@pytest.mark.parametrize("text", ["tp=8,pp=2,dp=2", "tp=8,pp=3,dp=2", "tp=8,pp=2,dp=3",
                                  "tp=8,dp=2,pp=3"])
def test_the_ranker_finds_the_best_capped_order_by_brute_force(text):
    """Every placement on example 1 (four 2-node leaves, two spines) where some order keeps the
    DP groups inside spines: the ranker's fewest edges under that cap equal the best over every
    order (all permutations of the pods)."""
    problem = compile_problem(instance(nodes(8), example1_tree(), []))
    layout = parse_parallelism(text)
    edges = layout_edges(layout, 8)
    checked = 0
    for chosen in itertools.combinations(range(8), layout.world // 8):
        best = capped_best(problem, chosen, edges, SPINE_TIER)
        if best is None:
            continue
        _, _, metrics = optimise(problem, job(chosen, text), EDGE_WEIGHTS, span_cap=SPINE_TIER)
        assert (metrics.cross_leaf_edges, metrics.largest_dp_span <= SPINE_TIER) == (best, True)
        checked += 1
    assert checked > 0
