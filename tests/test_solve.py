"""toposolve.solve: engines behind one call, every plan checked, eviction wired through."""

from __future__ import annotations

import pytest
from builders import example1_tree, gang, hard, instance, nodes

from toposolve.checker import check_plan
from toposolve.errors import InputError
from toposolve.model import PriorityClass
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
