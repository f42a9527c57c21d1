"""Rank order that follows the network: layouts, edge spans, DFS optimality against brute force,
the tp×pp×dp candidates, plan round trip (docs/ranks.md)."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from builders import example1_tree, gang, inner, instance, leaf, nodes, worker_pod
from pydantic import ValidationError

from toposolve.core.errors import InputError
from toposolve.core.parallelism import parse_parallelism
from toposolve.core.plan import Binding, Plan
from toposolve.core.problem import compile_problem
from toposolve.policy.comm import dfs_order, layout_edges, measure
from toposolve.policy.profiles import CommWeights
from toposolve.policy.ranks import (
    JobPods,
    aligned_orders,
    assign_ranks,
    compare_ranks,
    optimise,
    plan_span_cap,
)


def test_layout_text_order_and_strides():
    layout = parse_parallelism(" tp=8, pp=4 ,dp=8")
    assert (layout.world, layout.text) == (256, "tp=8,pp=4,dp=8")
    assert [layout.stride(a) for a in ("tp", "pp", "dp")] == [1, 8, 32]
    megatron = parse_parallelism("tp=8,dp=8,pp=4")
    assert [megatron.stride(a) for a in ("tp", "pp", "dp")] == [1, 64, 8]
    assert parse_parallelism("dp=16").sizes == {"tp": 1, "pp": 1, "dp": 16}


@pytest.mark.parametrize("text", ["tp=8,tp=2", "ep=4", "tp=0", "tp=x", "", "tp8"])
def test_malformed_layouts_are_refused(text):
    with pytest.raises(ValueError):
        parse_parallelism(text)


def test_world_size_must_match_accelerators_or_pods():
    job = gang("a", 4)  # 4 pods × 8 GPUs
    job.parallelism = "tp=8,pp=2,dp=2"  # 32 ranks = the GPUs
    job.parallelism = "dp=4"  # 4 ranks = the pods
    with pytest.raises(ValidationError, match="equals neither the job's 4 pods nor its 32"):
        job.parallelism = "tp=8,pp=3"


def test_layout_edges_count_rings_and_chains():
    edges = layout_edges(parse_parallelism("tp=2,pp=2,dp=2"), 1)
    assert np.bincount(edges.kind, minlength=3).tolist() == [8, 4, 8]
    assert edges.dp_groups.tolist() == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert edges.pp_chains.tolist() == [[0, 2], [1, 3], [4, 6], [5, 7]]
    inside = layout_edges(parse_parallelism("tp=2,pp=2,dp=2"), 2)  # TP inside each pod
    assert np.bincount(inside.kind, minlength=3).tolist() == [0, 4, 8]


def _skewed_tree():
    """Tier skipping and stray nodes: leaf a (tier 1: node0, node1) and node2 in b (tier 3), leaf
    c (tier 1: node3) in b, node4 in d (tier 2) under b, node5 in no HyperNode (the root)."""
    return [leaf("a", ["node0", "node1"]), leaf("c", ["node3"]), leaf("d", ["node4"], tier=2),
            inner("b", ["a", "c", "d"], 3),
            leaf("e", ["node2"], tier=3)]


def _problem(tree, count):
    return compile_problem(instance(nodes(count), tree, []))


def _ring_leaving(problem, node_of_pod):
    pods = JobPods("j", tuple(map(str, range(len(node_of_pod)))), node_of_pod,
                   parse_parallelism(f"dp={len(node_of_pod)}"), 1)
    return measure(problem.topology, node_of_pod, layout_edges(pods.layout, 1)), pods


@pytest.mark.parametrize("tree,count", [(example1_tree(), 8), (_skewed_tree(), 6)])
def test_dfs_ring_is_optimal_at_every_tier_against_brute_force(tree, count):
    """For random gangs of up to 7 pods, the DFS ring leaves every tier's domains as few times
    as the best of all orders, simultaneously, and the optimiser finds that cost."""
    problem = _problem(tree, count)
    rng = random.Random(4)
    for _ in range(25):
        nodes_of = np.array([rng.randrange(count) for _ in range(rng.randint(2, 7))])
        best: dict[int, int] = {}
        for perm in itertools.permutations(range(len(nodes_of))):
            m, _ = _ring_leaving(problem, nodes_of[list(perm)])
            for t, n in m.leaving.items():
                best[t] = min(best.get(t, n), n)
        dfs, pods = _ring_leaving(problem, nodes_of[dfs_order(problem.topology, nodes_of)])
        assert dfs.leaving == best
        _, _, chosen = optimise(problem, pods)
        assert chosen.cost == dfs.cost and chosen.leaving == best


def test_dfs_ring_crosses_each_partly_used_domain_twice():
    """Pods interleaved over the 4 leaves of example 1: index order leaves a leaf on every hop
    and a tier-2 domain on every other; DFS order leaves each leaf and each tier-2 domain once,
    i.e. crosses each boundary exactly twice."""
    problem = _problem(example1_tree(), 8)
    nodes_of = np.array([0, 2, 4, 6, 1, 3, 5, 7])
    index, pods = _ring_leaving(problem, nodes_of)
    assert index.leaving == {1: 8, 2: 4, 3: 0}
    _, _, ranked = optimise(problem, pods)
    assert ranked.leaving == {1: 4, 2: 2, 3: 0}


def test_layout_candidates_never_worse_than_index_and_near_brute_force():
    """tp=1,pp=2,dp=3 over 6 pods on example 1: the optimiser's cost is at most index order's
    and within 20 % of the brute-force optimum (a heuristic: docs/ranks.md gives the gaps)."""
    problem = _problem(example1_tree(), 8)
    layout = parse_parallelism("pp=2,dp=3")
    edges = layout_edges(layout, 1)
    rng = random.Random(7)
    for _ in range(10):
        nodes_of = np.array(rng.sample(range(8), 6))
        pods = JobPods("j", tuple("abcdef"), nodes_of, layout, 1)
        _, _, chosen = optimise(problem, pods)
        index = measure(problem.topology, nodes_of, edges)
        brute = min(measure(problem.topology, nodes_of[list(p)], edges).cost
                    for p in itertools.permutations(range(6)))
        assert brute <= chosen.cost <= index.cost
        assert chosen.cost <= 1.2 * brute


def _interleaved_plan():
    job = gang("a", 4)
    job.parallelism = "tp=8,dp=4"  # one DP ring over the 4 pods, TP inside each pod
    inst = instance(nodes(8), example1_tree(), [job])
    plan = Plan("hand", "FEASIBLE", bindings=[
        Binding(worker_pod("a", i), f"node{n}") for i, n in enumerate([0, 2, 1, 3])])
    return inst, plan


def test_assign_ranks_groups_pods_by_leaf_and_measures_both_orders():
    inst, plan = _interleaved_plan()
    ranks = assign_ranks(inst, plan)
    assert ranks == {"default/a": {worker_pod("a", 0): 0, worker_pod("a", 1): 16,
                                   worker_pod("a", 2): 8, worker_pod("a", 3): 24}}
    plan.ranks = ranks
    (job,) = compare_ranks(compile_problem(inst), plan)
    assert (job.source, job.layout, job.pods) == ("plan", "tp=8,dp=4", 4)
    assert (job.index.cross_leaf_edges, job.ranked.cross_leaf_edges) == (32, 16)
    assert job.ranked.cost < job.index.cost


def test_plan_ranks_round_trip_and_are_checked(tmp_path):
    inst, plan = _interleaved_plan()
    assert "ranks" not in plan.to_dict()  # old plans stay as they were
    plan.ranks = assign_ranks(inst, plan)
    path = tmp_path / "plan.json"
    plan.write(path)
    assert Plan.read(path).ranks == plan.ranks
    with pytest.raises(InputError, match="ranks.default/a.default/a-worker-0"):
        Plan.from_dict({**plan.to_dict(), "ranks": {"default/a": {worker_pod("a", 0): -1}}})
    plan.ranks = {"default/a": {worker_pod("a", i): 0 for i in range(4)}}
    with pytest.raises(InputError, match="not a free block start"):
        compare_ranks(compile_problem(inst), plan)


def test_a_1024_node_gang_is_ranked_within_a_second():
    import time

    tree = [leaf(f"l{k}", [f"node{32 * k + i}" for i in range(32)]) for k in range(32)]
    tree += [inner(f"s{k}", [f"l{4 * k + i}" for i in range(4)], 2) for k in range(8)]
    problem = _problem(tree, 1024)
    nodes_of = np.random.default_rng(0).permutation(1024)
    pods = JobPods("j", tuple(map(str, range(1024))), nodes_of,
                   parse_parallelism("tp=8,pp=8,dp=128"), 8)
    start = time.perf_counter()
    _, _, chosen = optimise(problem, pods)
    assert time.perf_counter() - start < 1.0
    index = measure(problem.topology, nodes_of, layout_edges(pods.layout, 8))
    assert chosen.cross_leaf_edges < index.cross_leaf_edges / 2


@pytest.mark.parametrize(("dp_weight", "dp_first"), [(1.0, False), (3.0, False), (4.0, True),
                                                     (16.0, True)])
def test_dp_weight_decides_between_pipeline_and_dp_contiguous(dp_weight, dp_first):
    """pp=2,dp=4 over the 8 nodes of example 1 in tree order, one rank per pod. Whole pipelines
    per leaf: PP edges 4 × m=1, DP rings 2 × (1·0 + 2+4+2+4) → cost 4·w_pp + 24·w_dp, largest DP
    span tier 3. DP groups per spine: DP rings 2 × (1+2+1+2), PP edges 4 × m=4 → 16·w_pp +
    12·w_dp, span tier 2; both cross leaves 8 times. With w_pp = 4 the DP-first order wins iff
    w_dp ≥ 4 (at the cost tie the smaller largest DP span decides)."""
    problem = _problem(example1_tree(), 8)
    layout = parse_parallelism("pp=2,dp=4")
    pods = JobPods("j", tuple("abcdefgh"), np.arange(8), layout, 1)
    weights = CommWeights(tp=16, pp=4, dp=dp_weight)
    _, pod_of_block, chosen = optimise(problem, pods, weights)
    pipeline_cost, dp_cost = 4 * 4 + 24 * dp_weight, 16 * 4 + 12 * dp_weight
    assert chosen.cost == min(pipeline_cost, dp_cost)
    assert chosen.largest_dp_span == (2 if dp_first else 3)
    stage_of_block = np.arange(8) % 2  # rank = pp stage + 2 · dp replica
    stage_of_node = stage_of_block[np.argsort(pod_of_block)]
    # DP-first: each spine (nodes 0-3, 4-7) holds one stage; pipeline-first: stages alternate
    assert stage_of_node.tolist() == ([0] * 4 + [1] * 4 if dp_first else [0, 1] * 4)


def _small_leaves(leaves: int = 8, size: int = 4, per_spine: int = 4):
    """``leaves`` leaves of ``size`` nodes, ``per_spine`` leaves per tier-2 spine."""
    tree = [leaf(f"l{k}", [f"node{size * k + i}" for i in range(size)]) for k in range(leaves)]
    tree += [inner(f"s{k}", [f"l{per_spine * k + i}" for i in range(per_spine)], 2)
             for k in range(leaves // per_spine)]
    return _problem(tree, leaves * size)


def test_bands_of_stages_beat_whole_pipelines_on_small_leaves():
    """pp=4,dp=8, one rank per pod, on eight 4-node leaves in tree order. Whole pipelines per
    leaf: every DP ring crosses all 8 leaves (32 edges); DP groups per pair of leaves: 8 DP +
    24 PP edges (32); bands of 2 stages (a leaf holds 2 stages × 2 replicas): 16 DP + 8 PP = 24
    — the fewest of the candidates, and chosen when a PP edge costs what a DP edge does."""
    problem = _small_leaves()
    layout = parse_parallelism("pp=4,dp=8")
    pods = JobPods("j", tuple(map(str, range(32))), np.arange(32), layout, 1)
    equal = CommWeights(pp=1, dp=1)
    name, _, chosen = optimise(problem, pods, equal)
    assert (name, chosen.cross_leaf_edges) == ("bands of 2 stages", 24)
    index = measure(problem.topology, pods.nodes, layout_edges(layout, 1))
    assert index.cross_leaf_edges == 32  # index order is pipeline-contiguous here
    # under the defaults (a PP edge 4× a DP edge) whole pipelines stay cheaper
    assert optimise(problem, pods)[2].cross_leaf_edges == 32


def test_aligned_orders_keep_dp_groups_inside_each_spine():
    """pp=4,dp=8 over two 16-node spines: each spine holds 2 whole DP groups (16 pods), so the
    aligned order puts every DP group in one spine (largest DP span tier 2) and, below it,
    pieces of pipelines per leaf."""
    problem = _small_leaves()
    layout = parse_parallelism("pp=4,dp=8")
    nodes_of = np.arange(32)
    orders = dict(aligned_orders(problem.topology, nodes_of, layout, 1))
    order = orders["dp groups per tier-2 domain"]
    pod_of_block = np.empty(32, dtype=np.int64)
    pod_of_block[order] = nodes_of
    metrics = measure(problem.topology, nodes_of[pod_of_block], layout_edges(layout, 1))
    assert metrics.largest_dp_span == 2
    assert metrics.cross_leaf_edges == 24  # the same tiles as bands of 2 stages


def test_dp_span_first_takes_the_cheapest_order_within_the_plans_span():
    """Two jobs: ``a`` fills spine s0 (its DP groups can stay in a leaf only by cutting every
    pipeline 3 times: 12 PP edges at weight 4), ``b`` crosses both spines (its smallest largest
    DP span is tier 2). The plan's cap is tier 2, so ``a`` keeps whole pipelines per leaf (16 DP
    edges at weight 1, DP span tier 2) rather than DP groups per leaf."""
    problem = _small_leaves()
    weights = CommWeights(dp_span_first=True)
    a = JobPods("a", tuple(map(str, range(16))), np.arange(16),
                parse_parallelism("pp=4,dp=4"), 1)
    b = JobPods("b", tuple(map(str, range(16))), np.array([*range(16, 24), *range(0, 8)]),
                parse_parallelism("pp=2,dp=8"), 1)
    alone = optimise(problem, a, weights)[2]
    assert alone.largest_dp_span == 1  # on its own: DP groups per leaf
    cap = plan_span_cap(problem, [a, b], weights)
    assert cap == 2
    capped = optimise(problem, a, weights, span_cap=cap)[2]
    assert (capped.largest_dp_span, capped.cross_leaf_edges, alone.cross_leaf_edges) == (2, 16, 12)
    assert capped.cost < alone.cost
