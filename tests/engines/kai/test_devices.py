"""The KAI mirror places fractional GPU pods on devices by KAI's gpupack and gpusharingorder."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from tests.device_cases import checked_device_plan, device_instances, gpu_nodes, share, whole
from toposolve.core.instance import Instance
from toposolve.core.problem import compile_problem
from toposolve.engines.kai import run_kai
from toposolve.solve import solve_problem


def devices_of(plan):
    return {b.pod: (b.node, b.devices) for b in plan.bindings}


def test_a_fraction_takes_the_most_used_device_that_fits():
    # device 0 holds 200m, device 1 600m, device 2 900m: 300m fits 0 and 1; gpupack takes 1
    running = [share(f"r{d}", m, running={0: "n0"}, device_use={0: {d: m}})
               for d, m in ((0, 200), (1, 600), (2, 900))]
    instance = Instance(nodes=gpu_nodes(3), jobs=[*running, share("a", 300)])
    plan = solve_problem(compile_problem(instance), "kai")
    assert devices_of(plan)["default/a-w-0"] == ("n0", [1])
    # the Volcano mirror's first fit takes device 0 on the same instance
    volcano = solve_problem(compile_problem(instance), "volcano")
    assert devices_of(volcano)["default/a-w-0"] == ("n0", [0])


def test_pooled_room_that_no_device_holds_is_not_used():
    # two devices at 600m each: the pool has 800m free, yet a 700m fraction fits no device
    running = [share(f"r{d}", 600, running={0: "n0"}, device_use={0: {d: 600}}) for d in (0, 1)]
    instance = Instance(nodes=gpu_nodes(2), jobs=[*running, share("a", 700)])
    plan = solve_problem(compile_problem(instance), "kai")
    assert plan.bindings == [] and not plan.job("default/a").placed
    # a gang of three 700m pods on two 1-GPU-pool nodes of 2 + 1 devices: one per device
    gang = Instance(nodes=gpu_nodes(2, 1), jobs=[share("g", 700, replicas=3)])
    plan = solve_problem(compile_problem(gang), "kai")
    assert sorted(devices_of(plan).values()) == [("n0", [0]), ("n0", [1]), ("n1", [0])]


def test_a_node_with_a_shared_device_that_fits_comes_first():
    # n0: one idle device; n1: 4 devices, one shared at 500m. Bin-packing alone prefers n0 (the
    # least GPU left); KAI's gpusharingorder scores n1 first for a fraction that fits its device
    running = share("r", 500, running={0: "n1"}, device_use={0: {2: 500}})
    instance = Instance(nodes=gpu_nodes(1, 4), jobs=[running, share("a", 400)])
    plan = solve_problem(compile_problem(instance), "kai")
    assert devices_of(plan)["default/a-w-0"] == ("n1", [2])
    # a whole GPU is not a fraction: bin-packing keeps it on n0
    instance = Instance(nodes=gpu_nodes(1, 4), jobs=[running, whole("b", 1)])
    plan = solve_problem(compile_problem(instance), "kai")
    assert devices_of(plan)["default/b-w-0"] == ("n0", [0])


def test_fractions_move_on_when_the_shared_device_fills():
    # 500m + two 300m pods: the first fills n1's shared device to 800m, the second no longer
    # fits it; n0's idle device and n1's idle ones tie on sharing, bin-packing picks n0
    running = share("r", 500, running={0: "n1"}, device_use={0: {0: 500}})
    instance = Instance(nodes=gpu_nodes(1, 2), jobs=[running, share("a", 300, replicas=2)])
    plan = solve_problem(compile_problem(instance), "kai")
    assert sorted(devices_of(plan).values()) == [("n0", [0]), ("n1", [0])]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(device_instances())
def test_random_device_instances_give_checked_plans(instance):
    checked_device_plan(instance, "kai", run_kai)


def test_same_input_same_devices():
    instance = Instance(nodes=gpu_nodes(2, 4), jobs=[share("a", 250, replicas=5),
                                                     share("m", 500, count=2), whole("w", 2)])
    plans = [solve_problem(compile_problem(instance), "kai") for _ in range(2)]
    assert len(plans[0].bindings) == 7  # all fit: 6 devices hold 5 × 250m, 2 × 500m, 2 whole
    assert devices_of(plans[0]) == devices_of(plans[1])
