"""The shared objective: units, strict priority dominance, spread, fragmentation, comparison.

Expected values are derived by hand from the definitions in ``toposolve.policy.objective``.
"""

from __future__ import annotations

import numpy as np
from builders import GPU, example1_tree, gang, hard, instance, nodes, partitioned, soft

from toposolve.core.assignment import Assignment
from toposolve.core.instance import Job, Node, PriorityClass, Task
from toposolve.core.problem import compile_problem
from toposolve.policy.objective import (
    ObjectiveValue,
    accelerator_units,
    dominance_weights,
    evaluate,
    stage_values,
)
from toposolve.policy.profiles import ObjectiveSpec, ObjectiveStage


def lexicographic(*names: str) -> ObjectiveSpec:
    return ObjectiveSpec(mode="lexicographic", stages=[ObjectiveStage(name=n) for n in names])


def place(problem, plan: dict[str, list[int]]) -> Assignment:
    """``{job name: [node index per new pod]}`` → Assignment (single-group jobs)."""
    out = Assignment()
    by_name = {cj.key.split("/", 1)[1]: cj for cj in problem.jobs}
    for name, node_list in plan.items():
        cj = by_name[name]
        groups = [g for g in cj.groups if problem.group_pending[g]]
        cursor = {g: 0 for g in groups}
        for n in node_list:
            g = next(g for g in groups if cursor[g] < len(problem.group_pending[g]))
            out.add(g, n, 1)
            cursor[g] += 1
    return out


def test_accelerator_units_round_up_and_count_cpu_pods_as_one():
    inst = instance(
        [Node(name="n0", allocatable={"cpu": 64, GPU: 8, "huawei.com/Ascend910": 8})],
        [],
        [
            Job(name="a", tasks=[Task(name="t", replicas=1, requests={GPU: 8})]),
            Job(name="b", tasks=[Task(name="t", replicas=1, requests={GPU: "500m"})]),
            Job(name="c", tasks=[Task(name="t", replicas=1, requests={"cpu": 4})]),
            Job(
                name="d",
                tasks=[Task(name="t", replicas=1, requests={"huawei.com/Ascend910": 2, GPU: 1.5})],
            ),
        ],
    )
    problem = compile_problem(inst)
    assert accelerator_units(problem).tolist() == [8, 1, 1, 2 + 2]


def test_dominance_weights_make_one_high_unit_beat_all_low_units():
    # levels 10 (16 units pending), 100 (3 units), 1000: W = 1, 1 + 16, 1 + 16 + 17*3
    weights = dominance_weights({10: 16, 100: 3, 1000: 5})
    assert weights == {10: 1, 100: 17, 1000: 68}
    assert weights[100] * 1 > weights[10] * 16
    assert weights[1000] * 1 > weights[100] * 3 + weights[10] * 16


def test_placed_is_priority_weighted_units_of_new_pods():
    pcs = [PriorityClass(name="hi", value=1000), PriorityClass(name="lo", value=1)]
    inst = instance(
        nodes(8),
        example1_tree(),
        [gang("low", 2, gpus=8, priority_class="lo"), gang("high", 1, gpus=4, priority_class="hi")],
        priority_classes=pcs,
    )
    problem = compile_problem(inst)
    # pending units: low level 2 pods × 8 = 16, high level 1 × 4 → W_lo = 1, W_hi = 17
    only_high = stage_values(problem, place(problem, {"high": [0]}))
    only_low = stage_values(problem, place(problem, {"low": [0, 1]}))
    assert only_high["placed"] == 17 * 4
    assert only_low["placed"] == 16
    assert only_high["placed"] > only_low["placed"]


def test_spread_is_tier_of_each_placed_jobs_lca_plus_policy_subjobs():
    job = partitioned(
        "p", partitions=2, size=2, job_topology=hard(2), partition_topology=hard(1), min_available=4
    )
    inst = instance(
        nodes(8), example1_tree(), [gang("one", 1), gang("wide", 2, topology=soft()), job]
    )
    problem = compile_problem(inst)
    # one: node0 → s0 (tier 1); wide: node0 + node4 → s6 (tier 3);
    # p: partition 0 on node2, node3 (s1, tier 1), partition 1 on node1 and node0 (s0, tier 1),
    # the job's pods under s4 (tier 2) → 2 + 1 + 1.
    a = place(problem, {"one": [0], "wide": [0, 4], "p": [2, 3, 1, 0]})
    values = stage_values(problem, a)
    assert values["spread"] == 1 + 3 + (2 + 1 + 1)


def test_spread_counts_running_pods_and_the_root_for_nodes_outside_the_tree():
    node_list = [*nodes(8), Node(name="loner", allocatable={"cpu": 64, GPU: 8})]
    inst = instance(
        node_list,
        example1_tree(),
        [gang("r", 2, min_available=1, running={0: "node0"}), gang("x", 1)],
    )
    problem = compile_problem(inst)
    # r: running on node0, new pod on node1 → s0 (tier 1); x on the loner: root tier = 4
    a = place(problem, {"r": [1], "x": [8]})
    assert stage_values(problem, a)["spread"] == 1 + 4
    # a job that only keeps its running pods is not "placed": it adds nothing
    assert stage_values(problem, place(problem, {"x": [8]}))["spread"] == 4


