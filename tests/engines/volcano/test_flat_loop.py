"""Volcano's flat allocate loop for a job of several tasks (engines/volcano/flat_loop.py): it
stops at the first failed pod when ``minAvailable`` is the pod count, goes on past it otherwise
(placing the next task's pods where they make the gang), skips a failed role's later pods, and
the condition counts every pod it allocated before the gang was discarded."""

from __future__ import annotations

from builders import GPU, nodes

import toposolve
from toposolve.core.instance import Instance, Job, Task
from toposolve.core.status import SolveStatus

GPUS = Task(name="a", replicas=4, requests={GPU: 8})  # two fit on the two nodes below
CPUS = Task(name="b", replicas=2, requests={"cpu": 1})


def _entry(job: Job):
    return toposolve.solve(Instance(nodes=nodes(2), hypernodes=[], jobs=[job]),
                           "volcano").job(f"default/{job.name}")


def test_a_gang_of_all_its_pods_stops_at_the_first_failed_pod():
    # NeedContinueAllocating is false when minAvailable is the pod count: b's pods, which fit,
    # are never allocated, so they are not Schedulable
    entry = _entry(Job(name="m", min_available=6, tasks=[GPUS, CPUS]))
    assert not entry.placed
    assert entry.scheduler_reason == (
        "4/6 tasks in gang unschedulable: pod group is not ready, 6 Pending, 6 minAvailable; "
        "Pending: 2 Schedulable, 4 Unschedulable. Origin reason is m-a-2: 0/2 nodes are "
        "unavailable: 2 Insufficient nvidia.com/gpu.")


def test_below_its_count_volcano_goes_on_to_the_next_task():
    # a-2 fails, a-3 is skipped (its role has failed), b-0 and b-1 are allocated: 4 of 5
    entry = _entry(Job(name="m", min_available=5, tasks=[GPUS, CPUS]))
    assert not entry.placed
    assert entry.scheduler_reason == (
        "1/6 tasks in gang unschedulable: pod group is not ready, 5 minAvailable, 6 Pending; "
        "Pending: 2 Unschedulable, 4 Schedulable. Origin reason is m-a-2: 0/2 nodes are "
        "unavailable: 2 Insufficient nvidia.com/gpu.")


def test_pods_without_the_task_spec_label_are_tried_again_and_fail_alike():
    bare = GPUS.model_copy(update={"task_spec_label": False})
    second = Task(name="c", replicas=1, requests={GPU: 8})
    entry = _entry(Job(name="m", min_available=4, tasks=[bare, second]))
    assert not entry.placed
    # the origin is the first pod that failed; its histogram is the one every later pod shares
    assert entry.scheduler_reason == (
        "2/5 tasks in gang unschedulable: pod group is not ready, 4 minAvailable, 5 Pending; "
        "Pending: 2 Schedulable, 3 Unschedulable. Origin reason is m-a-2: 0/2 nodes are "
        "unavailable: 2 Insufficient nvidia.com/gpu.")


def test_running_pods_count_as_ready():
    running = GPUS.model_copy(update={"running": {0: "node0"}})
    entry = _entry(Job(name="m", min_available=4, tasks=[running, CPUS.model_copy(
        update={"replicas": 1})]))
    # a-1 takes node1, a-2 fails, a-3 is skipped, b-0 is allocated: 1 running + 2 of 4
    assert not entry.placed
    assert entry.scheduler_reason == (
        "1/5 tasks in gang unschedulable: pod group is not ready, 1 Running, 4 Pending, "
        "4 minAvailable; Pending: 2 Schedulable, 2 Unschedulable. Origin reason is m-a-2: 0/2 "
        "nodes are unavailable: 2 Insufficient nvidia.com/gpu.")


def test_a_task_below_its_own_minimum_stops_the_loop():
    # a's minimum is 3 and the job's 5 is not below the minimums' sum: a-2 fails with a at 2 of
    # 3, so NeedContinueAllocating stops and b is never tried
    with_min = GPUS.model_copy(update={"min_available": 3})
    entry = _entry(Job(name="m", min_available=5, tasks=[with_min, CPUS]))
    assert not entry.placed
    assert entry.scheduler_reason == (
        "3/6 tasks in gang unschedulable: pod group is not ready, 5 minAvailable, 6 Pending; "
        "Pending: 2 Schedulable, 4 Unschedulable. Origin reason is m-a-2: 0/2 nodes are "
        "unavailable: 2 Insufficient nvidia.com/gpu.")


def test_below_the_minimums_sum_the_loop_goes_on_while_the_count_can_be_reached():
    # minimums 3 + 2 above the job's 4: after a-1 fails, 1 allocated + b's 2 pending cannot
    # reach 4, so the loop stops before b
    a = GPUS.model_copy(update={"min_available": 3})
    b = CPUS.model_copy(update={"min_available": 2})
    inst = Instance(nodes=nodes(1), hypernodes=[], jobs=[Job(name="m", min_available=4,
                                                            tasks=[a, b])])
    entry = toposolve.solve(inst, "volcano").job("default/m")
    assert not entry.placed
    assert entry.scheduler_reason == (
        "3/6 tasks in gang unschedulable: pod group is not ready, 4 minAvailable, 6 Pending; "
        "Pending: 1 Schedulable, 5 Unschedulable. Origin reason is m-a-1: 0/1 nodes are "
        "unavailable: 1 Insufficient nvidia.com/gpu.")


def test_left_out_where_minimums_count_pods_by_another_label():
    # minTaskMember counts pods by their volcano.sh/task-spec: without it Volcano's count differs
    bare = GPUS.model_copy(update={"min_available": 3, "task_spec_label": False})
    entry = _entry(Job(name="m", min_available=5, tasks=[bare, CPUS]))
    assert not entry.placed and entry.reason and entry.scheduler_reason is None


def _bound(job: Job, count: int = 2):
    plan = toposolve.solve(Instance(nodes=nodes(count), hypernodes=[], jobs=[job]), "volcano")
    assert plan.status is not SolveStatus.FALLBACK  # the engine's own plan passed the checker
    return plan, sorted(b.pod.split("/", 1)[1] for b in plan.bindings)


def test_volcano_goes_past_the_failed_pod_and_places_the_next_task():
    # a-2 fails, a-3 is skipped, b-0 and b-1 are allocated: 2 + 2 reach the minimum of 4, so
    # Volcano binds them (toposolve's planned fill, a's four pods, stops short at a-2)
    plan, pods = _bound(Job(name="m", min_available=4, tasks=[GPUS, CPUS]))
    entry = plan.job("default/m")
    assert entry.placed and entry.reason is None and entry.scheduler_reason is None
    assert pods == ["m-a-0", "m-a-1", "m-b-0", "m-b-1"]


def test_a_failed_task_holding_its_minimum_lets_the_loop_reach_the_next_task():
    # minimums 1 + 1 below the job's 4: a fails holding 2, at least its minimum 1, so the loop
    # goes on to b
    a = GPUS.model_copy(update={"min_available": 1})
    b = CPUS.model_copy(update={"min_available": 1})
    plan, pods = _bound(Job(name="m", min_available=4, tasks=[a, b]))
    assert plan.job("default/m").placed
    assert pods == ["m-a-0", "m-a-1", "m-b-0", "m-b-1"]


def test_the_loop_that_cannot_reach_the_count_binds_nothing():
    # one node: a-1 fails, b's two pods make 3 of the 4 needed; the gang is discarded
    plan, pods = _bound(Job(name="m", min_available=4, tasks=[GPUS, CPUS]), count=1)
    assert not plan.job("default/m").placed and pods == []
