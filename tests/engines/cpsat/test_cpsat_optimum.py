"""Instances with a known optimum that a greedy, queue-order scheduler misses.

Expected objective values are derived by hand from ``toposolve.policy.objective``; the heuristic is
run on every instance (in ``solve_checked``) and CP-SAT must be at least as good.
"""

from __future__ import annotations

import pytest
from builders import GPU, example1_tree, gang, hard, instance, nodes
from cpsat_support import solve_checked

from toposolve.check.checker import check_plan
from toposolve.core.assignment import Assignment, to_plan
from toposolve.core.instance import Job, Node, Task
from toposolve.core.problem import compile_problem
from toposolve.policy.objective import evaluate
from toposolve.policy.profiles import load_profile

GI = 1024**3  # bytes in 1 GiB


def single_pod(name: str, gpus: int, creation_index: int) -> Job:
    return gang(name, 1, gpus=gpus, creation_index=creation_index)


def bin_packing_instance():
    """Two 8-GPU nodes, no HyperNodes; one-pod jobs of 3, 3, 5, 5 GPUs in that queue order.

    First fit in queue order puts both 3s on node0 (2 GPUs left), the first 5 on node1 (3 left)
    and cannot place the last 5. Pairing 3+5 on each node places all four.
    """
    jobs = [
        single_pod(n, g, k) for k, (n, g) in enumerate([("a", 3), ("b", 3), ("c", 5), ("d", 5)])
    ]
    return instance(nodes(2), [], jobs)


def only_domain_instance():
    """Two tier-1 HyperNodes of two nodes. node3 runs a pod holding all its memory, no GPU.

    ``small`` (queue first): 1 pod × 8 GPUs, hard tier 1, no memory request.
    ``pair``: 2 pods × (8 GPUs, 16 GiB), hard tier 1 → only s0 can hold it (node3 has no
    memory left). A greedy choice of s0 for ``small`` (GPU binpack ties s0 and s1; ties go to the
    first) leaves ``pair`` nowhere; the optimum puts ``small`` on node2 or node3.
    """
    node_list = [
        Node(name=f"node{i}", allocatable={"cpu": 64, "memory": 256 * GI, GPU: 8}) for i in range(4)
    ]
    tree = example1_tree()[:2]  # s0 = {node0, node1}, s1 = {node2, node3}
    hog = Job(
        name="hog",
        min_available=1,
        tasks=[Task(name="t", replicas=1, requests={"memory": 256 * GI}, running={0: "node3"})],
    )
    small = gang("small", 1, topology=hard(1), creation_index=0)
    pair = Job(
        name="pair",
        min_available=2,
        creation_index=1,
        network_topology=hard(1),
        tasks=[Task(name="worker", replicas=2, requests={GPU: 8, "memory": 16 * GI})],
    )
    return instance(node_list, tree, [hog, small, pair])


def test_bin_packing_places_every_job_where_greedy_places_three():
    solved = solve_checked(bin_packing_instance())
    # all four placed: 3 + 3 + 5 + 5 units; no HyperNodes → the root (tier 1) holds each job,
    # and the root is the only leaf, idle before and touched
    assert solved.result.status == "OPTIMAL"
    assert solved.result.objective.stages == {"placed": 16, "spread": 4, "fragmentation": 1}
    assert solved.result.bound == 16 and solved.result.gap == 0
    pairs = {
        tuple(sorted(b.pod.split("/")[1][0] for b in solved.plan.bindings if b.node == n))
        for n in ("node0", "node1")
    }
    assert pairs == {("a", "c"), ("b", "d")} or pairs == {("a", "d"), ("b", "c")}
    if solved.heuristic is not None:  # the greedy scheduler misses one 5-GPU job
        assert solved.heuristic.stages["placed"] == 11


