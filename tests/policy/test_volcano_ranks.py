"""Volcano's rank-order proposal (PR #4312) as a rank assignment, against hand-worked cases and
against the DFS order it is compared with (docs/ranks.md)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from builders import example1_tree, gang, hard, inner, instance, leaf, nodes, worker_pod

from toposolve.core.parallelism import parse_parallelism
from toposolve.core.plan import Binding, Plan
from toposolve.core.problem import compile_problem
from toposolve.policy.comm import layout_edges, measure
from toposolve.policy.ranks import JobPods, assign_ranks, by_method, comm_totals, compare_ranks
from toposolve.policy.volcano_ranks import volcano_blocks


def _topology(tree, count):
    return compile_problem(instance(nodes(count), tree, [])).topology


def _leaves_of(topo, blocks, node_of_pod):
    return [topo.names[topo.node_leaf[node_of_pod[p]]] for p in blocks]


def test_issue_4233_example_fills_one_hypernode_before_the_next():
    """Five ring pods, five nodes in two HyperNodes (s1: node0-2, s2: node3-4), the pods bound
    interleaved: rank order by Volcano's rule crosses between the HyperNodes twice."""
    tree = [leaf("s1", ["node0", "node1", "node2"]), leaf("s2", ["node3", "node4"]),
            inner("top", ["s1", "s2"], 2)]
    topo = _topology(tree, 5)
    node_of_pod = np.array([3, 0, 4, 1, 2])
    blocks = volcano_blocks(topo, node_of_pod, hard=False)
    assert node_of_pod[blocks].tolist() == [0, 1, 2, 3, 4]
    ring = layout_edges(parse_parallelism("dp=5"), 1)
    assert measure(topo, node_of_pod[blocks], ring).cross_leaf_edges == 2
    assert measure(topo, node_of_pod, ring).cross_leaf_edges == 4  # index order


def _three_leaves():
    """Leaves whose nodes interleave in node order: s1 {0, 4}, s2 {1, 3}, s3 {2, 5}."""
    tree = [leaf("s1", ["node0", "node4"]), leaf("s2", ["node1", "node3"]),
            leaf("s3", ["node2", "node5"]), inner("top", ["s1", "s2", "s3"], 2)]
    return _topology(tree, 6), np.arange(6)


def test_soft_mode_prefers_the_leaf_holding_most_of_the_job():
    topo, node_of_pod = _three_leaves()
    blocks = volcano_blocks(topo, node_of_pod, hard=False)
    # block 0: lowest IP (node0, s1); block 1: s1 is the allocated HyperNode; then every leaf
    # ties on the LCA (top), s2 and s3 hold none of the job: lowest IP, then fill that leaf
    assert _leaves_of(topo, blocks, node_of_pod) == ["s1", "s1", "s2", "s2", "s3", "s3"]


def test_hard_mode_orders_by_node_ip_alone():
    topo, node_of_pod = _three_leaves()
    blocks = volcano_blocks(topo, node_of_pod, hard=True)
    assert node_of_pod[blocks].tolist() == [0, 1, 2, 3, 4, 5]


def test_lowest_common_hypernode_comes_before_the_task_count():
    """After node0 (s1, its only node), node3 (s2, under the same spine A) comes before node1 and
    node2 (s3, under B), though their IPs are lower: the LCA tier decides first."""
    tree = [leaf("s1", ["node0"]), leaf("s2", ["node3"]), leaf("s3", ["node1", "node2"]),
            inner("A", ["s1", "s2"], 2), inner("B", ["s3"], 2), inner("top", ["A", "B"], 3)]
    topo = _topology(tree, 4)
    blocks = volcano_blocks(topo, np.array([2, 1, 0, 3]), hard=False)
    assert np.array([2, 1, 0, 3])[blocks].tolist() == [0, 3, 1, 2]


