"""The CP-SAT ``comm`` stage (:mod:`toposolve.engines.cpsat.model.comm`): hand-built cases whose
optimum is known by construction, the expression against the policy's value, determinism."""

from __future__ import annotations

import random

import pytest
from builders import gang, inner, instance, leaf, nodes, on
from cpsat_support import solve_checked

from toposolve.core.assignment import Assignment
from toposolve.core.problem import compile_problem
from toposolve.engines.cpsat.model.hint import hint_from_assignment, hint_is_feasible
from toposolve.engines.cpsat.model.model import PlacementModel
from toposolve.engines.cpsat.model.objectives import stage_exprs
from toposolve.engines.cpsat.solve.parameters import Settings
from toposolve.engines.cpsat.solve.runner import expr_value
from toposolve.generate import generate
from toposolve.policy.comm_stage import comm_value, dp_span_value, pp_span_value
from toposolve.policy.edge_floor import edge_floor_value
from toposolve.policy.profiles import ObjectiveSpec, ObjectiveStage, load_profile
from toposolve.policy.span_floor import span_floor_value

COMM = load_profile("comm")
LEAVES = ["L0", "L1", "L2"]


def fragmented(b_layout: str | None, *, running_a: dict[int, str] | None = None):
    """Three 4-node leaves under one spine; a running job holds two nodes of L0 and two of L1,
    so L0 and L1 have two free nodes each and L2 four. Pending: ``b`` (4 pods, ``b_layout``,
    first in the queue) and ``a`` (4 pods, tp=8,pp=2,dp=2)."""
    tree = [leaf(name, [f"node{4 * k + i}" for i in range(4)]) for k, name in enumerate(LEAVES)]
    tree.append(inner("S", LEAVES, 2))
    background = gang("bg", 4, running=on(0, 1, 4, 5))
    b = gang("b", 4)
    b.parallelism = b_layout
    a = gang("a", 4, creation_index=1, running=running_a)
    a.parallelism = "tp=8,pp=2,dp=2"
    return instance(nodes(12), tree, [background, b, a])


