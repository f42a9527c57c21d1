"""The Volcano mirror places shared pods on devices; engines that cannot refuse in one line."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toposolve.check.checker import check_plan
from toposolve.core.assignment import to_plan
from toposolve.core.instance import (
    HyperNode,
    Instance,
    Job,
    Member,
    MemberSelector,
    NetworkTopology,
    Node,
    Task,
)
from toposolve.core.problem import compile_problem
from toposolve.engines.contract import EngineRefusal, SolveOptions
from toposolve.engines.volcano import run_heuristic
from toposolve.solve import solve_problem

GPU = "nvidia.com/gpu"


def share(name, milli, replicas=1, count=1, **extra):
    task = Task(name="w", replicas=replicas, requests={"cpu": 1, GPU: f"{milli * count}m"},
                device_share={"milli": milli, "count": count}, **extra)
    return Job(name=name, min_available=replicas, tasks=[task])


def whole(name, gpus, replicas=1, **extra):
    task = Task(name="w", replicas=replicas, requests={"cpu": 1, GPU: gpus}, **extra)
    return Job(name=name, min_available=replicas, tasks=[task])


def gpu_nodes(*gpus):
    return [Node(name=f"n{i}", allocatable={"cpu": 64, GPU: g}) for i, g in enumerate(gpus)]


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


@pytest.mark.parametrize("engine", ["kueue", "kai", "kube", "cpsat"])
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


@st.composite
def device_instances(draw):
    """Nodes of 0-8 GPUs under 1-2 racks, running pods on consistent devices, pending shared,
    multi-device shared and whole-GPU jobs (gangs of 1-3 pods, some with a hard rack limit)."""
    gpus = draw(st.lists(st.sampled_from([0, 1, 2, 4, 8]), min_size=1, max_size=6))
    nodes = gpu_nodes(*gpus)
    racks = [HyperNode(name=f"rack{r}", tier=1, members=[
        Member(selector=MemberSelector(exact_match=n.name)) for n in nodes[r::2]])
        for r in range(min(2, len(nodes)))]
    free = [np.full(g, 1000) for g in gpus]
    jobs = []
    for k in range(draw(st.integers(0, 6))):  # running shared pods on devices with room
        n = draw(st.integers(0, len(nodes) - 1))
        milli = draw(st.sampled_from([100, 300, 500, 700]))
        fits = np.flatnonzero(free[n] >= milli)
        if fits.size:
            d = int(fits[draw(st.integers(0, fits.size - 1))])
            free[n][d] -= milli
            jobs.append(share(f"run{k}", milli, running={0: nodes[n].name},
                              device_use={0: {d: milli}}))
    for k in range(draw(st.integers(1, 8))):
        replicas = draw(st.integers(1, 3))
        kind = draw(st.sampled_from(["share", "multi", "whole"]))
        if kind == "whole":
            job = whole(f"p{k}", draw(st.integers(1, 4)), replicas=replicas)
        else:
            count = 1 if kind == "share" else 2
            job = share(f"p{k}", draw(st.sampled_from([100, 250, 500, 600, 1000])), replicas,
                        count=count)
        if draw(st.booleans()):
            job.network_topology = NetworkTopology(mode="hard", highest_tier_allowed=1)
        jobs.append(job)
    return Instance(nodes=nodes, hypernodes=racks, jobs=jobs)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(device_instances())
def test_random_device_instances_give_checked_plans(instance):
    problem = compile_problem(instance)
    plan = to_plan(problem, run_heuristic(problem), engine="volcano", status="FEASIBLE")
    assert check_plan(instance, plan, eviction_mode="none") == []
    # every pending pod asks for a GPU: with a share in the instance, each takes devices
    shared = instance.device_resource is not None
    assert all((b.devices is not None) == shared for b in plan.bindings)


def test_defrag_refuses_devices_in_one_line():
    from toposolve.defrag import defrag

    instance = Instance(nodes=gpu_nodes(2), jobs=[share("a", 300)])
    with pytest.raises(EngineRefusal, match="'defrag' does not support per-device"):
        defrag(instance, admit=["default/a"])