def test_fragmentation_counts_idle_leaves_that_receive_pods():
    inst = instance(
        nodes(8),
        example1_tree(),
        [gang("busy", 2, min_available=1, running={0: "node0"}), gang("x", 3, min_available=1)],
    )
    problem = compile_problem(inst)
    # s0 is busy (running pod on node0): placing there does not count; s1 and s2 were idle
    a = place(problem, {"x": [1, 2, 4]})
    assert stage_values(problem, a)["fragmentation"] == 2


def test_eviction_stages_are_zero_without_evictions_and_count_broken_gangs():
    inst = instance(
        nodes(8),
        example1_tree(),
        [gang("v", 3, min_available=2, running={0: "node0", 1: "node1", 2: "node2"})],
    )
    problem = compile_problem(inst)
    empty = stage_values(problem, Assignment())
    assert (empty["broken_gangs"], empty["eviction_cost"], empty["evicted_pods"]) == (0, 0, 0)
    one = stage_values(problem, Assignment(evicted=["default/v-worker-0"]))
    # 2 pods left ≥ minAvailable 2: not broken; one 8-GPU pod evicted, one level: W' = 1
    assert (one["broken_gangs"], one["eviction_cost"], one["evicted_pods"]) == (0, 8, 1)
    two = stage_values(problem, Assignment(evicted=["default/v-worker-0", "default/v-worker-1"]))
    assert (two["broken_gangs"], two["evicted_pods"]) == (1, 2)


def test_lexicographic_comparison_and_scalar():
    spec = lexicographic("placed", "spread", "fragmentation")
    inst = instance(nodes(8), example1_tree(), [gang("a", 2, min_available=1)])
    problem = compile_problem(inst)
    packed = evaluate(problem, place(problem, {"a": [0, 1]}), spec)  # s0: spread 1, frag 1
    split = evaluate(problem, place(problem, {"a": [0, 2]}), spec)  # s4: spread 2, frag 2
    fewer = evaluate(problem, place(problem, {"a": [0]}), spec)  # 8 units only
    assert packed.stages == {"placed": 16, "spread": 1, "fragmentation": 1}
    assert split.stages == {"placed": 16, "spread": 2, "fragmentation": 2}
    assert packed.better(split) and not split.better_or_equal(packed)
    assert split.better(fewer)  # placed dominates spread
    assert packed.scalar == 16.0 and fewer.scalar == 8.0
    assert packed.compare(packed) == 0


def test_weighted_scalar_signs_minimised_stages():
    spec = ObjectiveSpec(
        mode="weighted",
        stages=[
            ObjectiveStage(name="placed", weight=100),
            ObjectiveStage(name="spread", weight=10),
            ObjectiveStage(name="fragmentation", weight=1),
        ],
    )
    inst = instance(nodes(8), example1_tree(), [gang("a", 2, min_available=1)])
    problem = compile_problem(inst)
    value = evaluate(problem, place(problem, {"a": [0, 2]}), spec)
    assert value.scalar == 100 * 16 - 10 * 2 - 1 * 2
    other = ObjectiveValue(stages=dict(value.stages), mode="weighted", scalar=value.scalar - 1)
    assert value.better(other)


def test_accelerator_units_shape_matches_groups():
    inst = instance(nodes(2), [], [gang("a", 3), gang("b", 1, gpus=0, cpu=2)])
    problem = compile_problem(inst)
    assert isinstance(accelerator_units(problem), np.ndarray)
    assert accelerator_units(problem).tolist() == [8, 1]


def test_placed_jobs_counts_jobs_with_strict_priority_dominance():
    """Levels: two jobs at priority 1, one at 100. W(1) = 1, W(100) = 1 + 1·2 = 3, so the
    high job alone (3) beats both low jobs (2)."""
    from builders import gang, instance, nodes

    from toposolve.core.assignment import Assignment
    from toposolve.core.instance import PriorityClass
    from toposolve.core.problem import compile_problem
    from toposolve.policy.objective import placed_job_weights, stage_values

    classes = [PriorityClass(name="hi", value=100), PriorityClass(name="lo", value=1)]
    jobs = [
        gang("l1", 1, priority_class="lo"),
        gang("l2", 1, priority_class="lo"),
        gang("h", 1, priority_class="hi"),
    ]
    problem = compile_problem(instance(nodes(2), [], jobs, classes))
    assert placed_job_weights(problem) == {0: 1, 1: 1, 2: 3}
    lows, high = Assignment(), Assignment()
    lows.add(0, 0, 1)
    lows.add(1, 1, 1)
    high.add(2, 0, 1)
    assert stage_values(problem, lows)["placed_jobs"] == 2
    assert stage_values(problem, high)["placed_jobs"] == 3
