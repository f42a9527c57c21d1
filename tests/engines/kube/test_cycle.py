"""The kube mirror's workload cycle on small hand-checked clusters."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from toposolve import solve
from toposolve.core.errors import InputError
from toposolve.core.problem import compile_problem
from toposolve.engines.common.node_scores import (
    balanced_allocation,
    least_allocated,
    most_allocated,
)
from toposolve.engines.kube.cycle import run_kube
from toposolve.engines.kube.scores import pods_count_scores
from toposolve.formats.load import instance_from_bodies

KEY = "example.com/rack"


def node(name: str, rack: str, cpu: str = "4") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {KEY: rack}},
            "status": {"allocatable": {"cpu": cpu, "memory": "16Gi"}}}


def group(name: str, pods: int, minimum: int, cpu: str = "1", key: str | None = KEY,
          on: dict[int, str] | None = None) -> list[dict[str, Any]]:
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": minimum}}}
    if key:
        spec["schedulingConstraints"] = {"topology": [{"key": key}]}
    docs = [{"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
             "metadata": {"name": name, "namespace": "ns"}, "spec": spec}]
    for i in range(pods):
        pod_spec: dict[str, Any] = {
            "schedulingGroup": {"podGroupName": name},
            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu,
                                                                    "memory": "1Gi"}}}]}
        running = (on or {}).get(i)
        if running:
            pod_spec["nodeName"] = running
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"{name}-{i}", "namespace": "ns"}, "spec": pod_spec,
                     "status": {"phase": "Running" if running else "Pending"}})
    return docs


def load(docs, warnings=None):
    return instance_from_bodies([(d, "t.yaml") for d in docs], "t",
                                (warnings if warnings is not None else []).append)


def placed_racks(instance, assignment) -> dict[str, set[str]]:
    problem = compile_problem(instance)
    out: dict[str, set[str]] = {}
    labels = {n.name: n.labels[KEY] for n in instance.nodes}
    for g, per_node in assignment.counts.items():
        job = problem.jobs[int(problem.group_job[g])].key
        out.setdefault(job, set()).update(labels[problem.topology.node_names[n]]
                                          for n in per_node)
    return out


def test_reader_marks_the_instance_kube_and_builds_the_key_level():
    inst = load([node("a", "r1"), node("b", "r2"), *group("pg", 2, 2)])
    assert inst.scheduler == "kube"
    assert sorted(h.name for h in inst.hypernodes) == ["r1", "r2"]
    assert inst.jobs[0].network_topology.mode == "hard"
    assert inst.jobs[0].min_available == 2


def test_gang_goes_to_the_one_domain_that_holds_it_whole():
    inst = load([node("a", "r1"), node("b", "r2"), node("c", "r2"), *group("pg", 6, 6)])
    a = run_kube(compile_problem(inst))
    assert placed_racks(inst, a) == {"ns/pg": {"r2"}}


def test_most_allocated_prefers_the_fuller_domain():
    # r1 holds 3 of 4 cpus already (a running group); both racks hold the new 1-pod group
    docs = [node("a", "r1"), node("b", "r2"), *group("old", 3, 3, on={0: "a", 1: "a", 2: "a"}),
            *group("pg", 1, 1)]
    inst = load(docs)
    assert placed_racks(inst, run_kube(compile_problem(inst)))["ns/pg"] == {"r1"}
    least = run_kube(compile_problem(inst), strategy="LeastAllocated")
    assert placed_racks(inst, least)["ns/pg"] == {"r2"}


@pytest.mark.parametrize(("shape", "rack"), [(((0, 0), (100, 10)), "r1"),
                                             (((0, 10), (100, 0)), "r2"),
                                             (((0, 0), (50, 10), (100, 0)), "r1")])
def test_requested_to_capacity_ratio_follows_its_shape(shape, rack):
    # with the new pod r1 is at 100% cpu / 25% memory, r2 at 25% / 6%. A peak at 50%: r1's cpu
    # scores 0 and leaves the mean (upstream), its memory 50 → 50; r2: (50 + 12) / 2 → 31
    docs = [node("a", "r1"), node("b", "r2"), *group("old", 3, 3, on={0: "a", 1: "a", 2: "a"}),
            *group("pg", 1, 1)]
    inst = load(docs)
    got = run_kube(compile_problem(inst), strategy="RequestedToCapacityRatio", shape=shape)
    assert placed_racks(inst, got)["ns/pg"] == {rack}


def test_requested_to_capacity_ratio_without_a_shape_is_refused():
    inst = load([node("a", "r1"), *group("pg", 1, 1)])
    with pytest.raises(ValueError, match="at least one shape point"):
        run_kube(compile_problem(inst), strategy="RequestedToCapacityRatio")


def test_pods_count_prefers_the_placement_scheduling_more_pods():
    # minCount 2 of 4: r1 holds 2 pods, r2 all 4 -> PodGroupPodsCount 50 vs 100
    inst = load([node("a", "r1", cpu="2"), node("b", "r2"), *group("pg", 4, 2)])
    a = run_kube(compile_problem(inst))
    assert placed_racks(inst, a) == {"ns/pg": {"r2"}}
    assert sum(sum(v.values()) for v in a.counts.values()) == 4


def test_running_pods_pin_the_domain():
    docs = [node("a", "r1", cpu="2"), node("b", "r2", cpu="8"),
            *group("pg", 3, 1, on={0: "a"})]
    inst = load(docs)
    a = run_kube(compile_problem(inst))
    assert placed_racks(inst, a) == {"ns/pg": {"r1"}}  # only one more pod fits in r1
    assert sum(sum(v.values()) for v in a.counts.values()) == 1
    # with minCount 3 the pinned domain cannot reach it: the group stays pending
    strict = load([node("a", "r1", cpu="2"), node("b", "r2", cpu="8"),
                   *group("pg", 3, 3, on={0: "a"})])
    assert not run_kube(compile_problem(strict)).counts


def test_no_feasible_placement_leaves_the_group_pending_with_a_reason():
    inst = load([node("a", "r1"), node("b", "r2"), *group("pg", 5, 5)])
    a = run_kube(compile_problem(inst))
    # upstream's PodGroup status, with GangScheduling's status of the first placement (r1: 4 of
    # 5 pods fit in its cpu 4), and the event of the pod that found no node there
    assert not a.counts and a.reasons[0] == (
        "0/2 placements are available, first placement status: minCount (5) cannot be "
        "satisfied: 4 scheduled, 0 remaining")
    assert a.scheduler_reasons[0] == "0/1 nodes are available: 1 Insufficient cpu."


def test_solve_defaults_to_kube_and_the_plan_checks():
    inst = load([node("a", "r1"), node("b", "r2"), *group("pg", 3, 3),
                 *group("free", 2, 2, key=None)])
    plan = solve(inst)
    assert plan.engine == "kube" and len(plan.bindings) == 5


def test_key_no_node_carries_skips_the_group_with_a_warning():
    warnings: list[str] = []
    inst = load([node("a", "r1"), *group("pg", 1, 1, key="other/key")], warnings)
    assert not inst.jobs and any("no node carries topology key" in w for w in warnings)


def test_two_constraints_are_refused_in_one_line():
    docs = group("pg", 1, 1)
    docs[0]["spec"]["schedulingConstraints"]["topology"].append({"key": "x"})
    with pytest.raises(InputError, match="at most one topology constraint"):
        load([node("a", "r1"), *docs])


def test_scores_match_the_upstream_formulas():
    alloc, req = np.array([4000, 1000]), np.array([1000, 500])
    w = np.array([1, 1])
    assert int(least_allocated(req, alloc, w)) == (75 + 50) // 2
    assert int(most_allocated(req, alloc, w)) == (25 + 50) // 2
    assert int(balanced_allocation(req, alloc)) == int((1 - 0.125) * 100)
    assert pods_count_scores([2, 4, 0]) == [50, 100, 0]


def test_one_group_runs_schedule_exactly_their_bound(tmp_path):
    """The shortcut the engine takes for one-group jobs: the pod-by-pod run schedules exactly
    the per-domain fit bound, so it need not run in every domain."""
    from toposolve.cli.main import main
    from toposolve.core.kube_scoring import KubeScoring
    from toposolve.engines.common.capacity import Capacity
    from toposolve.engines.common.node_scores import NodeScoring
    from toposolve.engines.common.pod_run import Trial
    from toposolve.engines.kube.placement import Domains, candidates, run_pods, upper_bounds
    from toposolve.formats.load import load_instance

    path = tmp_path / "sp.yaml"
    assert main(["generate", "superpod", "--nodes", "128", "--format", "kube", "-o",
                 str(path)]) == 0
    problem = compile_problem(load_instance(path, warn=lambda _: None))
    cap, domains = Capacity(problem), Domains(problem)
    scored = NodeScoring.of(problem, KubeScoring())
    checked = 0
    for j, cj in enumerate(problem.jobs):
        found = candidates(problem, domains, j)
        if len(cj.groups) != 1 or isinstance(found, str) or found == [None]:
            continue
        bounds = upper_bounds(problem, cap.free, j, domains.matrix(cj.limit.tier, found), None)
        for d, bound in zip(found, bounds, strict=True):
            trial = Trial(d, domains.nodes(d, None))
            run_pods(problem, cap, scored, j, Trial(d, trial.nodes), 0)
            ok = run_pods(problem, cap, scored, j, trial, 0)
            if bound >= cj.min_available and bound >= 1:
                assert ok and len(trial.pods) == bound
                checked += 1
    assert checked


def test_pod_by_pod_node_choice_follows_node_resources_fit_strategy():
    # one placement (no key): a holds 3 of 4 cpus, b none; LeastAllocated spreads to b,
    # MostAllocated packs onto a; with NodeResourcesFit weighing 0 only BalancedAllocation
    # scores, which prefers b (cpu and memory fractions closer together)
    from toposolve.core.kube_scoring import KubeScoring, ScoringStrategy

    docs = [node("a", "r1"), node("b", "r1"),
            *group("old", 3, 3, key=None, on={0: "a", 1: "a", 2: "a"}),
            *group("pg", 1, 1, key=None)]
    inst = load(docs)

    def where(config):
        problem = compile_problem(inst)
        a = run_kube(problem, config=config)
        g = next(g for g in a.counts if problem.jobs[int(problem.group_job[g])].key == "ns/pg")
        return {problem.topology.node_names[n] for n in a.counts[g]}

    assert where(None) == {"b"}
    assert where(KubeScoring(node=ScoringStrategy(type="MostAllocated"))) == {"a"}
    most_alone = KubeScoring(node=ScoringStrategy(type="MostAllocated"), balanced_weight=0)
    assert where(most_alone) == {"a"}
    assert where(KubeScoring(node_fit_weight=0)) == {"b"}


def test_a_pod_level_request_decides_the_fit():
    # the containers ask 1 cpu, the pod level 3: only the node with 3 free cpus holds the pod
    docs = [node("a", "r1"), node("b", "r2"), *group("old", 2, 2, on={0: "a", 1: "a"}),
            *group("pg", 1, 1)]
    docs[-1]["spec"]["resources"] = {"requests": {"cpu": "3"}}
    inst = load(docs)
    assert placed_racks(inst, run_kube(compile_problem(inst)))["ns/pg"] == {"r2"}
    docs[-1]["spec"].pop("resources")  # without it MostAllocated packs onto the fuller a
    inst = load(docs)
    assert placed_racks(inst, run_kube(compile_problem(inst)))["ns/pg"] == {"r1"}
