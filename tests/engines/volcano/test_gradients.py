"""Candidate HyperNodes by tier (engines/volcano/gradients.py) on seed 000's Example 1 tree:
s0..s3 tier 1, s4 = {s0, s1} and s5 = {s2, s3} tier 2, s6 tier 3, the virtual root tier 4."""

from __future__ import annotations

import numpy as np
from builders import example1_tree, nodes

from toposolve.core.topology import build_topology
from toposolve.engines.volcano.gradients import hypernode_gradients, search_root

TOPO = build_topology(nodes(8), example1_tree())
IDX = {name: i for i, name in enumerate(TOPO.names)}
ALL = np.arange(len(TOPO.names))
RANK = ALL  # (tier, name) order


def names(gradients):
    return [[TOPO.names[h] for h in tier] for tier in gradients]


def test_gradients_list_eligible_hypernodes_per_tier_up_to_the_limit():
    eligible = np.ones(len(ALL), dtype=bool)
    assert names(hypernode_gradients(TOPO, ALL, 2, eligible, RANK)) == [
        ["s0", "s1", "s2", "s3"],
        ["s4", "s5"],
    ]
    eligible[IDX["s1"]] = eligible[IDX["s5"]] = False
    assert names(hypernode_gradients(TOPO, ALL, 3, eligible, RANK)) == [
        ["s0", "s2", "s3"],
        ["s4"],
        ["s6"],
    ]
    assert hypernode_gradients(TOPO, ALL, 0, eligible, RANK) == []


def test_the_tie_rank_orders_each_tier():
    rank = RANK.copy()
    rank[IDX["s3"]] = -1
    gradients = hypernode_gradients(TOPO, ALL, 1, np.ones(len(ALL), dtype=bool), rank)
    assert names(gradients) == [["s3", "s0", "s1", "s2"]]


def test_search_root_of_a_job_with_an_allocated_hypernode():
    ancestors = TOPO.ancestor_table
    root = IDX["<cluster-top-hypernode>"]
    assert search_root(TOPO, ancestors, root, None, 2) == root  # nothing allocated: the start
    assert (
        search_root(TOPO, ancestors, root, IDX["s2"], 2) == IDX["s5"]
    )  # highest ancestor within tier 2
    assert (
        search_root(TOPO, ancestors, IDX["s5"], IDX["s2"], 3) == IDX["s5"]
    )  # the start lies inside
    assert search_root(TOPO, ancestors, IDX["s4"], IDX["s2"], 2) is None  # allocated elsewhere
    assert search_root(TOPO, ancestors, root, IDX["s2"], 0) is None  # no ancestor within the limit
