"""Volcano's words for a pending gang (engines/volcano/fit_errors.py and the engine's
``scheduler_reason``): each message shape, and where toposolve leaves Volcano's words out."""

from __future__ import annotations

from collections import Counter

from builders import GPU, gang, hard, inner, leaf, nodes, partitioned

import toposolve
from toposolve.core.instance import (
    Instance,
    Job,
    LabelRequirement,
    NetworkTopology,
    Node,
    PodConstraints,
    Taint,
)
from toposolve.engines.volcano.fit_errors import (
    POD_NUMBER_EXCEEDED,
    JobTasks,
    gang_condition,
    resource_rank,
)


def _pending(inst: Instance, job: str):
    entry = toposolve.solve(inst, "volcano").job(f"default/{job}")
    assert entry is not None and not entry.placed
    return entry


def test_short_resources_are_named_cpu_and_memory_first_then_scalars_by_name():
    names = ["b.io/x", GPU, "memory", "cpu"]
    assert sorted(names, key=resource_rank) == ["cpu", "memory", "b.io/x", GPU]
    fleet = [Node(name="n0", allocatable={"cpu": 1, GPU: 8, "b.io/x": 1}),
             Node(name="n1", allocatable={"cpu": 64, GPU: 0, "b.io/x": 0})]
    job = gang("r", 1, gpus=1, cpu=2)
    job = job.model_copy(update={"tasks": [job.tasks[0].model_copy(update={
        "requests": {**job.tasks[0].requests, "b.io/x": 1}})]})
    entry = _pending(Instance(nodes=fleet, hypernodes=[], jobs=[job]), "r")
    assert entry.scheduler_reason.endswith(
        "0/2 nodes are unavailable: 1 Insufficient b.io/x, 1 Insufficient cpu.")


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


def test_one_task_below_its_count_names_the_first_failed_pod():
    # Volcano goes on past pod 1 (NeedContinueAllocating: no minTaskMember) and pod 2 fails
    # alike; toposolve names the first failed pod (Go's pick is map order)
    below = Instance(nodes=nodes(1), hypernodes=[], jobs=[gang("e", 3, min_available=2)])
    assert _pending(below, "e").scheduler_reason == (
        "1/3 tasks in gang unschedulable: pod group is not ready, 2 minAvailable, 3 Pending; "
        "Pending: 1 Schedulable, 2 Unschedulable. Origin reason is e-worker-1: 0/1 nodes are "
        "unavailable: 1 Insufficient nvidia.com/gpu.")


def _constrained(name: str, pods: int, constraints: PodConstraints) -> Job:
    job = gang(name, pods)
    task = job.tasks[0].model_copy(update={"constraints": constraints})
    return job.model_copy(update={"tasks": [task]})


def test_nodes_failing_predicates_in_the_kubernetes_plugins_words():
    tainted = Taint(key="gpu", value="h100", effect="NoSchedule")
    fleet = [Node(name="node0", allocatable={"cpu": 64, GPU: 8}, unschedulable=True),
             Node(name="node1", allocatable={"cpu": 64, GPU: 8}, taints=[tainted]),
             Node(name="node2", allocatable={"cpu": 64, GPU: 8}, labels={"pool": "b"}),
             Node(name="node3", allocatable={"cpu": 64, GPU: 8}, labels={"pool": "a"},
                  taints=[Taint(key="spot", effect="NoExecute")])]
    job = _constrained("s", 1, PodConstraints(node_selector={"pool": "a"}))
    inst = Instance(nodes=fleet, hypernodes=[], jobs=[job])
    assert _pending(inst, "s").scheduler_reason.endswith(
        "Origin reason is s-worker-0: 0/4 nodes are unavailable: 1 node(s) had untolerated "
        "taint {spot: }, 1 node(s) were unschedulable, 2 node(s) didn't match Pod's node "
        "affinity/selector.")


def test_node_affinity_is_checked_before_taints_and_resources_before_both():
    tainted = Taint(key="gpu", value="h100", effect="NoSchedule")
    fleet = [Node(name="node0", allocatable={"cpu": 64, GPU: 8}, taints=[tainted]),
             Node(name="node1", allocatable={"cpu": 64, GPU: 4}, taints=[tainted])]
    job = _constrained("a", 1, PodConstraints(affinity_terms=[[LabelRequirement(
        key="zone", operator="In", values=["z1"])]]))
    inst = Instance(nodes=fleet, hypernodes=[], jobs=[job])
    assert _pending(inst, "a").scheduler_reason.endswith(
        "0/2 nodes are unavailable: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match "
        "Pod's node affinity/selector.")


