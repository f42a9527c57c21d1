"""Rule ``device``: per-device use re-derived from the instance and the plan."""

from __future__ import annotations

import pytest

from toposolve.check.checker import check_plan
from toposolve.core.instance import Instance, Job, Node, Task
from toposolve.core.plan import Binding, JobPlacement, Plan

GPU = "nvidia.com/gpu"


def instance(extra_jobs=()):
    nodes = [Node(name="n0", allocatable={"cpu": 16, GPU: 2})]
    old = Task(name="w", replicas=1, requests={GPU: "600m"}, device_share={"milli": 600},
               running={0: "n0"}, device_use={0: {0: 600}})
    new = Task(name="w", replicas=2, requests={GPU: "500m"}, device_share={"milli": 500})
    whole = Task(name="w", replicas=1, requests={GPU: 1})
    cpu = Task(name="w", replicas=1, requests={"cpu": 1})
    jobs = [Job(name="old", tasks=[old]), Job(name="new", min_available=1, tasks=[new]),
            Job(name="whole", tasks=[whole]), Job(name="cpu", tasks=[cpu]), *extra_jobs]
    return Instance(nodes=nodes, jobs=jobs)


def plan(bindings, evictions=()):
    placed = sorted({b.pod.split("/")[1].rsplit("-", 2)[0] for b in bindings})
    jobs = [JobPlacement(f"default/{j}", True, "<cluster-top-hypernode>") for j in placed]
    return Plan(engine="test", status="FEASIBLE", bindings=list(bindings),
                evictions=list(evictions), jobs=jobs)


def kinds(violations):
    return [(v.kind, v.obj) for v in violations if v.kind == "device"]


def test_shares_within_one_device_each_are_valid():
    ok = plan([Binding("default/new-w-0", "n0", devices=[1]),
               Binding("default/new-w-1", "n0", devices=[1])])
    assert kinds(check_plan(instance(), ok)) == []


def test_a_device_held_beyond_1000_milli():
    over = plan([Binding("default/new-w-0", "n0", devices=[0])])  # 600 running + 500
    found = check_plan(instance(), over)
    assert kinds(found) == [("device", "Node/n0")]
    assert "1100m" in next(v.message for v in found if v.kind == "device")


def test_the_pooled_capacity_is_not_enough():
    # 1100m free in the node's pool (2000 - 600 - 300), but no device is whole
    small = Task(name="w", replicas=1, requests={GPU: "300m"}, device_share={"milli": 300},
                 running={0: "n0"}, device_use={0: {1: 300}})
    split = plan([Binding("default/whole-w-0", "n0", devices=[1])])
    found = check_plan(instance([Job(name="small", tasks=[small])]), split)
    assert ("device", "Node/n0") in kinds(found)
    assert not [v for v in found if v.kind == "capacity"]


@pytest.mark.parametrize("devices, words", [
    (None, "must take 1 distinct"), ([0, 1], "must take 1 distinct"), ([2], "has 2 device"),
])
def test_wrong_device_lists(devices, words):
    found = check_plan(instance(), plan([Binding("default/new-w-0", "n0", devices=devices)]))
    assert kinds(found) == [("device", "Pod/default/new-w-0")]
    assert words in next(v.message for v in found if v.kind == "device")


def test_devices_on_a_pod_that_asks_for_none():
    found = check_plan(instance(), plan([Binding("default/cpu-w-0", "n0", devices=[0])]))
    assert kinds(found) == [("device", "Pod/default/cpu-w-0")]


def test_an_evicted_pod_gives_its_device_back():
    evicted = plan([Binding("default/whole-w-0", "n0", devices=[0])],
                   evictions=[Binding("default/old-w-0", "n0")])
    assert kinds(check_plan(instance(), evicted, eviction_mode="none")) == []
    kept = plan([Binding("default/whole-w-0", "n0", devices=[0])])
    assert kinds(check_plan(instance(), kept)) == [("device", "Node/n0")]
