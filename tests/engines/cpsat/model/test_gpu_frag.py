"""The ``gpu_fragmentation`` and ``node_order`` stages: equal to the policy's values, optimal
against brute force on small instances, lower than the mirror's where the answer is known,
deterministic."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from builders import GPU, instance, leaf
from cpsat_support import solve_checked

from toposolve.core.assignment import Assignment
from toposolve.core.instance import Job, Node, Task
from toposolve.core.problem import compile_problem
from toposolve.engines.volcano import run_heuristic
from toposolve.policy.gpu_fragmentation import plan_gpu_fragmentation, target_workload
from toposolve.policy.objective import stage_values, usage_after
from toposolve.policy.profiles import load_profile

SHAPES = [("500m", 2), (1, 1), (None, 3), ("250m", 1), (2, 4), ("750m", 5)]  # (GPU, CPU)


def pod(name: str, gpu, cpu: int, node: str | None = None) -> Job:
    requests = {"cpu": cpu} | ({GPU: gpu} if gpu is not None else {})
    running = {0: node} if node else {}
    return Job(name=name, tasks=[Task(name="t", replicas=1, requests=requests, running=running)])


def milli(gpu) -> int:
    return 0 if gpu is None else (int(gpu[:-1]) if isinstance(gpu, str) else 1000 * gpu)


def random_instance(seed: int, pending: int = 3):
    """Four 2-GPU nodes of 4–16 CPUs in one leaf, random running pods, ``pending`` new ones."""
    rng = np.random.default_rng(seed)
    cpus = rng.choice([4, 8, 16], 4).tolist()
    node_list = [Node(name=f"n{i}", allocatable={"cpu": c, GPU: 2}) for i, c in enumerate(cpus)]
    free = [[2000, c] for c in cpus]
    jobs = []
    for k in range(6):
        gpu, cpu = SHAPES[int(rng.integers(len(SHAPES)))]
        n = int(rng.integers(4))
        if free[n][0] >= milli(gpu) and free[n][1] >= cpu:
            free[n][0] -= milli(gpu)
            free[n][1] -= cpu
            jobs.append(pod(f"r{k}", gpu, cpu, f"n{n}"))
    for k in range(pending):
        gpu, cpu = SHAPES[int(rng.integers(len(SHAPES)))]
        jobs.append(pod(f"p{k}", gpu, cpu))
    return instance(node_list, [leaf("l0", [f"n{i}" for i in range(4)])], jobs)


def brute_force(problem) -> tuple[int, int]:
    """(most placed, least gpu_fragmentation among plans placing that) over every placement of
    the pending one-pod jobs (each on a node or not placed)."""
    groups = [g for g in range(len(problem.group_job)) if problem.group_pending[g]]
    best = (-1, 0)
    for choice in itertools.product(range(-1, problem.n_nodes), repeat=len(groups)):
        plan = Assignment()
        for g, n in zip(groups, choice, strict=True):
            if n >= 0:
                plan.add(g, n, 1)
        if (usage_after(problem, plan) > problem.allocatable).any():
            continue
        values = stage_values(problem, plan)
        key = (values["placed"], -values["gpu_fragmentation"])
        best = max(best, key)
    return best[0], -best[1]


@pytest.mark.parametrize("seed", range(4))
def test_stage_value_is_the_plan_metric_and_the_optimum(seed):
    solved = solve_checked(random_instance(seed), load_profile("fgd"), time_limit=10)
    problem, assignment = solved.problem, solved.result.assignment
    runs = {r["stage"]: r for r in solved.result.stats["stages"]}
    value = stage_values(problem, assignment)["gpu_fragmentation"]
    assert runs["gpu_fragmentation"]["status"] == "OPTIMAL"
    assert runs["gpu_fragmentation"]["objective"] == value
    pods = int(target_workload(problem).weight.sum())
    metric = plan_gpu_fragmentation(problem, usage_after(problem, assignment))
    assert metric * pods == pytest.approx(value)
    assert (stage_values(problem, assignment)["placed"], value) == brute_force(problem)


def test_warm_start_encodes_the_stage():
    solved = solve_checked(random_instance(1), load_profile("fgd"), time_limit=10)
    assert solved.result.stats["hint_feasible"] is True
    assert solved.result.stats["hint_dropped_pods"] == 0


def hand_built():
    """n0: 6 of 8 CPUs taken by a CPU-only pod; n1: half its GPU taken; n2: full. One pending
    0.5-GPU pod. Target: 1 whole-GPU, 2 half-GPU and 1 CPU-only pods (weights 1, 2, 1).

    On n0: n0 and n1 keep 500 free each, unusable by the whole-GPU and the CPU-only shapes:
    2 × (500 + 500) = 2000. On n1: n0 keeps 1000, usable by all but the CPU-only shape: 1000.
    """
    node_list = [Node(name=f"n{i}", allocatable={"cpu": 8, GPU: 1}) for i in range(3)]
    jobs = [pod("w", 1, 1, "n2"), pod("h", "500m", 1, "n1"), pod("c", None, 6, "n0"),
            pod("p", "500m", 1)]
    return instance(node_list, [leaf("l0", ["n0", "n1", "n2"])], jobs)


def test_stage_fills_the_partly_used_gpu_where_the_mirror_does_not():
    inst = hand_built()
    problem = compile_problem(inst)
    mirror = run_heuristic(problem, load_profile("lexicographic"))
    assert stage_values(problem, mirror)["gpu_fragmentation"] == 2000  # on n0
    fgd = solve_checked(inst, load_profile("fgd"), time_limit=5)
    assert fgd.nodes_of("p") == ["n1"]
    assert stage_values(problem, fgd.result.assignment)["gpu_fragmentation"] == 1000
    default = solve_checked(inst, load_profile("lexicographic"), time_limit=5)
    # the default profile does not see it: either node is optimal for its stages
    assert stage_values(problem, default.result.assignment)["gpu_fragmentation"] >= 1000


def test_node_order_breaks_the_last_ties_towards_the_first_nodes():
    # four identical empty nodes, two pending 1-GPU pods: every placement ties until node_order
    node_list = [Node(name=f"n{i}", allocatable={"cpu": 8, GPU: 1}) for i in range(4)]
    inst = instance(node_list, [leaf("l0", [f"n{i}" for i in range(4)])],
                    [pod("a", 1, 1), pod("b", 1, 1)])
    solved = solve_checked(inst, load_profile("fgd"), time_limit=5)
    assert sorted(solved.nodes_of("a") + solved.nodes_of("b")) == ["n0", "n1"]
    assert stage_values(solved.problem, solved.result.assignment)["node_order"] == 0 + 1


def test_same_input_same_plan():
    inst = random_instance(2, pending=4)
    first = solve_checked(inst, load_profile("fgd"), time_limit=5)
    second = solve_checked(inst, load_profile("fgd"), time_limit=5)
    assert first.plan.bindings == second.plan.bindings
