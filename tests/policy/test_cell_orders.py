"""Leaf cells listed in another order than the depth-first one (docs/ranks.md, section 7b): on
NVL72-shaped racks the reordered candidates reach the floor the depth-first ones miss."""

from __future__ import annotations

import numpy as np
from builders import instance, leaf, nodes

from toposolve.core.parallelism import parse_parallelism
from toposolve.core.problem import compile_problem
from toposolve.policy.cell_orders import MOST_PERMUTED_CELLS, cell_permutations
from toposolve.policy.comm import RING_KINDS, dfs_order, layout_edges, measure
from toposolve.policy.edge_floor import plan_edge_floor
from toposolve.policy.profiles import CommWeights
from toposolve.policy.ranks import JobPods, candidate_orders, optimise

LAYOUT = "tp=8,pp=4,dp=8"


def racks_problem(racks: int = 4, trays: int = 18):
    tree = [leaf(f"rack{r}", [f"node{trays * r + i}" for i in range(trays)])
            for r in range(racks)]
    return compile_problem(instance(nodes(racks * trays, gpus=4), tree, []))


def job_on(problem, counts: list[int], trays: int = 18) -> JobPods:
    """The 64 trays of a tp=8,pp=4,dp=8 job, ``counts[r]`` on rack ``r``, in a shuffled order."""
    chosen = np.concatenate([trays * r + np.arange(c) for r, c in enumerate(counts)])
    chosen = np.random.default_rng(0).permutation(chosen)
    return JobPods("a", tuple(map(str, range(64))), chosen, parse_parallelism(LAYOUT), 4)


def test_reordered_racks_reach_the_tp_intact_floor_the_depth_first_candidates_miss():
    """18, 18, 16, 12 trays (9, 9, 8, 6 TP groups): the floor keeping TP groups in racks is 136
    (17 H-edges); every candidate in depth-first rack order leaves more, the ranker (its
    candidates with the racks reordered) reaches it, every TP group inside one rack."""
    problem = racks_problem()
    pods = job_on(problem, [18, 18, 16, 12])
    floor = plan_edge_floor(problem, pods.nodes, LAYOUT, 4, whole_tp=True)
    assert floor == 136
    edges = layout_edges(pods.layout, 4)
    seq = dfs_order(problem.topology, pods.nodes)
    depth_first = []
    for _, order in candidate_orders(pods.layout, 4, 64):
        pod_of_block = np.empty(64, dtype=np.int64)
        pod_of_block[order] = seq
        depth_first.append(measure(problem.topology, pods.nodes[pod_of_block],
                                   edges).cross_leaf_edges)
    assert min(depth_first) > floor
    weights = CommWeights(pp=4, dp=4)
    name, pod_of_block, metrics = optimise(problem, pods, weights)
    assert "leaves reordered" in name
    assert metrics.cross_leaf_edges == floor
    rack = problem.topology.node_leaf[pods.nodes[pod_of_block]]
    assert (rack[0::2] == rack[1::2]).all()  # the two trays of each TP group share a rack


def test_the_chosen_order_of_the_runs_has_the_fewest_ring_edges_between_cells():
    """Against every order of three runs, by hand; nothing when the runs are already best, or
    when there is one run or more than MOST_PERMUTED_CELLS."""
    layout = parse_parallelism("pp=4,dp=2")
    edges = layout_edges(layout, 1)
    ring = np.isin(edges.kind, RING_KINDS)
    orders = candidate_orders(layout, 1, 8)
    leaf_of_seq = np.array([0, 0, 0, 1, 1, 1, 2, 2])  # runs of 3, 3, 2 pods
    found = {name: positions for name, _, positions in cell_permutations(leaf_of_seq, orders,
                                                                        edges)}
    for name, order in orders:
        def cut(positions, order=order):
            cell = np.empty(8, dtype=np.int64)
            cell[order] = leaf_of_seq[positions]  # block -> its pod's cell
            return int((cell[edges.a[ring]] != cell[edges.b[ring]]).sum())
        runs = [np.arange(0, 3), np.arange(3, 6), np.arange(6, 8)]
        best = min(cut(np.concatenate([runs[i] for i in p]))
                   for p in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)))
        key = f"{name}, leaves reordered"
        if key in found:
            assert cut(found[key]) == best < cut(np.arange(8))
        else:
            assert cut(np.arange(8)) == best
    assert cell_permutations(np.zeros(8, dtype=np.int64), orders, edges) == []
    wide = parse_parallelism("pp=4,dp=4")
    many = np.arange(MOST_PERMUTED_CELLS + 2).repeat(2)  # 8 runs of 2 pods
    assert cell_permutations(many, candidate_orders(wide, 1, 16), layout_edges(wide, 1)) == []