def test_rank_methods_on_a_plan_and_the_job_mode():
    job = gang("a", 6)
    job.parallelism = "tp=8,dp=6"
    inst = instance(nodes(6), [leaf("s1", ["node0", "node4"]), leaf("s2", ["node1", "node3"]),
                               leaf("s3", ["node2", "node5"]),
                               inner("top", ["s1", "s2", "s3"], 2)], [job])
    plan = Plan("hand", "FEASIBLE", bindings=[Binding(worker_pod("a", i), f"node{i}")
                                              for i in range(6)])
    soft = assign_ranks(inst, plan, method="volcano")["default/a"]
    assert [soft[worker_pod("a", i)] // 8 for i in range(6)] == [0, 2, 4, 3, 1, 5]
    assert assign_ranks(inst, plan, method="index")["default/a"] == {
        worker_pod("a", i): 8 * i for i in range(6)}
    inst.jobs[0].network_topology = hard(2)
    assert assign_ranks(inst, plan, method="volcano")["default/a"] == {
        worker_pod("a", i): 8 * i for i in range(6)}
    with pytest.raises(ValueError, match="rank method must be one of"):
        assign_ranks(inst, plan, method="best")


def test_compare_ranks_reports_volcano_between_index_and_ranked():
    job = gang("a", 4)
    job.parallelism = "tp=8,dp=4"
    inst = instance(nodes(8), example1_tree(), [job])
    plan = Plan("hand", "FEASIBLE", bindings=[
        Binding(worker_pod("a", i), f"node{n}") for i, n in enumerate([0, 2, 1, 3])])
    (comm,) = compare_ranks(compile_problem(inst), plan)
    assert comm.volcano is not None
    assert comm.ranked.cross_leaf_edges <= comm.volcano.cross_leaf_edges
    totals = comm_totals([comm])
    assert list(totals) == ["index", "volcano", "ranked"]
    assert totals["volcano"]["cross_leaf_ring_edges"] == comm.volcano.cross_leaf_edges


def _scrambled_tree():
    """Three spines of two leaves of two nodes, nodes dealt to the leaves out of node order."""
    names = [f"node{i}" for i in random.Random(3).sample(range(12), 12)]
    tree = [leaf(f"s{k}", names[2 * k:2 * k + 2]) for k in range(6)]
    tree += [inner(f"spine{k}", [f"s{2 * k}", f"s{2 * k + 1}"], 2) for k in range(3)]
    return tree + [inner("top", ["spine0", "spine1", "spine2"], 3)]


@pytest.mark.parametrize("hard_mode", [False, True])
def test_dfs_ring_is_never_worse_than_volcano_rule(hard_mode):
    """The DFS ring is optimal at every tier (docs/ranks.md, theorem), so Volcano's greedy rule
    can at best tie it; on random gangs over a tree whose node order does not follow it, it
    ties sometimes, not always."""
    problem = compile_problem(instance(nodes(12), _scrambled_tree(), []))
    rng = random.Random(7)
    ties = 0
    for _ in range(40):
        node_of_pod = np.array([rng.randrange(12) for _ in range(rng.randint(2, 12))])
        pods = JobPods("j", tuple(map(str, range(len(node_of_pod)))), node_of_pod,
                       parse_parallelism(f"dp={len(node_of_pod)}"), 1, hard_mode)
        _, blocks, volcano = by_method(problem, pods, "volcano")
        optimal = by_method(problem, pods, "optimal")[2]
        assert sorted(blocks.tolist()) == list(range(len(node_of_pod)))
        for tier, count in optimal.leaving.items():
            assert count <= volcano.leaving[tier]
        ties += optimal.cost == volcano.cost
    assert 0 < ties < 40


@pytest.mark.parametrize("hard_mode", [False, True])
def test_volcano_rule_ranks_a_1024_node_gang_within_a_second(hard_mode):
    import time

    tree = [leaf(f"l{k}", [f"node{32 * k + i}" for i in range(32)]) for k in range(32)]
    tree += [inner(f"s{k}", [f"l{4 * k + i}" for i in range(4)], 2) for k in range(8)]
    topo = _topology(tree, 1024)
    node_of_pod = np.random.default_rng(0).permutation(1024)
    start = time.perf_counter()
    blocks = volcano_blocks(topo, node_of_pod, hard_mode)
    assert time.perf_counter() - start < 1.0
    assert sorted(blocks.tolist()) == list(range(1024))
    # nodes listed in tree order: both modes hand the blocks out leaf by leaf
    assert node_of_pod[blocks].tolist() == list(range(1024))
