"""The kube mirror with per-device sharing: a node passes only if a device fits (the device
plugin's admission), pods take devices by the kernel's first fit."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from tests.device_cases import checked_device_plan, device_instances, gpu_nodes, share, whole
from toposolve.core.instance import Instance
from toposolve.core.problem import compile_problem
from toposolve.engines.kube import run_kube
from toposolve.solve import solve_problem


def devices_of(plan):
    return {b.pod: (b.node, b.devices) for b in plan.bindings}


def test_pooled_room_that_no_device_holds_is_not_used():
    # n0: two devices at 600m each (800m free pooled, no device takes 700m); n1: one idle device
    running = [share(f"r{d}", 600, running={0: "n0"}, device_use={0: {d: 600}}) for d in (0, 1)]
    instance = Instance(nodes=gpu_nodes(2, 1), jobs=[*running, share("a", 700, replicas=2)])
    plan = solve_problem(compile_problem(instance), "kube")
    assert plan.bindings == [] and not plan.job("default/a").placed
    one = Instance(nodes=gpu_nodes(2, 1), jobs=[*running, share("a", 700)])
    plan = solve_problem(compile_problem(one), "kube")
    assert devices_of(plan) == {"default/a-w-0": ("n1", [0])}


def test_shared_pods_take_the_lowest_device_that_fits():
    running = share("r", 800, running={0: "n0"}, device_use={0: {0: 800}})
    jobs = [running, share("a", 400), share("b", 200)]
    plan = solve_problem(compile_problem(Instance(nodes=gpu_nodes(2), jobs=jobs)), "kube")
    assert devices_of(plan) == {"default/a-w-0": ("n0", [1]), "default/b-w-0": ("n0", [0])}


def test_a_whole_gpu_needs_an_idle_device():
    running = [share(f"r{d}", 500, running={0: "n0"}, device_use={0: {d: 500}}) for d in (0, 1)]
    instance = Instance(nodes=gpu_nodes(2), jobs=[*running, whole("w", 1)])
    plan = solve_problem(compile_problem(instance), "kube")
    assert plan.bindings == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(device_instances())
def test_random_device_instances_give_checked_plans(instance):
    checked_device_plan(instance, "kube", run_kube)
