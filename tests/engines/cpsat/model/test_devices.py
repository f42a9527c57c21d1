"""CP-SAT places shared pods on devices: exact per-device room, checked plans, warm start."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings

from tests.device_cases import device_instances, gpu_nodes, share, whole
from toposolve.check.checker import check_plan
from toposolve.core.assignment import from_plan
from toposolve.core.instance import Instance
from toposolve.core.problem import compile_problem
from toposolve.engines.contract import SolveOptions
from toposolve.engines.cpsat.model.devices import split_pods
from toposolve.engines.cpsat.model.hint import hint_from_assignment, hint_is_feasible
from toposolve.engines.cpsat.model.model import PlacementModel
from toposolve.engines.cpsat.solve.parameters import resolve_settings
from toposolve.engines.volcano import run_heuristic
from toposolve.policy.objective import stage_values
from toposolve.policy.profiles import load_profile
from toposolve.solve import solve_problem

QUICK = SolveOptions(time_limit=3, deterministic=True)


def device_load(plan, milli_of):
    """(node, device) -> thousandths the plan's new pods put there."""
    load: dict[tuple[str, int], int] = {}
    for b in plan.bindings:
        for d in b.devices:
            load[(b.node, d)] = load.get((b.node, d), 0) + milli_of[b.pod.split("-w-")[0]]
    return load


def test_three_shares_that_the_pool_holds_but_two_devices_do_not():
    # 3 × 600m on one node of two GPUs: the pool has 2000m, each device holds one share
    jobs = [share(f"s{k}", 600) for k in range(3)]
    instance = Instance(nodes=gpu_nodes(2), jobs=jobs)
    plan = solve_problem(compile_problem(instance), "cpsat", options=QUICK)
    assert check_plan(instance, plan, eviction_mode="none") == []
    assert len(plan.bindings) == 2
    assert sorted(b.devices[0] for b in plan.bindings) == [0, 1]


def test_a_whole_gpu_waits_when_only_the_pool_has_room():
    running = [share(f"r{d}", 500, running={0: "n0"}, device_use={0: {d: 500}}) for d in (0, 1)]
    instance = Instance(nodes=gpu_nodes(2), jobs=[*running, whole("w", 1)])
    plan = solve_problem(compile_problem(instance), "cpsat", options=QUICK)
    assert plan.bindings == []


def test_cpsat_packs_devices_first_fit_cannot():
    # first fit: a, b on device 0 (200 left), c on device 1 (400 left), d stays pending;
    # a + c and b + d fill both devices exactly
    jobs = [share("a", 400), share("b", 400), share("c", 600), share("d", 600)]
    instance = Instance(nodes=gpu_nodes(2), jobs=jobs)
    problem = compile_problem(instance)
    mirror = solve_problem(problem, "volcano")
    plan = solve_problem(problem, "cpsat", options=QUICK)
    assert len(mirror.bindings) == 3
    assert check_plan(instance, plan, eviction_mode="none") == []
    assert len(plan.bindings) == 4
    milli = {"default/a": 400, "default/b": 400, "default/c": 600, "default/d": 600}
    assert sorted(device_load(plan, milli).values()) == [1000, 1000]


def test_multi_device_shares_take_distinct_devices():
    # 2 pods of 2 × 500m on a node of 3 GPUs: 4 shares over 3 devices, none twice per pod
    instance = Instance(nodes=gpu_nodes(3), jobs=[share("m", 500, replicas=2, count=2)])
    plan = solve_problem(compile_problem(instance), "cpsat", options=QUICK)
    assert check_plan(instance, plan, eviction_mode="none") == []
    assert len(plan.bindings) == 2
    assert all(len(set(b.devices)) == 2 for b in plan.bindings)


def test_split_pods_gives_each_pod_distinct_devices():
    pods = split_pods({0: 2, 1: 1, 2: 2, 3: 1}, 3)
    assert len(pods) == 2 and all(len(set(p)) == 3 for p in pods)
    used = np.bincount([d for p in pods for d in p], minlength=4)
    assert used.tolist() == [2, 1, 2, 1]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(device_instances(max_nodes=5, max_jobs=7, shares=(100, 250, 400, 600, 1000)))
def test_random_device_instances_give_checked_plans_placing_at_least_the_mirror(instance):
    problem = compile_problem(instance)
    mirror = solve_problem(problem, "volcano")
    plan = solve_problem(problem, "cpsat", options=QUICK)
    assert check_plan(instance, plan, eviction_mode="none") == []
    shared = instance.device_resource is not None  # whole GPUs alone: no device model
    assert all((b.devices is not None) == shared for b in plan.bindings)
    placed = stage_values(problem, from_plan(problem, plan))["placed"]
    assert placed >= stage_values(problem, from_plan(problem, mirror))["placed"]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(device_instances(max_nodes=5, max_jobs=7, shares=(100, 250, 400, 600, 1000)))
def test_the_mirrors_plan_is_a_feasible_complete_hint(instance):
    problem = compile_problem(instance)
    pm = PlacementModel(problem)
    hint = hint_from_assignment(pm, run_heuristic(problem))
    assert hint.complete and hint.fits_nodes
    assert len(hint.values) == len(pm.model.proto.variables)
    options = SolveOptions(time_limit=5, deterministic=True)
    settings_ = resolve_settings(load_profile(None), options)
    assert hint_is_feasible(pm.model, hint.values, settings_, 5.0) is True


def test_the_same_device_instance_gives_the_same_plan_bytes():
    jobs = [share("a", 300, replicas=3), share("b", 700, replicas=2), whole("w", 2),
            share("m", 500, replicas=2, count=2)]
    instance = Instance(nodes=gpu_nodes(4, 2, 8, 1), jobs=jobs)
    plans = [solve_problem(compile_problem(instance), "cpsat", options=QUICK) for _ in range(2)]
    assert plans[0].bindings and all(b.devices for b in plans[0].bindings)
    assert plans[0].to_json(timings=False) == plans[1].to_json(timings=False)


def test_a_node_whose_pods_do_not_pack_is_modelled_alone_next_round():
    # two identical nodes of two GPUs: the class's pooled room takes 3 × 600m on the first
    # node, its devices only 2, so that node is split out with device variables
    jobs = [share(f"s{k}", 600) for k in range(4)]
    instance = Instance(nodes=gpu_nodes(2, 2), jobs=jobs)
    plan = solve_problem(compile_problem(instance), "cpsat", options=QUICK)
    assert check_plan(instance, plan, eviction_mode="none") == []
    assert len(plan.bindings) == 4
    assert plan.stats["refined_classes"] >= 1
    assert sorted((b.node, b.devices[0]) for b in plan.bindings) == [
        ("n0", 0), ("n0", 1), ("n1", 0), ("n1", 1)]
