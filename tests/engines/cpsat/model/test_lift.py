"""The lifted model (``engines/cpsat/model/lift.py``): whole-node pods counted per class of
identical
nodes of a higher domain — exact, so it must reach the plain exact model's optimum."""

from __future__ import annotations

import numpy as np
import pytest
from builders import gang, hard, inner, instance, leaf, nodes, soft
from cpsat_support import solve_checked

from toposolve.core.problem import compile_problem
from toposolve.engines.cpsat.model.candidates import build_candidates
from toposolve.engines.cpsat.model.classes import Scope
from toposolve.engines.cpsat.model.lift import exclusive_groups
from toposolve.engines.cpsat.solve import coarse
from toposolve.generate import generate


def per_node_tree(count: int):
    """scale-6k's shape in small: a leaf per node (tier 1), node pairs (tier 2), the top (tier
    3)."""
    return [
        *(leaf(f"n{i}", [f"node{i}"]) for i in range(count)),
        *(inner(f"p{k}", [f"n{2 * k}", f"n{2 * k + 1}"], 2) for k in range(count // 2)),
        inner("top", [f"p{k}" for k in range(count // 2)], 3),
    ]


@pytest.fixture
def lifted(monkeypatch):
    """Every model too large for the plain exact one, none too large for the lifted one."""
    monkeypatch.setattr(coarse, "COUNT_BUDGET", 1)
    monkeypatch.setattr(coarse, "LIFT_BUDGET", 10**9)


def test_groups_lift_to_the_lowest_level_their_job_needs():
    jobs = [
        gang("pair", 2, topology=hard(2)),  # both pods in one pair: per class of identical pairs
        gang("anywhere", 3),  # no limit, no pair or node has room for it: the whole cluster
        gang("single", 1, topology=hard(1)),  # one pod is always on one node: whole cluster
        gang("small", 1, gpus=2),  # shares nodes (not exclusive), lifted too: one pod
    ]
    problem = compile_problem(instance(nodes(8), per_node_tree(8), jobs))
    cands = build_candidates(problem, Scope(lift=True))
    by_job = {problem.jobs[int(problem.group_job[g])].key: g for g in cands.allowed}
    # levels: 0 nodes, 1 pairs, 2 the top, 3 the root above it (same nodes: the same class)
    assert cands.lift_level == {
        by_job["default/pair"]: 1,
        by_job["default/anywhere"]: 2,
        by_job["default/single"]: 3,
        by_job["default/small"]: 3,
    }
    assert cands.exclusive == {
        by_job[k] for k in ("default/pair", "default/anywhere", "default/single")
    }
    sizes = {
        name: sorted(cands.classes.size[cands.allowed[g]].tolist()) for name, g in by_job.items()
    }
    # the four free pairs are identical: one domain class of 8 nodes (a filler takes a whole pair)
    assert sizes == {
        "default/pair": [8],
        "default/anywhere": [8],
        "default/single": [8],
        "default/small": [8],
    }
    (pairs,) = cands.allowed[by_job["default/pair"]].tolist()
    assert [d.tolist() for d in cands.classes.domains[pairs]] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert cands.fit[by_job["default/small"]].tolist() == [4]  # 2-GPU pods on 8-GPU nodes
    assert cands.job_units[int(problem.group_job[by_job["default/single"]])].trivial


def test_a_group_is_exclusive_only_if_nothing_fits_beside_it():
    requests = np.array([[8, 0], [0, 4], [2, 0]])  # [GPU, cpu] per group; nodes of 8 GPUs, 8 cpu
    idle = np.array([[8, 8], [8, 8]])
    both = {0: np.array([True, True]), 1: np.array([True, False]), 2: np.array([False, True])}
    # group 1 (cpu only) fits beside group 0 on class 0; group 2's pods fit beside each other
    assert exclusive_groups([0, 1, 2], requests, both, idle) == set()
    alone = {0: np.array([True, False]), 1: np.array([False, True]), 2: np.array([False, True])}
    assert exclusive_groups([0, 1, 2], requests, alone, idle) == {0}


def test_idle_leaves_of_several_nodes_keep_their_own_classes():
    # fragmentation counts touched idle leaves: a class spanning two such leaves could not say
    # how many it touches, so classes merge across busy and one-node leaves only
    inst = generate("superpod", nodes=64, leaf_size=8, fanout=(2, 4), load=1.2, seed=0)
    problem = compile_problem(inst)
    cands = build_candidates(problem, Scope(lift=True))
    assert cands.lift_level
    leaf_of = cands.levels.domain[0][problem.topology.node_home]
    for nodes_of_class in cands.classes.nodes:
        assert len(set(leaf_of[nodes_of_class].tolist())) == 1


@pytest.mark.parametrize("seed", [0, 1])
def test_the_lifted_model_reaches_the_exact_optimum(lifted, monkeypatch, seed):
    inst = generate("scale-6k", nodes=64, load=1.2, seed=seed, jobs=16)
    monkeypatch.setattr(coarse, "COUNT_BUDGET", 10**9)
    exact = solve_checked(inst, time_limit=20, deterministic=True)
    monkeypatch.setattr(coarse, "COUNT_BUDGET", 1)
    lift = solve_checked(inst, time_limit=20, deterministic=True)
    assert lift.result.stats["lifted"] and not exact.result.stats["lifted"]
    assert lift.result.stats["count_variables"] < exact.result.stats["count_variables"] / 2
    assert exact.result.status == lift.result.status == "OPTIMAL"
    assert lift.result.objective.stages == exact.result.objective.stages


def test_small_pods_share_nodes_beside_lifted_whole_node_gangs(lifted):
    # 8 nodes: gangs of 4 and 3 whole nodes leave one node, which two 2-GPU and one 4-GPU pod
    # share: every pod is placed only if the shared node is counted once
    jobs = [
        gang("big", 4),
        gang("mid", 3),
        gang("a", 1, gpus=2),
        gang("b", 1, gpus=2),
        gang("c", 1, gpus=4),
    ]
    solved = solve_checked(
        instance(nodes(8), per_node_tree(8), jobs), time_limit=10, deterministic=True
    )
    assert solved.result.stats["lifted"] and solved.result.status == "OPTIMAL"
    assert all(solved.job(name).placed for name in ("big", "mid", "a", "b", "c"))
    assert len({*solved.nodes_of("a"), *solved.nodes_of("b"), *solved.nodes_of("c")}) == 1


def test_small_pods_of_different_needs_still_share_a_node(lifted):
    # "pair-of-2s" wants its two 2-GPU pods on one node (soft, level 0), "one" is a single 4-GPU
    # pod (no need at all): they may share a node, so both stay on the same classes; three
    # whole nodes go to "big" and everything fits only if the fourth node holds all three pods
    jobs = [gang("big", 3), gang("pair-of-2s", 2, gpus=2, topology=soft()), gang("one", 1, gpus=4)]
    solved = solve_checked(
        instance(nodes(4), per_node_tree(4), jobs), time_limit=10, deterministic=True
    )
    assert solved.result.stats["lifted"] and solved.result.status == "OPTIMAL"
    assert all(solved.job(name).placed for name in ("big", "pair-of-2s", "one"))


def test_gangs_that_fill_a_domain_get_whole_domains_of_their_domain_class(lifted):
    # three pair-limited gangs and one that would rather be in a pair share one domain class of
    # four identical pairs: each must land in a pair of its own (the checker checks the limits)
    jobs = [gang(f"p{k}", 2, topology=hard(2)) for k in range(3)] + [
        gang("soft", 2, topology=soft())
    ]
    solved = solve_checked(
        instance(nodes(8), per_node_tree(8), jobs), time_limit=10, deterministic=True
    )
    assert solved.result.stats["lifted"] and solved.result.status == "OPTIMAL"
    pairs = [tuple(solved.nodes_of(name)) for name in ("p0", "p1", "p2", "soft")]
    assert sorted(pairs) == [
        ("node0", "node1"),
        ("node2", "node3"),
        ("node4", "node5"),
        ("node6", "node7"),
    ]
    assert solved.result.objective.stages["spread"] == 4 * 2  # every gang within a tier-2 pair
