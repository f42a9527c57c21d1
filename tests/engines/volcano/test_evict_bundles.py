"""SAFE / WHOLE bundles: seed 002 §3.4 Job-A and Job-B, plus the rules around them.

Expected splits are derived by hand from the seed's algorithm: surplus = running − minimum, spent
on the youngest pods first; a pod is SAFE only while the job, its role and its SubJob policy all
have surplus left.
"""

from __future__ import annotations

import numpy as np
from builders import GPU, example1_tree, nodes

from toposolve.core.instance import Instance, Job, Task
from toposolve.core.problem import RunningPod, compile_problem
from toposolve.engines.volcano import HeuristicEngine
from toposolve.engines.volcano.evict.bundles import (
    BundleKind,
    GangState,
    gang_state,
    split_bundles,
    victim_pod_order,
)
from toposolve.policy.profiles import Profile
from toposolve.policy.rules import RunningPods

CPU_ONLY = np.array([1.0, 0.0])  # (cpu, gpu)
GPU_POD = np.array([0.0, 1.0])


def pod(
    task: str, index: int, *, subjob: int = 0, position: int = 0, job: str = "job"
) -> RunningPod:
    return RunningPod(
        name=f"default/{job}-{task}-{index}",
        job=0,
        group=0,
        subjob=subjob,
        task=task,
        task_position=position,
        index=index,
        node=index,
    )


def split(state: GangState, pods, request=lambda p: GPU_POD, need=None):
    need = np.array([0.0, 4.0]) if need is None else need
    ordered = victim_pod_order(pods, request, need, need > 0)
    held = sum(request(p) for p in pods)
    return split_bundles(0, state, ordered, request, held)


def short(bundle):
    return sorted(p.name.split("/", 1)[1].split("-", 1)[1] for p in bundle.pods)


def test_job_a_safe_two_whole_three():
    """Job-A: 5 replicas, minAvailable 3, all running → SAFE {Task4, Task5}, WHOLE {Task1..3}."""
    pods = [pod("task", i) for i in range(5)]  # index 3, 4 are the seed's Task4, Task5
    safe, whole = split(GangState(ready=5, min_available=3), pods)
    assert safe.kind == BundleKind.SAFE and short(safe) == ["task-3", "task-4"]
    assert whole.kind == BundleKind.WHOLE and short(whole) == ["task-0", "task-1", "task-2"]
    assert safe.global_.tolist() == [0.0, 0.0]  # SAFE costs nothing (Volcano's code)
    assert whole.local.tolist() == [0.0, 3.0] and whole.global_.tolist() == [0.0, 5.0]


def test_job_b_roles_safe_worker_3_whole_four():
    """Job-B: driver 1 (min 1), worker 4 (min 3), minAvailable 4, 5 running."""
    pods = [pod("driver", 0, position=0)] + [pod("worker", i, position=1) for i in range(4)]
    state = GangState(
        ready=5,
        min_available=4,
        role_ready={"driver": 1, "worker": 4},
        role_min={"driver": 1, "worker": 3},
    )
    request = lambda p: CPU_ONLY if p.task == "driver" else GPU_POD  # noqa: E731
    safe, whole = split(state, pods, request)
    assert short(safe) == ["worker-3"]
    assert short(whole) == ["driver-0", "worker-0", "worker-1", "worker-2"]
    # the driver has no role surplus even when it covers the need best
    safe, whole = split(state, pods, request, need=np.array([4.0, 0.0]))
    assert short(safe) == ["worker-3"] and "driver-0" in short(whole)


def test_role_minimums_are_ignored_for_elastic_jobs():
    """minAvailable 2 < Σ role minimums 4: only the job total counts (CheckTaskReady's bypass)."""
    pods = [pod("ps", 0)] + [pod("worker", i, position=1) for i in range(3)]
    state = GangState(
        ready=4, min_available=2, role_ready={"ps": 1, "worker": 3}, role_min={"ps": 1, "worker": 3}
    )
    safe, whole = split(state, pods)
    assert short(safe) == ["worker-1", "worker-2"]  # youngest two; worker role would allow none
    assert short(whole) == ["ps-0", "worker-0"]


def test_already_broken_gang_is_one_safe_bundle():
    pods = [pod("task", i) for i in range(2)]
    (bundle,) = split(GangState(ready=2, min_available=3), pods)
    assert bundle.kind == BundleKind.SAFE and short(bundle) == ["task-0", "task-1"]


def test_subjob_policy_surplus_spends_a_whole_partition():
    """3 ready partitions of 2 pods, minSubGroups 2, minAvailable 4: job surplus 2, policy
    surplus 1. Pod 5 breaks partition 2 (policy surplus → 0); pod 4 is in the already broken
    partition 2, so it is SAFE too; nothing else is."""
    pods = [pod("t", i, subjob=i // 2) for i in range(6)]
    state = GangState(
        ready=6,
        min_available=4,
        subjobs={0: (0, True), 1: (0, True), 2: (0, True)},
        min_subjobs={0: 2},
    )
    safe, whole = split(state, pods)
    assert short(safe) == ["t-4", "t-5"]
    assert short(whole) == ["t-0", "t-1", "t-2", "t-3"]
    state.min_subjobs = {0: 3}  # every partition is needed: nothing is SAFE
    (whole,) = split(state, pods)
    assert whole.kind == BundleKind.WHOLE and len(whole.pods) == 6


def test_gang_state_of_a_compiled_job_b():
    """The same Job-B compiled from the model: roles from task minAvailable, pods from running."""
    job = Job(
        name="b",
        min_available=4,
        tasks=[
            Task(
                name="driver",
                replicas=1,
                min_available=1,
                requests={"cpu": 1},
                running={0: "node0"},
            ),
            Task(
                name="worker",
                replicas=4,
                min_available=3,
                requests={GPU: 1},
                running={i: f"node{i + 1}" for i in range(4)},
            ),
        ],
    )
    problem = compile_problem(Instance(nodes=nodes(8), hypernodes=example1_tree(), jobs=[job]))
    engine = HeuristicEngine(problem, Profile())
    state = gang_state(problem, engine.gang, 0)
    assert (state.ready, state.min_available) == (5, 4)
    assert state.role_ready == {"driver": 1, "worker": 4} and state.role_min == {
        "driver": 1,
        "worker": 3,
    }
    running = RunningPods(problem)
    need = np.zeros(len(problem.resources))
    need[problem.resource_index[GPU]] = 2000
    ordered = victim_pod_order(running.pods, running.request, need, need > 0)
    held = sum(running.request(p) for p in running.pods)
    safe, whole = split_bundles(0, state, ordered, running.request, held)
    assert safe.names == ["default/b-worker-3"]
    assert sorted(whole.names) == [
        "default/b-driver-0",
        *(f"default/b-worker-{i}" for i in range(3)),
    ]