def leaves_of(names: list[str]) -> set[str]:
    return {LEAVES[int(n.removeprefix("node")) // 4] for n in names}


def test_the_layout_job_gets_the_whole_free_leaf():
    """Only ``a`` carries a layout: the comm optimum is 0, ``a`` alone in L2, and ``b`` (no
    layout: not counted) takes the two fragments; every plan passes the checker."""
    solved = solve_checked(fragmented(None), COMM, time_limit=5)
    assert solved.result.objective.stages["placed"] == 64  # both jobs placed
    assert solved.result.objective.stages["comm"] == 0
    assert leaves_of(solved.nodes_of("a")) == {"L2"}
    assert leaves_of(solved.nodes_of("b")) == {"L0", "L1"}


def test_two_layout_jobs_one_must_cross_a_leaf():
    """Both carry layouts and only one fits a leaf: the other crosses two leaves of the spine,
    ``tp × Δ_leaf × 2 = 8 × 1 × 2 = 16``, and nothing cheaper exists (OPTIMAL)."""
    solved = solve_checked(fragmented("tp=8,dp=4"), COMM, time_limit=5)
    assert solved.result.objective.stages["comm"] == 16
    assert solved.result.stats.stages[1]["status"] == "OPTIMAL"
    assert sorted(len(leaves_of(solved.nodes_of(j))) for j in ("a", "b")) == [1, 2]


def test_new_pods_join_the_leaf_their_running_pods_are_in():
    """``a`` already runs two pods in L2 (nodes 8, 9): its two new pods go to L2 too."""
    solved = solve_checked(fragmented(None, running_a=on(8, 9)), COMM, time_limit=5)
    assert solved.result.objective.stages["comm"] == 0
    assert leaves_of(solved.nodes_of("a")) == {"L2"}


def test_same_input_same_plan():
    first = solve_checked(fragmented("tp=8,dp=4"), COMM, time_limit=5).plan
    second = solve_checked(fragmented("tp=8,dp=4"), COMM, time_limit=5).plan
    assert first.bindings == second.bindings


def stage_matches_policy_on_random_plans(stage_name, value_of, seed, layouts):
    """At the hint of random plans (``a`` and, or not, ``b`` on random free nodes; ``a`` partly
    running where a layout says so) the stage's expression is the policy's value of that plan
    and the hint satisfies the model; returns the values seen."""
    settings = Settings(time_limit=5, workers=1, seed=0, deterministic=True, log=False)
    rng = random.Random(seed)
    values = set()
    for running_a, b_layout in layouts:
        problem = compile_problem(fragmented(b_layout, running_a=running_a))
        pm = PlacementModel(problem)
        (stage,) = stage_exprs(problem, pm.vars, [stage_name], allow_split=True)
        group = {problem.jobs[j].key: problem.jobs[j].groups[0] for j in problem.pending_jobs}
        free = [n for n in (2, 3, 6, 7, 8, 9, 10, 11) if not running_a or n != 8]
        for _ in range(8):
            rng.shuffle(free)
            plan = Assignment()
            for n in free[:problem.group_pending_count(group["default/a"])]:
                plan.add(group["default/a"], n, 1)
            if rng.random() < 0.7:
                for n in free[-4:]:
                    plan.add(group["default/b"], n, 1)
            hint = hint_from_assignment(pm, plan)
            assert hint.complete and hint.fits_nodes
            value = value_of(problem, plan)
            assert expr_value(stage.expr, hint.values) == value
            assert hint_is_feasible(pm.model, hint.values, settings, 5.0)
            values.add(value)
    return values


def test_expression_equals_the_policy_value_on_random_plans():
    """The comm stage (``b`` a chain in one variant)."""
    layouts = ((None, "tp=8,dp=4"), (on(8), "tp=8,dp=4"), (None, "tp=8,pp=4"))
    values = stage_matches_policy_on_random_plans("comm", comm_value, 2, layouts)
    assert len(values) >= 3  # plans crossing 0, 2, 3 leaves or spines: not 0 == 0 throughout


def _annotated_superpod():
    inst = generate("superpod", nodes=64, load=1.3, seed=2)
    for job in inst.jobs:
        units = set(job.pod_accelerators())
        if job.replicas >= 2 and len(units) == 1 and min(units) > 0:
            job.parallelism = f"tp={units.pop()},dp={job.replicas}"
    return inst


def test_the_stage_literals_exist_only_when_asked_for():
    problem = compile_problem(_annotated_superpod())
    pm = PlacementModel(problem)
    before = len(pm.model.proto.variables)
    stage_exprs(problem, pm.vars, ["placed", "spread"], allow_split=True)
    assert len(pm.model.proto.variables) == before and not pm.vars.comm.uses


DP_FIRST = COMM.model_copy(update={"objective": ObjectiveSpec(stages=[
    ObjectiveStage(name=n) for n in ("placed", "comm", "dp_span", "spread")])})


def two_leaves_without_room(free_l0: int = 2, free_l1: int = 3):
    """Two 4-node leaves under one spine, ``4 - free`` nodes of each busy; pending ``a`` (4 pods,
    tp=8,pp=2,dp=2): no leaf holds it, so every placement crosses the two leaves."""
    tree = [leaf(name, [f"node{4 * k + i}" for i in range(4)]) for k, name in enumerate(LEAVES[:2])]
    tree.append(inner("S", LEAVES[:2], 2))
    busy = list(range(4 - free_l0)) + [4 + i for i in range(4 - free_l1)]
    a = gang("a", 4, creation_index=1)
    a.parallelism = "tp=8,pp=2,dp=2"
    return instance(nodes(8), tree, [gang("bg", len(busy), running=on(*busy)), a])


def test_dp_span_splits_the_job_into_whole_dp_groups_per_leaf():
    """3 + 1 and 2 + 2 over the two leaves cross the same cells (comm 8 · 1 · 2 = 16); only 2 + 2
    holds whole DP groups (dp = 2) per leaf, so DP spans can stay in a leaf: dp_span 0 against
    Δ_leaf = 1 for 3 + 1, and the solver must find it (OPTIMAL)."""
    solved = solve_checked(two_leaves_without_room(), DP_FIRST, time_limit=5)
    stages = solved.result.objective.stages
    assert (stages["comm"], stages["dp_span"]) == (16, 0)
    leaf_of = [int(n.removeprefix("node")) // 4 for n in solved.nodes_of("a")]
    assert sorted(leaf_of) == [0, 0, 1, 1]
    assert all(s["status"] == "OPTIMAL" for s in solved.result.stats.stages)


@pytest.mark.parametrize("name", ["dp_span", "pp_span"])
def test_span_expression_equals_the_policy_value_and_hints_are_feasible(name):
    """At the hint of every placement of ``a`` on the five free nodes (2 in L0, 3 in L1), the
    stage's expression is the policy's dp_span (pp_span) value: 0 for 2 + 2, 1 for 1 + 3 (a DP
    group and a pipeline of tp=8,pp=2,dp=2 both have 2 pods)."""
    settings = Settings(time_limit=5, workers=1, seed=0, deterministic=True, log=False)
    problem = compile_problem(two_leaves_without_room())
    pm = PlacementModel(problem)
    (stage,) = stage_exprs(problem, pm.vars, [name], allow_split=True)
    value_of = dp_span_value if name == "dp_span" else pp_span_value
    group = problem.jobs[problem.pending_jobs[0]].groups[0]
    values = {}
    for skip in (2, 3, 4, 5, 6, 7):  # nodes 2, 3 free in L0, 5, 6, 7 in L1; leave one out
        plan = Assignment()
        for n in [n for n in (2, 3, 5, 6, 7) if n != skip][:4]:
            plan.add(group, n, 1)
        hint = hint_from_assignment(pm, plan)
        assert hint.complete and hint.fits_nodes
        value = value_of(problem, plan)
        assert expr_value(stage.expr, hint.values) == value
        assert hint_is_feasible(pm.model, hint.values, settings, 5.0)
        values[skip] = value
    assert values == {2: 1, 3: 1, 4: 0, 5: 0, 6: 0, 7: 0}


def test_dp_span_same_input_same_plan():
    first = solve_checked(two_leaves_without_room(3, 3), DP_FIRST, time_limit=5)
    second = solve_checked(two_leaves_without_room(3, 3), DP_FIRST, time_limit=5)
    assert first.plan.bindings == second.plan.bindings
    assert first.result.objective.stages["dp_span"] == 0  # 2 + 2 again, from 3 + 3 free


FLOOR = load_profile("comm-floor")


def test_edge_floor_splits_the_job_whose_split_costs_least():
    """``b`` (tp=8,pp=4: a chain of 4 pods) and ``a`` (tp=8,pp=2,dp=2) both fit only L2 whole;
    the other splits 2 + 2 over L0 and L1. Split, the chain leaves 1 H-edge per leaf (8 ring
    edges each: stage 16), ``a`` 2 per leaf (stage 32): ``a`` gets L2, proven optimal."""
    solved = solve_checked(fragmented("tp=8,pp=4"), FLOOR, time_limit=5)
    assert solved.result.objective.stages["edge_floor"] == 16
    assert solved.result.stats.stages[1]["status"] == "OPTIMAL"
    assert leaves_of(solved.nodes_of("a")) == {"L2"}
    assert leaves_of(solved.nodes_of("b")) == {"L0", "L1"}


def test_edge_floor_expression_equals_the_policy_value_on_random_plans():
    """As for comm, with the ``edge_floor`` stage."""
    layouts = ((None, "tp=8,dp=4"), (on(8), "tp=8,pp=4"), (None, "tp=8,pp=4"))
    values = stage_matches_policy_on_random_plans("edge_floor", edge_floor_value, 3, layouts)
    assert len(values) >= 3


def test_edge_floor_same_input_same_plan():
    first = solve_checked(fragmented("tp=8,pp=4"), FLOOR, time_limit=5).plan
    second = solve_checked(fragmented("tp=8,pp=4"), FLOOR, time_limit=5).plan
    assert first.bindings == second.bindings


def test_span_floor_expression_equals_the_policy_value_on_random_plans():
    """As for comm, with the ``span_floor`` stage (the capped level is the leaves here: one
    level below the root), ``b`` with and without a layout the stage prices."""
    layouts = ((None, "tp=8,pp=2,dp=2"), (on(8), "tp=8,pp=4"), (None, None))
    values = stage_matches_policy_on_random_plans("span_floor", span_floor_value, 4, layouts)
    assert len(values) >= 3


def spines_with_three_free_leaves():
    """Two spines of two 6-node leaves (S0: L0, L1; S1: L2, L3), L1 busy; pending ``a``:
    tp=8,pp=2,dp=6, 12 whole-node pods — two whole free leaves, L0 + L2 (over both spines) or
    L2 + L3 (inside S1), both at the edge floor (three whole pipelines per leaf: 32 edges)."""
    names = ["L0", "L1", "L2", "L3"]
    tree = [leaf(name, [f"node{6 * k + i}" for i in range(6)]) for k, name in enumerate(names)]
    tree += [inner("S0", ["L0", "L1"], 2), inner("S1", ["L2", "L3"], 2),
             inner("T", ["S0", "S1"], 3)]
    a = gang("a", 12)
    a.parallelism = "tp=8,pp=2,dp=6"
    return instance(nodes(24), tree, [gang("bg", 6, running=on(*range(6, 12))), a])


def test_span_floor_keeps_the_job_inside_one_spine():
    """With DP groups capped at spines (``dp_span`` from level 1 first), L0 + L2 keeps them
    there only with one stage per spine — 6 PP H-edges between the spines, 48 ring edges —
    while L2 + L3 lies inside S1 at the edge floor, 32: the stage proves 2 · 32 optimal."""
    joint = load_profile("comm-joint")
    profile = joint.model_copy(update={
        "comm": joint.comm.model_copy(update={"dp_span_from_level": 1}),
        "objective": ObjectiveSpec(stages=[ObjectiveStage(name=n) for n in (
            "placed", "dp_span", "span_floor")])})
    solved = solve_checked(spines_with_three_free_leaves(), profile, time_limit=5)
    assert solved.result.objective.stages["span_floor"] == 2 * 32
    assert solved.result.stats.stages[2]["status"] == "OPTIMAL"
    assert {int(n.removeprefix("node")) // 6 for n in solved.nodes_of("a")} == {2, 3}


def test_span_floor_stage_prices_an_aligned_split_without_dp_span_before_it():
    """With L3 busy too, ``a`` can only take L0 + L2: its DP groups fit the spines only one
    stage per spine, so the stage is 2 · 48 whatever stage precedes it. Without ``dp_span``
    before it the model once left the job's aligned literal false and reported 2 · 32, OPTIMAL,
    for a plan whose value is 2 · 48."""
    inst = spines_with_three_free_leaves()
    inst.jobs[0] = gang("bg", 12, running=on(*range(6, 12), *range(18, 24)))
    joint = load_profile("comm-joint")
    profile = joint.model_copy(update={
        "comm": joint.comm.model_copy(update={"dp_span_from_level": 1}),
        "objective": ObjectiveSpec(stages=[ObjectiveStage(name=n) for n in (
            "placed", "span_floor")])})
    solved = solve_checked(inst, profile, time_limit=5)
    assert {int(n.removeprefix("node")) // 6 for n in solved.nodes_of("a")} == {0, 2}
    assert solved.result.objective.stages["span_floor"] == 2 * 48
    assert solved.result.stats.stages[1]["objective"] == 2 * 48
