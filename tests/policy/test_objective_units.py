"""``placed`` in milli-accelerators when an instance shares fractions of accelerators.

Expected values follow from the definition in ``toposolve.policy.objective.placed_units``: a
pod's accelerator milli-units summed over accelerator resources, 1000 for a pod without any,
and whole units (unchanged) in instances without a fractional request.
"""

from __future__ import annotations

from builders import GPU, instance
from cpsat_support import solve_checked

from toposolve.core.assignment import Assignment
from toposolve.core.instance import Job, Node, Task
from toposolve.core.problem import compile_problem
from toposolve.policy.metrics import plan_metrics
from toposolve.policy.objective import (
    accelerator_units,
    eviction_pod_weights,
    placed_pod_weights,
    placed_units,
    stage_values,
    unit_scale,
)


def one_pod(name: str, gpu, creation_index: int = 0, **requests) -> Job:
    req = {"cpu": 1, **requests} if gpu is None else {"cpu": 1, GPU: gpu, **requests}
    return Job(name=name, creation_index=creation_index,
               tasks=[Task(name="t", replicas=1, requests=req)])


def shared_instance():
    """One node with one GPU (1000 milli); ``whole`` asks the GPU, ``s1``–``s3`` 0.3 GPU each,
    ``cpu`` no GPU."""
    node = Node(name="n0", allocatable={"cpu": 64, GPU: 1})
    jobs = [one_pod("whole", 1, 0), one_pod("s1", "300m", 1), one_pod("s2", "300m", 2),
            one_pod("s3", "300m", 3), one_pod("cpu", None, 4)]
    return instance([node], [], jobs)


def test_shared_pods_count_milli_units():
    problem = compile_problem(shared_instance())
    assert unit_scale(problem) == 1000
    assert placed_units(problem).tolist() == [1000, 300, 300, 300, 1000]
    # the whole-unit view (explanations, plots) still rounds up per resource
    assert accelerator_units(problem).tolist() == [1, 1, 1, 1, 1]
    # one priority level: weight 1, so the coefficients are the units themselves
    assert placed_pod_weights(problem) == [1000, 300, 300, 300, 1000]


def test_whole_gpu_instances_keep_whole_units():
    node = Node(name="n0", allocatable={"cpu": 64, GPU: 8})
    problem = compile_problem(instance([node], [], [one_pod("a", 2), one_pod("b", None, 1)]))
    assert unit_scale(problem) == 1
    assert placed_units(problem).tolist() == [2, 1]


def test_placed_stage_sums_milli_units():
    problem = compile_problem(shared_instance())
    by_name = {cj.key.split("/", 1)[1]: cj.groups[0] for cj in problem.jobs}
    plan = Assignment()
    for name in ("s1", "s2", "cpu"):
        plan.add(by_name[name], 0, 1)
    assert stage_values(problem, plan)["placed"] == 300 + 300 + 1000


def test_eviction_weights_use_the_same_units():
    node = Node(name="n0", allocatable={"cpu": 64, GPU: 1})
    running = Job(name="r", tasks=[Task(name="t", replicas=1, running={0: "n0"},
                                        requests={"cpu": 1, GPU: "400m"})])
    problem = compile_problem(instance([node], [], [running, one_pod("p", "700m", 1)]))
    # one priority level: every group weighs 1 × its milli-units
    assert eviction_pod_weights(problem) == placed_units(problem).tolist() == [400, 700]


def test_cpsat_prefers_one_whole_gpu_to_three_shared_tenths():
    """1000 milli placed beats 3 × 300: counted in whole units (old rule) the three shared pods
    (3 units) would win over the one whole GPU (1 unit)."""
    solved = solve_checked(shared_instance())
    assert solved.nodes_of("whole") == ["n0"]
    assert solved.result.objective.stages["placed"] == 1000 + 1000  # whole + the cpu pod
    metrics = plan_metrics(solved.problem, solved.plan)
    assert metrics.accelerators_placed == 2000
    assert metrics.summary()["accelerator_unit"] == "milli"
    assert metrics.accelerator_label == "milli-accelerators"


def test_cpsat_plan_is_deterministic():
    first = solve_checked(shared_instance(), use_hint=False).plan.bindings
    second = solve_checked(shared_instance(), use_hint=False).plan.bindings
    assert first == second
