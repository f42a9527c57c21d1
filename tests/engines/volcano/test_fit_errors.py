"""Volcano's words for a pending gang (engines/volcano/fit_errors.py and the engine's
``scheduler_reason``): each message shape, and where toposolve leaves Volcano's words out."""

from __future__ import annotations

from collections import Counter

import numpy as np
from builders import GPU, gang, hard, leaf, nodes

import toposolve
from toposolve.core.instance import Instance, Node
from toposolve.engines.volcano.fit_errors import (
    POD_NUMBER_EXCEEDED,
    JobTasks,
    gang_condition,
    node_reason,
)


def _pending(inst: Instance, job: str):
    entry = toposolve.solve(inst, "volcano").job(f"default/{job}")
    assert entry is not None and not entry.placed
    return entry


def test_node_reason_names_cpu_and_memory_first_then_scalars_by_name():
    names = ["b.io/x", GPU, "memory", "cpu"]
    assert node_reason(names, np.array([2, 2, 2, 2]), np.array([1, 1, 1, 1])) == "Insufficient cpu"
    scalars = node_reason(names, np.array([2, 2, 0, 0]), np.array([1, 1, 1, 1]))
    assert scalars == "Insufficient b.io/x"
    assert node_reason(names, np.array([1, 1, 1, 1]), np.array([1, 1, 1, 1])) is None


def test_gang_condition_counts_unready_tasks_and_sorts_histograms_as_strings():
    job = JobTasks(Counter({"Pending": 3, "Running": 1}), 4, 2)
    assert gang_condition(job) == ("1/4 tasks in gang unschedulable: pod group is not ready, "
                                   "1 Running, 3 Pending, 4 minAvailable; Pending: "
                                   "1 Unschedulable, 2 Schedulable")


def test_a_gang_no_node_can_take():
    inst = Instance(nodes=nodes(8), hypernodes=[], jobs=[gang("a", 8), gang("b", 2,
                                                                          creation_index=1)])
    assert _pending(inst, "b").scheduler_reason == (
        "2/2 tasks in gang unschedulable: pod group is not ready, 2 Pending, 2 minAvailable; "
        "Pending: 2 Unschedulable. Origin reason is b-worker-0: 0/8 nodes are unavailable: "
        "8 Insufficient nvidia.com/gpu.")


def test_pods_placed_before_the_failed_one_are_schedulable():
    inst = Instance(nodes=nodes(4), hypernodes=[], jobs=[gang("c", 9, gpus=4)])
    assert _pending(inst, "c").scheduler_reason == (
        "1/9 tasks in gang unschedulable: pod group is not ready, 9 Pending, 9 minAvailable; "
        "Pending: 1 Unschedulable, 8 Schedulable. Origin reason is c-worker-8: 0/4 nodes are "
        "unavailable: 4 Insufficient nvidia.com/gpu.")


def test_a_node_out_of_pod_slots():
    node = Node(name="node0", allocatable={"cpu": 64, GPU: 8, "pods": 1})
    inst = Instance(nodes=[node], hypernodes=[], jobs=[gang("p", 2, gpus=1)])
    assert _pending(inst, "p").scheduler_reason.endswith(
        f"Origin reason is p-worker-1: 0/1 nodes are unavailable: 1 {POD_NUMBER_EXCEEDED}.")


def test_left_out_where_volcano_goes_on_past_a_failed_task_or_searches_hypernodes():
    elastic = Instance(nodes=nodes(1), hypernodes=[], jobs=[gang("e", 3, min_available=2)])
    assert _pending(elastic, "e").scheduler_reason is None
    topo = Instance(nodes=nodes(2), hypernodes=[leaf("s0", ["node0", "node1"])],
                    jobs=[gang("t", 3, topology=hard(1))])
    entry = _pending(topo, "t")
    assert entry.scheduler_reason is None and entry.reason
