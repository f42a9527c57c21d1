"""The knapsack bound of ``placed`` against the optimum found by trying every plan of tiny
instances."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from builders import gang, instance, nodes
from device_cases import gpu_nodes, share
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import instances

from toposolve.core.assignment import Assignment
from toposolve.core.instance import Instance, PriorityClass
from toposolve.core.problem import Problem, compile_problem
from toposolve.engines.contract import SolveOptions
from toposolve.engines.cpsat.solve.placed_bound import placed_upper_bound
from toposolve.engines.registry import get_engine
from toposolve.policy.objective import stage_values
from toposolve.policy.profiles import load_profile

CLASSES = [PriorityClass(name=n, value=v) for n, v in (("high", 100), ("mid", 10), ("low", 1))]


def packs(problem: Problem, pods: list[int], free: np.ndarray, at: int,
          plan: Assignment) -> bool:
    """Whether pods ``pods[at:]`` (their groups) fit the nodes' ``free`` resources."""
    if at == len(pods):
        return True
    g = pods[at]
    need = problem.group_request[g]
    for n in range(problem.n_nodes):
        if problem.group_feasible[g][n] and (free[n] >= need).all():
            free[n] -= need
            plan.add(g, n, 1)
            if packs(problem, pods, free, at + 1, plan):
                return True
            free[n] += need
            plan.counts[g][n] -= 1
    return False


def best_placed(problem: Problem) -> int:
    """The largest ``placed`` of any valid plan: every count of new pods per group that meets
    its job's minimum, packed onto the nodes by exhaustive search."""
    choices = []
    for j in problem.pending_jobs:
        groups = [g for g in problem.jobs[j].groups if problem.group_pending_count(g)]
        need = problem.jobs[j].min_available - problem.job_running_count(j)
        options = [
            dict(zip(groups, counts, strict=True))
            for counts in itertools.product(*(range(problem.group_pending_count(g) + 1)
                                              for g in groups))
            if sum(counts) == 0 or sum(counts) >= need
        ]
        choices.append(options)
    best = 0
    for combo in itertools.product(*choices):
        pods = sorted((g for per_job in combo for g, c in per_job.items() for _ in range(c)),
                      key=lambda g: -problem.group_request[g].sum())
        plan = Assignment()
        free = np.maximum(problem.allocatable - problem.used, 0).copy()
        if packs(problem, pods, free, 0, plan):
            best = max(best, stage_values(problem, plan)["placed"])
    return best


def random_instance(seed: int, *, node_count: int | None = None, one_pod: bool = False):
    rng = random.Random(seed)
    node_list = nodes(node_count or rng.randint(1, 3), gpus=8, cpu=64)
    jobs = []
    for k in range(rng.randint(2, 4)):
        pods = 1 if one_pod else rng.randint(1, 3)
        jobs.append(gang(
            f"j{k}", pods,
            gpus=rng.choice([1, 2, 3, 4, 6, 8] if one_pod else [0, 1, 2, 3, 4, 6, 8]),
            cpu=0 if one_pod else rng.choice([0, 8, 24, 40]),
            min_available=rng.randint(1, pods),
            priority_class=rng.choice(CLASSES).name,
            creation_index=k,
        ))
    if not one_pod and rng.random() < 0.5:  # a running pod takes part of node0
        jobs.append(gang("busy", 1, gpus=rng.choice([2, 4]), running={0: "node0"},
                         priority_class="low", creation_index=len(jobs)))
    return compile_problem(instance(node_list, [], jobs, CLASSES))


@pytest.mark.parametrize("seed", range(40))
def test_the_bound_is_at_least_the_optimum(seed):
    problem = random_instance(seed)
    assert placed_upper_bound(problem) >= best_placed(problem)


@pytest.mark.parametrize("seed", range(15))
def test_one_node_of_whole_gpu_pods_is_a_knapsack_the_bound_solves_exactly(seed):
    problem = random_instance(seed, node_count=1, one_pod=True)
    assert placed_upper_bound(problem) == best_placed(problem)


def test_a_level_that_cannot_fill_the_room_leaves_it_to_the_level_below():
    # one 16-GPU node; high: 6 + 6 (12: a third 6 would not fit); low: 4 fits the rest exactly
    jobs = [gang("h1", 1, gpus=6, priority_class="high"),
            gang("h2", 1, gpus=6, priority_class="high", creation_index=1),
            gang("h3", 1, gpus=6, priority_class="high", creation_index=2),
            gang("l1", 1, gpus=4, priority_class="low", creation_index=3)]
    problem = compile_problem(instance(nodes(1, gpus=16), [], jobs, CLASSES))
    assert placed_upper_bound(problem) == best_placed(problem)
    low_weight = 1  # the lowest level's dominance weight
    high_weight = 1 + 4  # one more than all the low level's units
    assert placed_upper_bound(problem) == high_weight * 12 + low_weight * 4


def test_the_bound_pools_the_nodes():
    # the same on two 8-GPU nodes: 6 + 6 leave 2 + 2, where the 4 does not fit; the bound
    # (pooled: 16 GPUs) still counts it, as it may
    jobs = [gang("h1", 1, gpus=6, priority_class="high"),
            gang("h2", 1, gpus=6, priority_class="high", creation_index=1),
            gang("l1", 1, gpus=4, priority_class="low", creation_index=2)]
    problem = compile_problem(instance(nodes(2), [], jobs, CLASSES))
    assert best_placed(problem) == 5 * 12 < placed_upper_bound(problem) == 5 * 12 + 4


def test_pods_without_accelerators_count_in_full():
    # two 6-GPU pods cannot both fit 8 GPUs; the CPU-only pods take no accelerator room
    jobs = [gang("g", 2, gpus=6, min_available=1), gang("c", 3, gpus=0, cpu=8, creation_index=1)]
    problem = compile_problem(instance(nodes(1), [], jobs))
    assert placed_upper_bound(problem) == best_placed(problem) == 6 + 3


def test_per_device_sharing_gets_no_bound():
    problem = compile_problem(Instance(nodes=gpu_nodes(2), jobs=[share("s", 500, replicas=2)]))
    assert problem.has_devices and placed_upper_bound(problem) is None


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          derandomize=True)
@given(st.one_of(instances(max_nodes=16, max_jobs=8),
                 instances(crowded=True, max_nodes=10, max_jobs=6, pools_and_shrunk=True)))
def test_the_bound_is_at_least_what_the_mirror_places(inst):
    # topology, SubJobs, queues, pools, running pods: the mirror's plans are valid plans
    problem = compile_problem(inst)
    bound = placed_upper_bound(problem)
    mirror = get_engine("volcano").load()(problem, load_profile(None), SolveOptions()).assignment
    assert bound is None or stage_values(problem, mirror)["placed"] <= bound
