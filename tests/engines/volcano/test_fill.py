"""Filling a SubJob's pods into nodes (engines/volcano/fill.py) on seed 000's Example 1:
racks s0 = node0, node1; s1 = node2, node3; s2; s3 (tier 1), s4 = {s0, s1}, s5 = {s2, s3}."""

from __future__ import annotations

import numpy as np
from builders import example1_tree, gang, instance, nodes

from toposolve.core.problem import compile_problem
from toposolve.engines.volcano import HeuristicEngine
from toposolve.engines.volcano.fill import anchor_lca_tiers, fill, proximity_order
from toposolve.policy.profiles import Profile

ALL = np.arange(8)


def state_of(jobs):
    problem = compile_problem(instance(nodes(8), example1_tree(), jobs))
    return problem, HeuristicEngine(problem, Profile()).state


def test_anchor_lca_tiers_measure_each_node_against_the_anchor_rack():
    problem, state = state_of([gang("a", 1)])
    s1 = problem.topology.names.index("s1")
    assert anchor_lca_tiers(state, ALL, s1).tolist() == [2, 2, 1, 1, 3, 3, 3, 3]


def test_proximity_order_keeps_to_the_anchor_then_the_nearest_racks():
    """One pod of `a` runs on node5 (rack s2): its rack first (by node rank inside the rack: the
    task-count tie-break is per rack), then s3 (same tier-2 HyperNode), then the other half."""
    problem, state = state_of([gang("a", 4, running={0: "node5"})])
    s2 = problem.topology.names.index("s2")
    assert proximity_order(state, ALL, s2, [0]).tolist() == [4, 5, 6, 7, 0, 1, 2, 3]


def test_proximity_order_without_an_anchor_starts_at_the_best_ranked_node():
    problem, state = state_of([gang("a", 2)])
    order = proximity_order(state, ALL, None, [0])
    assert order[:2].tolist() == [int(np.argmin(state.node_rank)), order[1]]
    first_rack = state.leaf[order[0]]
    assert state.leaf[order[1]] == first_rack  # the rest of the first node's rack comes next


def test_fill_takes_each_node_to_its_room_in_order_and_stops_at_count():
    problem, state = state_of([gang("a", 5, gpus=4)])
    fit = state.fit_counts(0)  # two 4-GPU pods per node
    placed = fill(state, 0, np.array([3, 1, 2]), fit, 5)
    assert placed == 5
    assert state.tasks_in([0]).tolist() == [0, 2, 1, 2, 0, 0, 0, 0]
    assert fill(state, 0, np.array([4]), state.fit_counts(0), 0) == 0
