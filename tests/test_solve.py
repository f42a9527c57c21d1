"""toposolve.solve: engines behind one call, every plan checked, eviction wired through."""

from __future__ import annotations

import pytest
from builders import example1_tree, gang, hard, inner, instance, leaf, nodes

from toposolve.check.checker import check_plan
from toposolve.core.assignment import Assignment
from toposolve.core.errors import InputError
from toposolve.core.instance import PriorityClass
from toposolve.core.plan import Binding, Plan
from toposolve.policy.objective import evaluate
from toposolve.solve import solve

CLASSES = [PriorityClass(name="high", value=1000), PriorityClass(name="low", value=1)]


def crowded():
    low = gang("low", 8, priority_class="low", running={i: f"node{i}" for i in range(8)})
    high = gang("urgent", 2, topology=hard(1), priority_class="high")
    return instance(nodes(8), example1_tree(), [low, high], CLASSES)


def test_without_eviction_the_urgent_job_waits():
    plan = solve(crowded(), "heuristic")
    assert plan.evictions == [] and not plan.job("default/urgent").placed


def test_preempt_evicts_lower_priority_pods_and_nominates_the_preemptor():
    inst = crowded()
    plan = solve(inst, "heuristic", evict="preempt")
    assert plan.job("default/urgent").placed
    assert plan.evictions and all(e.pod.startswith("default/low-") for e in plan.evictions)
    assert {b.node for b in plan.bindings} <= {e.node for e in plan.evictions}
    assert all(b.nominated for b in plan.bindings)
    assert check_plan(inst, plan, eviction_mode="preempt") == []
    assert plan.stats["eviction"]["mode"] == "preempt"
    (victim,) = plan.stats["victims"]
    assert victim["job"] == "default/low" and victim["evicted"] == len(plan.evictions)
    assert victim["broken"] and victim["keeps"] == 8 - victim["evicted"]  # 8 pods, minAvailable 8


def test_cpsat_with_eviction_is_checked_and_reports_victims():
    inst = crowded()
    plan = solve(inst, "cpsat", evict="preempt", time_limit=10, deterministic=True)
    assert plan.job("default/urgent").placed
    assert check_plan(inst, plan, eviction_mode="preempt") == []
    assert [v["job"] for v in plan.stats["victims"]] == ["default/low"]


def test_cpsat_returns_the_heuristic_plan_as_fallback_when_it_finds_nothing(monkeypatch):
    """The time limit ends without a CP-SAT solution: solve() returns the heuristic's plan."""
    import toposolve.engines.cpsat as cpsat

    real = cpsat.solve_cpsat

    def out_of_time(problem, profile, options, hint=None):
        result = real(problem, profile, options, hint)
        result.assignment, result.status = Assignment(), "UNKNOWN"
        result.objective = evaluate(problem, result.assignment, profile.objective)
        result.bound = 0.0  # what an unfinished CP-SAT stage reported (the audit, issue 10)
        return result

    monkeypatch.setattr(cpsat, "solve_cpsat", out_of_time)
    inst = instance(
        nodes(8), example1_tree(), [gang("a", 2, topology=hard(1)), gang("b", 4, topology=hard(2))]
    )
    plan = solve(inst, "cpsat", time_limit=5)
    assert plan.status == "FALLBACK" and "volcano plan returned" in plan.stats["fallback"]
    assert plan.bound is None and plan.gap is None  # 0.0 is below the plan's value: not a bound
    assert plan.to_dict()["gap"] is None
    assert plan.bindings == solve(inst, "heuristic").bindings
    assert check_plan(inst, plan) == []


def test_heuristic_plan_reports_objective_stages():
    plan = solve(instance(nodes(8), example1_tree(), [gang("a", 2, topology=hard(1))]), "heuristic")
    assert plan.status == "FEASIBLE"
    assert plan.stats["objective_stages"]["placed"] == 16  # 2 pods × 8 GPUs, one priority level


def test_unknown_engine_is_rejected():
    with pytest.raises(ValueError, match="unknown engine"):
        solve(crowded(), "magic")


def test_unknown_profile_is_an_input_error():
    with pytest.raises(InputError, match="no profile named"):
        solve(crowded(), "heuristic", profile="does-not-exist")


def nvlink_instance():
    """NVLink pairs at tier 0 (Volcano's CRD allows it) under two leaves and a spine."""
    tree = [
        *(leaf(f"nvl{k}", [f"node{2 * k}", f"node{2 * k + 1}"], tier=0) for k in range(4)),
        inner("leaf0", ["nvl0", "nvl1"], 1),
        inner("leaf1", ["nvl2", "nvl3"], 1),
        inner("spine", ["leaf0", "leaf1"], 2),
    ]
    jobs = [
        gang("pair", 2, topology=hard(0), creation_index=0),
        gang("quad", 4, topology=hard(1), creation_index=1),
        gang("triple", 3, topology=hard(0), creation_index=2),  # no tier-0 domain has 3 nodes
    ]
    return instance(nodes(8), tree, jobs)


@pytest.mark.parametrize("engine", ["heuristic", "cpsat"])
def test_highest_tier_allowed_zero_keeps_a_job_in_one_tier_zero_domain(engine):
    inst = nvlink_instance()
    plan = solve(inst, engine, time_limit=10)  # solve() checks the plan
    by_job: dict[str, set[str]] = {}
    for b in plan.bindings:
        by_job.setdefault(b.pod.split("/")[1].rsplit("-", 2)[0], set()).add(b.node)
    assert sorted(by_job) == ["pair", "quad"]
    assert by_job["pair"] in (
        {"node0", "node1"},
        {"node2", "node3"},
        {"node4", "node5"},
        {"node6", "node7"},
    )
    assert by_job["quad"] in ({f"node{i}" for i in range(4)}, {f"node{i}" for i in range(4, 8)})
    assert plan.job("default/triple").reason and not plan.job("default/triple").placed


def test_checker_enforces_tier_zero():
    inst = nvlink_instance()
    one_domain = Plan(
        engine="hand",
        status="FEASIBLE",
        bindings=[
            Binding(pod="default/pair-worker-0", node="node2"),
            Binding(pod="default/pair-worker-1", node="node3"),
        ],
    )
    assert check_plan(inst, one_domain) == []
    two_domains = Plan(
        engine="hand",
        status="FEASIBLE",
        bindings=[
            Binding(pod="default/pair-worker-0", node="node1"),
            Binding(pod="default/pair-worker-1", node="node2"),
        ],
    )
    found = check_plan(inst, two_domains)
    assert [v.kind for v in found] == ["tier"] and "'leaf0'" in found[0].message


@pytest.mark.parametrize("engine", ["heuristic", "cpsat"])
def test_a_pod_running_on_an_absent_node_completes_the_gang(engine):
    # 3-pod gang, one pod on a node deleted since: two free nodes complete it (solve() checks)
    job = gang("x", 3, topology=hard(1), running={0: "deleted-node"})
    plan = solve(instance(nodes(2), example1_tree()[:1], [job]), engine, time_limit=10)
    assert sorted(b.node for b in plan.bindings) == ["node0", "node1"]
    assert plan.job("default/x").placed


def test_a_plan_carries_its_status_as_a_plain_string():
    from toposolve.core.status import SolveStatus

    plan = solve(crowded(), "heuristic")
    assert type(plan.status) is str and plan.status == SolveStatus.FEASIBLE
    assert Plan.from_dict(plan.to_dict()).status == "FEASIBLE"
