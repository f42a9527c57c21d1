"""kube-scheduler's workload-cycle tests (``algorithm_podgroup_test.go``, data/README.md) run
through the kube reader and the ``kube`` engine.

Upstream injects plugin answers through fakes; each case the real plugins can reproduce is
re-expressed as a small cluster (``scenario``) and checked for the pods bound and the group's
outcome; the others are listed in the data with why. Every plan must pass the checker.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import yaml

from tests.fidelity.kube.objects import GROUP, NAMESPACE, load, tree_pods
from toposolve.check.checker import check_plan
from toposolve.core.assignment import to_plan
from toposolve.core.problem import compile_problem
from toposolve.engines.kube.cycle import nominated_placement, run_kube

DATA = Path(__file__).parent / "data" / "podgroup_algorithm.yaml"
CASES = yaml.safe_load(DATA.read_text())["cases"]
RUN = [c for c in CASES if "scenario" in c]
# upstream test function -> its number of cases at the pinned commit
UPSTREAM = {"TestPodGroupSchedulingAlgorithm": 12, "TestPodGroupSchedulingPlacementAlgorithm": 10,
            "TestNominatedPlacement": 6, "TestNominatedPlacementOrderIndependent": 1,
            "TestPodGroupSchedulingPlacementAlgorithm_NominatedNode": 6,
            "TestPodGroupSchedulingPlacementAlgorithm_Scoring": 2,
            "TestPlacementCycleStateLifecycle": 1, "TestPlacementCycleStateLifecycle_MultiLevel": 1,
            "TestCPGSchedulingPlacementAlgorithm": 7,
            "TestCPGSchedulingPlacementAlgorithm_Scoring": 2,
            "TestScorePlacementPodGroupAssignments": 4}


def outcome(scenario) -> tuple[bool, dict[str, str], str | None]:
    """(whether the group was scheduled, its pods bound by the cycle: name -> node, the reason
    it stays pending)."""
    scheduled, bound, reason, _ = worded(scenario)
    return scheduled, bound, reason


def worded(scenario) -> tuple[bool, dict[str, str], str | None, str | None]:
    """:func:`outcome` and the event of the group's pod that found no node (the engine's
    ``scheduler_reason``)."""
    warnings: list[str] = []
    instance = load(scenario, warnings)
    tree = scenario.get("composite")
    job = f"{NAMESPACE}/{tree['name'] if tree else GROUP}"
    if not any(j.key == job for j in instance.jobs):  # skipped by the reader: never placed
        assert warnings, "a PodGroup left out without a warning"
        return False, {}, None, None
    problem = compile_problem(instance)
    assignment = run_kube(problem)
    plan = to_plan(problem, assignment, engine="kube", status="FEASIBLE")
    assert check_plan(instance, plan) == []
    prefix = f"{NAMESPACE}/"
    bound = {b.pod.removeprefix(prefix): b.node for b in plan.bindings}
    ours = set(tree_pods(tree)) if tree else {p["name"] for p in scenario.get("pods", [])}
    mine = {p: n for p, n in bound.items() if p in ours}
    j = next(i for i, cj in enumerate(problem.jobs) if cj.key == job)
    return (j not in assignment.reasons and bool(mine), mine, assignment.reasons.get(j),
            assignment.scheduler_reasons.get(j))


@pytest.mark.parametrize("case", RUN, ids=[f"{c['test']}/{c['name']}" for c in RUN])
def test_workload_cycle_case(case):
    scheduled, bound, reason, event = worded(case["scenario"])
    assert bound == case["want"]["bound"]
    assert scheduled == case["want"]["scheduled"]
    if "reason" in case["want"]:  # upstream's status message, as far as it is not injected
        assert reason == case["want"]["reason"]
    if "event" in case["want"]:  # a pod's FitError: upstream's node count, the real reasons
        assert event == case["want"]["event"]
        assert event.partition(":")[0] == case["upstream_event"].partition(":")[0]


NOMINATED = [c for c in CASES if "placements" in c]


@pytest.mark.parametrize("case", NOMINATED, ids=[f"{c['test']}/{c['name']}" for c in NOMINATED])
def test_nominated_placement_case(case):
    """nominatedPlacement's own table: placements as node sets, the pods' nominations."""
    names = sorted({n for nodes in case["placements"].values() for n in nodes} |
                   {n for n in case["nominations"] if n})
    index = {n: i for i, n in enumerate(names)}
    nominated = {index[n] for n in case["nominations"] if n}
    orders = [list(case["placements"])]
    if case.get("both_orders"):
        orders.append(orders[0][::-1])
    for order in orders:
        nodes = [np.array([index[n] for n in case["placements"][p]]) for p in order]
        got = nominated_placement(nodes, nominated)
        assert (None if got is None else order[got]) == case["want"]


def test_every_upstream_case_is_ported_or_listed():
    assert Counter(c["test"] for c in CASES) == UPSTREAM
    assert all(sum(k in c for k in ("scenario", "listed", "placements")) == 1 for c in CASES)


@pytest.mark.parametrize("case", [c for c in RUN if "weights" in c["scenario"]],
                         ids=lambda c: c["name"])
def test_scoring_cases_turn_on_the_configured_weights(case):
    """The re-expressed scoring cases hold only with their weights: with PodGroupPodsCount
    weighing 0 (NodeResourcesFit's preference alone) the other placement wins."""
    scenario = {**case["scenario"], "weights": [1, 0]}
    _, bound, _ = outcome(scenario)
    assert bound and set(bound.values()).isdisjoint(case["want"]["bound"].values())


def test_the_nomination_overrides_the_placement_scores():
    """The short-circuit case holds because of the nomination: without it the higher-scored
    placement wins; the nominated pod also goes to its nominated node within the placement."""
    case = next(c for c in RUN if c["name"].startswith("nominated placement short-circuits"))
    plain = {**case["scenario"], "pods": [{"name": "foo"}]}
    assert outcome(plain)[1] == {"foo": "node1"}
    nodes = [{"name": n, "labels": {"topology": "d1"}} for n in ("node1", "node2")]
    within = {"policy": "basic", "key": "topology", "nodes": nodes, "pods": [{"name": "foo"}]}
    assert outcome(within)[1] == {"foo": "node1"}  # equal scores: the first node by name
    within["pods"] = [{"name": "foo", "nominated": "node2"}]
    assert outcome(within)[1] == {"foo": "node2"}