def test_small_hard_job_leaves_the_only_domain_the_pair_needs():
    solved = solve_checked(only_domain_instance())
    assert solved.nodes_of("pair") == ["node0", "node1"]
    assert solved.nodes_of("small") in (["node2"], ["node3"])
    # placed 8 + 16; spread 1 + 1 (each in one tier-1 HyperNode); fragmentation: s0 was idle
    # and is touched, s1 was busy (the hog) before
    assert solved.result.objective.stages == {"placed": 24, "spread": 2, "fragmentation": 1}
    assert solved.job("pair").hypernode == "s0"
    if solved.heuristic is not None:
        assert solved.heuristic.stages["placed"] == 8


def test_lower_stages_break_ties_of_placed():
    """Two one-pod jobs on Example 1: any placement gives placed 16; spread 2 needs each in a
    tier-1 HyperNode (always), fragmentation 1 needs both in the same one."""
    inst = instance(nodes(8), example1_tree(), [gang("a", 1), gang("b", 1)])
    solved = solve_checked(inst)
    assert solved.result.objective.stages == {"placed": 16, "spread": 2, "fragmentation": 1}
    nodes_used = solved.nodes_of("a") + solved.nodes_of("b")
    leaves = {
        ("node0", "node1"): "s0",
        ("node2", "node3"): "s1",
        ("node4", "node5"): "s2",
        ("node6", "node7"): "s3",
    }
    assert len({leaf for members, leaf in leaves.items() if set(nodes_used) & set(members)}) == 1


HAND_MADE = {
    # job name -> node index of its single pod (``pair`` takes two nodes)
    "bin_packing": [{"a": [0], "b": [0], "c": [1]}, {"a": [0], "c": [0], "b": [1]}, {"d": [1]}],
    "only_domain": [{"small": [0]}, {"pair": [0, 1]}, {"small": [2]}],
}


@pytest.mark.parametrize(
    ("builder", "key"),
    [(bin_packing_instance, "bin_packing"), (only_domain_instance, "only_domain")],
)
def test_cpsat_is_at_least_as_good_as_hand_made_plans(builder, key):
    inst = builder()
    profile = load_profile("lexicographic")
    solved = solve_checked(inst, profile)
    problem = compile_problem(inst)
    by_name = {cj.key.split("/")[1]: cj for cj in problem.jobs}
    for layout in HAND_MADE[key]:
        plan = Assignment()
        for name, node_list in layout.items():
            (g,) = [g for g in by_name[name].groups if problem.group_pending[g]]
            for n in node_list:
                plan.add(g, n, 1)
        assert check_plan(inst, to_plan(problem, plan, engine="hand", status="FEASIBLE")) == []
        assert solved.result.objective.better_or_equal(evaluate(problem, plan, profile.objective))


def test_jobs_first_profile_prefers_more_jobs_over_more_gpus():
    """8 nodes × 8 GPUs (Example-1 tree). A needs 6 nodes (hard tier 3); three 2-node jobs
    need a rack each. GPUs first: A + one pair (64 GPUs, 2 jobs). Jobs first: the three pairs
    (3 jobs, 48 GPUs) — A no longer fits in the 2 nodes left."""
    from builders import example1_tree, gang, hard, instance, nodes

    from toposolve.solve import solve

    jobs = [gang("a", 6, topology=hard(3), creation_index=0)] + [
        gang(f"p{k}", 2, topology=hard(1), creation_index=k + 1) for k in range(3)
    ]
    inst = instance(nodes(8), example1_tree(), jobs)
    gpus_first = solve(inst, "cpsat", time_limit=10, deterministic=True)
    jobs_first = solve(inst, "cpsat", "jobs-first", time_limit=10, deterministic=True)
    assert gpus_first.job("default/a").placed and len(gpus_first.bindings) == 8
    assert sorted(j.job for j in jobs_first.jobs if j.placed) == [
        "default/p0",
        "default/p1",
        "default/p2",
    ]
    assert jobs_first.stats["objective_stages"]["placed_jobs"] == 3
