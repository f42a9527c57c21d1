"""The Volcano mirror places shared pods on devices; engines that cannot refuse in one line."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from tests.device_cases import checked_device_plan, device_instances, gpu_nodes, share, whole
from toposolve.core.instance import Instance
from toposolve.core.problem import compile_problem
from toposolve.engines.contract import EngineRefusal, SolveOptions
from toposolve.engines.volcano import run_heuristic
from toposolve.solve import solve_problem


def test_whole_gpu_waits_when_the_pool_has_room_but_no_device_is_free():
    # two devices, each half used: 1000m free in the pool, no free device
    running = [share(f"r{d}", 500, running={0: "n0"}, device_use={0: {d: 500}}) for d in (0, 1)]
    instance = Instance(nodes=gpu_nodes(2), jobs=[*running, whole("w", 1)])
    plan = solve_problem(compile_problem(instance), "volcano")
    assert plan.bindings == [] and not plan.job("default/w").placed


def test_shared_pods_take_the_lowest_device_that_fits():
    running = share("r", 800, running={0: "n0"}, device_use={0: {0: 800}})
    jobs = [running, share("a", 400), share("b", 200), share("c", 500)]
    plan = solve_problem(compile_problem(Instance(nodes=gpu_nodes(2), jobs=jobs)), "volcano")
    devices = {b.pod: b.devices for b in plan.bindings}
    # a: device 0 has 200 free, so 1; b fits device 0; c: 600 left on device 1
    assert devices == {"default/a-w-0": [1], "default/b-w-0": [0], "default/c-w-0": [1]}


def test_a_gang_of_shares_fits_by_devices_not_by_pool():
    # 3 × 700m: the pool of two GPUs holds 2000m but only two devices take 700m each
    instance = Instance(nodes=gpu_nodes(2), jobs=[share("g", 700, replicas=3)])
    plan = solve_problem(compile_problem(instance), "volcano")
    assert plan.bindings == []
    two = Instance(nodes=gpu_nodes(2, 1), jobs=[share("g", 700, replicas=3)])
    plan = solve_problem(compile_problem(two), "volcano")
    assert sorted((b.node, tuple(b.devices)) for b in plan.bindings) == [
        ("n0", (0,)), ("n0", (1,)), ("n1", (0,))]


@pytest.mark.parametrize("engine", ["kueue"])
def test_other_engines_refuse_in_one_line(engine):
    problem = compile_problem(Instance(nodes=gpu_nodes(2), jobs=[share("a", 300)]))
    with pytest.raises(EngineRefusal, match="per-device sharing of nvidia.com/gpu") as err:
        solve_problem(problem, engine)
    assert "\n" not in str(err.value)


def test_eviction_is_refused_with_devices():
    problem = compile_problem(Instance(nodes=gpu_nodes(2), jobs=[share("a", 300)]))
    with pytest.raises(EngineRefusal, match="with eviction"):
        solve_problem(problem, "volcano", options=SolveOptions(evict="both"))


def test_without_shares_whole_gpu_plans_carry_no_devices():
    instance = Instance(nodes=gpu_nodes(2, 4), jobs=[whole("w", 2, replicas=2)])
    plan = solve_problem(compile_problem(instance), "volcano")
    assert plan.bindings and all(b.devices is None for b in plan.bindings)
    assert "devices" not in plan.to_json()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(device_instances())
def test_random_device_instances_give_checked_plans(instance):
    checked_device_plan(instance, "volcano", run_heuristic)


def test_defrag_refuses_devices_in_one_line():
    from toposolve.defrag import defrag

    instance = Instance(nodes=gpu_nodes(2), jobs=[share("a", 300)])
    with pytest.raises(EngineRefusal, match="'defrag' does not support per-device"):
        defrag(instance, admit=["default/a"])