def test_a_node_full_of_pods_and_tainted_gives_both_reasons():
    tainted = Taint(key="gpu", value="h100", effect="NoExecute")
    fleet = [Node(name="node0", allocatable={"cpu": 64, GPU: 8, "pods": 0}, taints=[tainted]),
             Node(name="node1", allocatable={"cpu": 64, GPU: 8, "pods": 2})]
    inst = Instance(nodes=fleet, hypernodes=[], jobs=[gang("f", 3, gpus=1)])
    assert _pending(inst, "f").scheduler_reason.endswith(
        "Origin reason is f-worker-2: 0/2 nodes are unavailable: 1 node(s) had untolerated "
        "taint {gpu: h100}, 2 node(s) pod number exceeded.")


RACKS = [leaf("s0", ["node0", "node1"]), leaf("s1", ["node2", "node3"])]


def test_the_last_hypernode_tried_gives_the_fit_errors():
    # each rack's 16 GPUs pass the prefilter for 15, but a node holds one 5-GPU pod: both racks
    # are tried in gradient order and fail at the third pod; the last, s1, keeps its errors
    inst = Instance(nodes=nodes(4), hypernodes=RACKS, jobs=[gang("t", 3, gpus=5,
                                                                   topology=hard(1))])
    assert _pending(inst, "t").scheduler_reason == (
        "1/3 tasks in gang unschedulable: pod group is not ready, 3 Pending, 3 minAvailable; "
        "Pending: 1 Unschedulable, 2 Schedulable. Origin reason is t-worker-2: In hyperNode s1: "
        "0/2 nodes are unavailable: 2 Insufficient nvidia.com/gpu.")


def test_the_search_inside_the_jobs_hypernode_names_its_own_hypernode():
    spine = [*RACKS, inner("z", ["s0", "s1"], 2)]
    inst = Instance(nodes=nodes(4), hypernodes=spine, jobs=[gang("t", 5, gpus=5,
                                                                   topology=hard(2))])
    assert _pending(inst, "t").scheduler_reason.endswith(
        "Pending: 1 Unschedulable, 4 Schedulable. Origin reason is t-worker-4: In hyperNode z: "
        "0/4 nodes are unavailable: 4 Insufficient nvidia.com/gpu.")


def test_no_hypernode_passes_the_prefilter_so_none_is_tried():
    inst = Instance(nodes=nodes(4), hypernodes=RACKS, jobs=[gang("t", 3, topology=hard(1))])
    assert _pending(inst, "t").scheduler_reason == (
        "3/3 tasks in gang unschedulable: pod group is not ready, 3 Pending, 3 minAvailable; "
        "Pending: 3 Unschedulable")


def test_a_soft_job_tried_last_at_the_cluster_top_names_no_hypernode():
    inst = Instance(nodes=nodes(4), hypernodes=RACKS,
                    jobs=[gang("t", 5, gpus=5, topology=NetworkTopology(mode="soft"))])
    assert _pending(inst, "t").scheduler_reason.endswith(
        "Origin reason is t-worker-4: 0/4 nodes are unavailable: 4 Insufficient nvidia.com/gpu.")


def test_two_tasks_below_their_count_go_on_past_the_failed_one():
    # worker-1 fails, Volcano goes on: ps-0 fails too, ps-1 is skipped (engines/volcano/
    # flat_loop.py; more shapes in test_flat_loop.py)
    two_tasks = gang("m", 2, min_available=2)
    two_tasks = two_tasks.model_copy(update={"tasks": [
        two_tasks.tasks[0], two_tasks.tasks[0].model_copy(update={"name": "ps"})]})
    several = Instance(nodes=nodes(1), hypernodes=[], jobs=[two_tasks])
    assert _pending(several, "m").scheduler_reason == (
        "1/4 tasks in gang unschedulable: pod group is not ready, 2 minAvailable, 4 Pending; "
        "Pending: 1 Schedulable, 3 Unschedulable. Origin reason is m-worker-1: 0/1 nodes are "
        "unavailable: 1 Insufficient nvidia.com/gpu.")


def test_left_out_where_a_job_has_subgroups():
    parts = partitioned("p", partitions=2, size=3, job_topology=None,
                        partition_topology=hard(1), min_available=6,
                        requests={GPU: 5})
    entry = _pending(Instance(nodes=nodes(4), hypernodes=RACKS, jobs=[parts]), "p")
    assert entry.scheduler_reason is None and entry.reason
