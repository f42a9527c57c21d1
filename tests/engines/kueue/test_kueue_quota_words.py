"""Kueue's words for a workload its ClusterQueue's quota refuses (engines/kueue/reasons.py and
the engine's ``scheduler_reason``): quantity formatting, podsets in order, and where toposolve
leaves Kueue's words out."""

from __future__ import annotations

import pytest
from builders import gang

import toposolve
from toposolve.core.instance import Instance, Job, Node, Queue, Task
from toposolve.engines.kueue.reasons import kueue_quantity

MI = 1 << 20


@pytest.mark.parametrize("resource,milli,text", [
    ("cpu", 1500, "1500m"), ("cpu", 3000, "3"), ("cpu", 3_000_000, "3k"), ("cpu", 0, "0"),
    ("memory", 10 * MI * 1000, "10Mi"), ("memory", 3_000_000_000, "3M"),
    ("memory", 1_536_000, "1536"), ("memory", 500_000, "500"), ("memory", 1_024_000_000, "1000Ki"),
    ("nvidia.com/gpu", 8000, "8"), ("nvidia.com/gpu", 2_000_000, "2k"),
])
def test_quantities_as_kubernetes_prints_them(resource, milli, text):
    assert kueue_quantity(resource, milli) == text


def _solve(queue: Queue, job: Job, *others: Job):
    jobs = [j.model_copy(update={"queue": queue.name}) for j in (*others, job)]
    inst = Instance(nodes=[Node(name="node0", allocatable={"cpu": 128, "memory": "64Gi"})],
                    hypernodes=[], queues=[queue], jobs=jobs)
    entry = toposolve.solve(inst, "kueue").job(f"default/{job.name}")
    assert entry is not None and not entry.placed
    return entry


def test_over_the_maximum_capacity():
    queue = Queue(name="q", capability={"cpu": 8}, flavors=["on-demand"])
    entry = _solve(queue, gang("big", 10, gpus=0, cpu=1, task="main"))
    assert entry.scheduler_reason == (
        "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor "
        "on-demand, previously considered podsets requests (0) + current podset request (10) > "
        "maximum capacity (8)")


def test_earlier_podsets_count_and_every_failing_resource_is_named():
    queue = Queue(name="q", capability={"cpu": 8, "memory": "4Gi"}, flavors=["default"])
    tasks = [Task(name="driver", replicas=1, requests={"cpu": 2, "memory": "1Gi"}),
             Task(name="workers", replicas=4, requests={"cpu": 2, "memory": "1Gi"})]
    job = Job(name="spark", min_available=5, tasks=tasks)
    assert _solve(queue, job).scheduler_reason == (
        "couldn't assign flavors to pod set workers: insufficient quota for cpu in flavor "
        "default, previously considered podsets requests (2) + current podset request (8) > "
        "maximum capacity (8), insufficient quota for memory in flavor default, previously "
        "considered podsets requests (1Gi) + current podset request (4Gi) > maximum capacity "
        "(4Gi)")


def test_left_out_where_kueue_would_pick_among_flavors():
    queue = Queue(name="q", capability={"cpu": 8}, flavors=["on-demand", "spot"])
    entry = _solve(queue, gang("big", 10, gpus=0, cpu=1))
    assert entry.reason and entry.scheduler_reason is None
