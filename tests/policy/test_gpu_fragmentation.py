"""FGD's fragmentation on the pooled ``milli`` model, checked against the per-device harness.

The per-device measure of :mod:`toposolve.sim.fgd.frag` (FGD's definition, written separately)
is the independent computation: a pooled free amount ``F`` is the device state
``[1000] × (F // 1000) + [F % 1000]``. Hand-derived values elsewhere follow the module doc.
"""

from __future__ import annotations

import numpy as np
import pytest
from builders import GPU, instance

from toposolve.core.assignment import to_plan
from toposolve.core.instance import Job, Node, Task
from toposolve.core.problem import compile_problem
from toposolve.engines.volcano import run_heuristic
from toposolve.policy.fgd_measure import TargetWorkload
from toposolve.policy.gpu_fragmentation import (
    node_fragmentation,
    plan_gpu_fragmentation,
    pod_devices,
    target_workload,
)
from toposolve.policy.metrics import plan_metrics
from toposolve.policy.profiles import load_profile
from toposolve.sim.fgd.frag import node_frag

GI = 1024**3


def test_pod_devices():
    assert pod_devices(0) == (0, 0)
    assert pod_devices(300) == (1, 300)
    assert pod_devices(2000) == (2, 1000)
    assert pod_devices(1500) == (2, 750)


def device_state(free: int, slots: int = 8) -> list[int]:
    devices = [1000] * (free // 1000) + [free % 1000]
    return (devices + [0] * slots)[:slots]


@pytest.mark.parametrize("seed", range(5))
def test_node_fragmentation_matches_the_per_device_measure(seed):
    rng = np.random.default_rng(seed)
    shapes = 6
    count = rng.integers(0, 3, shapes)
    milli = np.where(count == 1, rng.choice([100, 250, 500, 1000], shapes), 1000)
    milli = np.where(count == 0, 0, milli)
    target = TargetWorkload(cpu=rng.integers(0, 16, shapes) * 1000,
                            memory=np.zeros(shapes, dtype=np.int64), count=count, milli=milli,
                            weight=rng.integers(1, 50, shapes))
    free = rng.integers(0, 8001, 40)
    cpu = rng.integers(0, 33, 40) * 1000
    ours = node_fragmentation(free, cpu, np.zeros(40), target) / target.weight.sum()
    popularity = target.weight / target.weight.sum()
    typical = TargetWorkload(cpu=target.cpu, milli=milli, count=count,
                             access=(milli > 0)[:, None], weight=popularity)
    theirs = node_frag(cpu, np.array([device_state(int(f)) for f in free]),
                       np.zeros(40, dtype=np.int64), typical)
    np.testing.assert_allclose(ours, theirs)


def test_memory_shortfall_makes_every_free_gpu_fragmented():
    target = TargetWorkload(cpu=np.array([1000]), memory=np.array([8 * GI]), count=np.array([1]),
                            milli=np.array([500]), weight=np.array([3]))
    # 1,700 free: one whole device and one of 700 (≥ 500: usable) — nothing fragmented
    assert node_fragmentation(np.array([1700]), np.array([4000]), np.array([16 * GI]),
                              target).tolist() == [0]
    # the same node without the memory: all 1,700 fragmented, weighted by the 3 pods
    assert node_fragmentation(np.array([1700]), np.array([4000]), np.array([4 * GI]),
                              target).tolist() == [3 * 1700]


def one_pod(name: str, gpu, count: int = 1, cpu: int = 2) -> Job:
    requests = {"cpu": cpu, "memory": GI} | ({GPU: gpu} if gpu is not None else {})
    return Job(name=name, tasks=[Task(name="t", replicas=count, requests=requests)])


def shared_cluster():
    """Two 2-GPU nodes (8 CPUs); pending: 6 pods of 0.5 GPU, 3 of 1 GPU, 1 CPU-only."""
    node_list = [Node(name=f"n{i}", allocatable={"cpu": 8, "memory": 64 * GI, GPU: 2})
                 for i in range(2)]
    return instance(node_list, [], [one_pod("half", "500m", 6), one_pod("whole", 1, 3),
                                     one_pod("cpu", None)])


def test_target_workload_is_the_popular_shapes_in_order():
    target = target_workload(compile_problem(shared_cluster()))
    # 6 + 3 = 9 of 10 pods cover 90 % < 95 %: the CPU-only shape is kept too
    assert target.weight.tolist() == [6, 3, 1]
    assert target.milli.tolist() == [500, 1000, 0]
    assert target.count.tolist() == [1, 1, 0]
    assert target.memory.tolist() == [GI * 1000] * 3  # milli-bytes, as the problem stores them


def test_plan_fragmentation_by_hand():
    problem = compile_problem(shared_cluster())
    # empty cluster: only the CPU-only shape (1 of 10 pods) finds every free GPU unusable
    assert plan_gpu_fragmentation(problem, problem.used) == pytest.approx(4000 * 1 / 10)
    usage = problem.used.copy()
    r = problem.resources.index(GPU)
    usage[0, r] += 1500  # n0: 500 free on one device
    # n0 (500 free): usable by 0.5 GPU, not by 1 GPU (6·0 + 3·500 + 1·500); n1 as before
    expected = (3 * 500 + 500) / 10 + 2000 / 10
    assert plan_gpu_fragmentation(problem, usage) == pytest.approx(expected)


def test_plan_metrics_report_it_for_shared_instances():
    problem = compile_problem(shared_cluster())
    profile = load_profile("lexicographic")
    assignment = run_heuristic(problem, profile)
    metrics = plan_metrics(problem, to_plan(problem, assignment, engine="volcano",
                                            status="FEASIBLE"))
    after = problem.used + assignment.usage(problem)
    assert plan_gpu_fragmentation(problem, after) > 0
    assert metrics.summary()["gpu_fragmentation"] == round(
        plan_gpu_fragmentation(problem, after), 3)
