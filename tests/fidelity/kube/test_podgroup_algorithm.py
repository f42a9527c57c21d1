"""kube-scheduler's workload-cycle tests (``algorithm_podgroup_test.go``, data/README.md) run
through the kube reader and the ``kube`` engine.

Upstream injects plugin answers through fakes; each case the real plugins can reproduce is
re-expressed as a small cluster (``scenario``) and checked for the pods bound and the group's
outcome; the others are listed in the data with why. Every plan must pass the checker.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from tests.fidelity.kube.objects import GROUP, NAMESPACE, load
from toposolve.check.checker import check_plan
from toposolve.core.assignment import to_plan
from toposolve.core.problem import compile_problem
from toposolve.engines.kube.cycle import run_kube

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
    warnings: list[str] = []
    instance = load(scenario, warnings)
    job = f"{NAMESPACE}/{GROUP}"
    if not any(j.key == job for j in instance.jobs):  # skipped by the reader: never placed
        assert warnings, "a PodGroup left out without a warning"
        return False, {}, None
    problem = compile_problem(instance)
    assignment = run_kube(problem)
    plan = to_plan(problem, assignment, engine="kube", status="FEASIBLE")
    assert check_plan(instance, plan) == []
    prefix = f"{NAMESPACE}/"
    bound = {b.pod.removeprefix(prefix): b.node for b in plan.bindings}
    ours = {p["name"] for p in scenario.get("pods", [])}
    mine = {p: n for p, n in bound.items() if p in ours}
    j = next(i for i, cj in enumerate(problem.jobs) if cj.key == job)
    return j not in assignment.reasons and bool(mine), mine, assignment.reasons.get(j)


@pytest.mark.parametrize("case", RUN, ids=[f"{c['test']}/{c['name']}" for c in RUN])
def test_workload_cycle_case(case):
    scheduled, bound, reason = outcome(case["scenario"])
    assert bound == case["want"]["bound"]
    assert scheduled == case["want"]["scheduled"]
    if "reason" in case["want"]:  # upstream's status message, as far as it is not injected
        assert reason == case["want"]["reason"]


def test_every_upstream_case_is_ported_or_listed():
    assert Counter(c["test"] for c in CASES) == UPSTREAM
    assert all(("scenario" in c) != ("listed" in c) for c in CASES)


@pytest.mark.parametrize("case", [c for c in RUN if "weights" in c["scenario"]],
                         ids=lambda c: c["name"])
def test_scoring_cases_turn_on_the_configured_weights(case):
    """The re-expressed scoring cases hold only with their weights: with PodGroupPodsCount
    weighing 0 (NodeResourcesFit's preference alone) the other placement wins."""
    scenario = {**case["scenario"], "weights": [1, 0]}
    _, bound, _ = outcome(scenario)
    assert bound and set(bound.values()).isdisjoint(case["want"]["bound"].values())
