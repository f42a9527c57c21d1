"""The Volcano mirror places shared pods on devices; engines that cannot refuse in one line."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.device_cases import GPU, checked_device_plan, device_instances, gpu_nodes, share, whole
from toposolve.check.checker import check_plan
from toposolve.core.instance import Instance, PriorityClass, Queue
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


@pytest.mark.parametrize("engine", ["kueue", "kai", "kube"])
def test_eviction_with_devices_is_refused_by_engines_that_do_not_free_them(engine):
    problem = compile_problem(Instance(nodes=gpu_nodes(2), jobs=[share("a", 300)]))
    with pytest.raises(EngineRefusal, match="with eviction") as err:
        solve_problem(problem, engine, options=SolveOptions(evict="both"))
    assert "\n" not in str(err.value)


def prioritised(job, priority_class):
    job.priority_class = priority_class
    return job


CLASSES = [PriorityClass(name="low", value=1), PriorityClass(name="high", value=100)]


def test_preemption_frees_the_victims_devices_for_the_preemptor():
    # devices 0 and 1 half used by low-priority pods: no free device for the whole GPU
    running = [prioritised(share(f"r{d}", 500 + 100 * d, running={0: "n0"},
                                 device_use={0: {d: 500 + 100 * d}}), "low") for d in (0, 1)]
    instance = Instance(nodes=gpu_nodes(2), jobs=[*running, prioritised(whole("w", 1), "high")],
                        priority_classes=CLASSES)
    plan = solve_problem(compile_problem(instance), "volcano",
                         options=SolveOptions(evict="preempt"))
    (evicted,) = plan.evictions
    (bound,) = plan.bindings
    # one victim is enough; its device is the one the preemptor takes
    victim_device = {"default/r0-w-0": 0, "default/r1-w-0": 1}[evicted.pod]
    assert (bound.pod, bound.node, bound.devices) == ("default/w-w-0", "n0", [victim_device])
    assert check_plan(instance, plan, eviction_mode="preempt") == []


def test_a_preemptor_does_not_take_devices_freed_for_another_job():
    # n0: device 0 held by low-priority job v; device 1 idle. p (high) preempts v and takes a
    # whole device; q (same priority as v: may not evict it) may only have the idle device
    v = prioritised(whole("v", 1, running={0: "n0"}, device_use={0: {0: 1000}}), "low")
    p = prioritised(whole("p", 2), "high")
    q = prioritised(share("q", 500), "low")
    instance = Instance(nodes=gpu_nodes(2), jobs=[v, p, q], priority_classes=CLASSES)
    plan = solve_problem(compile_problem(instance), "volcano",
                         options=SolveOptions(evict="preempt"))
    assert check_plan(instance, plan, eviction_mode="preempt") == []
    devices = {b.pod: (b.node, b.devices) for b in plan.bindings}
    # allocate first binds q into idle device 1; p then needs both devices: v alone frees one,
    # so p stays pending and v keeps running (an eviction that places nobody is undone)
    assert devices == {"default/q-w-0": ("n0", [1])} and plan.evictions == []


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


@st.composite
def crowded_device_instances(draw):
    """1-3 nodes of 2 or 4 GPUs whose devices running low-priority pods (of two queues) nearly
    fill, and pending jobs of either priority: preemption and reclaim have work to do."""
    nodes = gpu_nodes(*draw(st.lists(st.sampled_from([2, 4]), min_size=1, max_size=3)))
    jobs = []
    for n, node in enumerate(nodes):
        for d in range(node.allocatable[GPU] // 1000):
            left = 1000
            while left >= 100 and draw(st.integers(0, 3)):
                milli = draw(st.sampled_from([m for m in (100, 300, 500, 1000) if m <= left]))
                left -= milli
                job = share(f"run{n}-{d}-{left}", milli, running={0: node.name},
                            device_use={0: {d: milli}})
                jobs.append(prioritised(job, "low"))
    for k in range(draw(st.integers(1, 4))):
        job = (whole(f"p{k}", draw(st.integers(1, 2))) if draw(st.booleans())
               else share(f"p{k}", draw(st.sampled_from([300, 500, 700]))))
        jobs.append(prioritised(job, draw(st.sampled_from(["high", "high", "low"]))))
    for job in jobs:
        job.queue = draw(st.sampled_from(["default", "default", "other"]))
    queues = [Queue(name=q, weight=1) for q in ("default", "other")]
    return Instance(nodes=nodes, jobs=jobs, queues=queues, priority_classes=CLASSES)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(crowded_device_instances(), st.sampled_from(["preempt", "reclaim", "both"]))
def test_random_crowded_devices_with_eviction_give_checked_plans(instance, mode):
    plan = solve_problem(compile_problem(instance), "volcano", options=SolveOptions(evict=mode))
    assert check_plan(instance, plan, eviction_mode=mode) == []
    shares = any(t.device_share or t.device_use for job in instance.jobs for t in job.tasks)
    assert all((b.devices is not None) == shares for b in plan.bindings)  # no shares: pooled
