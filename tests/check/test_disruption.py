"""Evictions beyond a PodDisruptionBudget are warnings, not violations: Volcano deletes its
preemption victims and honours budgets only with its opt-in ``pdb`` plugin (volcano-sh/volcano
pkg/scheduler/plugins/pdb/pdb.go at 086cd831), which the mirror does not model (issue 20)."""

from __future__ import annotations

import logging

from builders import example1_tree, gang, instance, nodes

from toposolve.check.checker import check_plan
from toposolve.check.disruption import disruption_warnings
from toposolve.core.instance import LabelSelector, PodDisruptionBudget, PriorityClass
from toposolve.solve import solve

CLASSES = [PriorityClass(name="high", value=1000), PriorityClass(name="low", value=1)]


def crowded(**budget):
    low = gang("low", 8, priority_class="low", running={i: f"node{i}" for i in range(8)})
    for task in low.tasks:
        task.labels = {"app": "low"}
    high = gang("urgent", 2, priority_class="high")
    inst = instance(nodes(8), example1_tree(), [low, high], CLASSES)
    if budget:
        inst.disruption_budgets = [PodDisruptionBudget(
            name="keep-low", selector=LabelSelector(match_labels={"app": "low"}), **budget)]
    return inst


def test_preemption_beyond_a_budget_is_a_warning(caplog):
    inst = crowded(max_unavailable=1)
    with caplog.at_level(logging.WARNING, logger="toposolve"):
        plan = solve(inst, "heuristic", evict="preempt")
    assert len(plan.evictions) >= 2
    assert check_plan(inst, plan, eviction_mode="preempt") == []
    (line,) = disruption_warnings(inst, plan)
    assert line.startswith(f"PodDisruptionBudget/default/keep-low: the plan evicts "
                           f"{len(plan.evictions)} of its pods, more than the 1 disruptions")
    assert line in caplog.text


def test_evictions_within_the_budget_say_nothing():
    inst = crowded(max_unavailable="100%")
    plan = solve(inst, "heuristic", evict="preempt")
    assert plan.evictions and disruption_warnings(inst, plan) == []
