"""The engine contract and the registry: every engine by name, one result shape, one fallback."""

from __future__ import annotations

import pytest
from builders import chain, example1_tree, gang, hard, instance, nodes

from toposolve.check.checker import check_plan
from toposolve.core.assignment import Assignment, to_plan
from toposolve.core.errors import InputError
from toposolve.core.problem import compile_problem
from toposolve.core.status import SolveStatus
from toposolve.engines.contract import EngineResult, SolveOptions, proven_bound, relative_gap
from toposolve.engines.registry import BASELINE, ENGINES, engine_names, get_engine
from toposolve.policy.objective import evaluate
from toposolve.policy.profiles import load_profile
from toposolve.solve import solve


def busy_cluster():
    """Eight nodes, one job already running on two of them, two pending gangs."""
    jobs = [
        gang("old", 2, topology=hard(1), running={0: "node0", 1: "node1"}),
        gang("a", 2, topology=hard(1)),
        gang("b", 4, topology=hard(2)),
    ]
    return instance(nodes(8), example1_tree(), jobs)


def test_registry_names_every_engine_and_the_volcano_alias():
    assert engine_names() == ("volcano", "heuristic", "kueue", "kai", "kube", "cpsat")
    assert engine_names(aliases=False) == ("volcano", "kueue", "kai", "kube", "cpsat")
    assert get_engine("volcano") is get_engine("heuristic")
    assert get_engine(BASELINE).warm_start is False
    assert get_engine("cpsat").warm_start is True


def test_unknown_engine_is_refused_with_the_known_names():
    with pytest.raises(
        ValueError, match="unknown engine 'gurobi'.*volcano, heuristic, kueue, kai, kube, cpsat"
    ):
        get_engine("gurobi")


@pytest.mark.parametrize("entry", ENGINES, ids=lambda e: e.name)
def test_every_engine_honours_the_contract_with_running_pods_and_a_hint(entry):
    """What a replay loop needs: a problem with running pods, a warm start and a time limit."""
    inst = busy_cluster()
    problem = compile_problem(inst)
    profile = load_profile(None)
    options = SolveOptions(time_limit=5, deterministic=True)
    hint = get_engine(BASELINE).load()(problem, profile, options).assignment
    result = entry.load()(problem, profile, options, hint)
    assert isinstance(result, EngineResult) and isinstance(result.assignment, Assignment)
    assert result.usable and result.wall_time_s >= 0
    assert result.gap == relative_gap(result.objective.scalar, result.bound)
    plan = to_plan(problem, result.assignment, engine=entry.name, status=result.status)
    assert check_plan(inst, plan) == []
    assert plan.job("default/a").placed and plan.job("default/b").placed


def test_alias_runs_the_same_engine_and_the_plan_keeps_the_given_name():
    inst = busy_cluster()
    by_alias, by_name = solve(inst, "volcano"), solve(inst, "heuristic")
    assert by_alias.engine == "volcano" and by_name.engine == "heuristic"
    assert by_alias.bindings == by_name.bindings


def engine_that_finds_nothing(problem, profile, options, hint=None):
    """A registered engine for the fallback test: no plan within its time limit."""
    nothing = Assignment()
    return EngineResult(nothing, SolveStatus.UNKNOWN, evaluate(problem, nothing, profile.objective))


def test_fallback_is_decided_by_solve_for_any_warm_started_engine(monkeypatch):
    """An engine that returns nothing better than its hint gets the baseline's plan, FALLBACK."""
    import toposolve.engines.registry as registry

    fake = registry.EngineEntry("empty", f"{__name__}:engine_that_finds_nothing", warm_start=True)
    monkeypatch.setattr(registry, "ENGINES", (*registry.ENGINES, fake))
    inst = busy_cluster()
    plan = solve(inst, "empty")
    assert plan.engine == "empty" and plan.status == "FALLBACK"
    assert "volcano plan returned" in plan.stats["fallback"]
    assert plan.bindings == solve(inst, "heuristic").bindings
    assert check_plan(inst, plan) == []


@pytest.mark.parametrize(
    ("objective", "bound", "kept"),
    [
        (4.31e9, 0.0, False),  # the audit's alibaba FALLBACK: 0.0 is no bound of 4.31e9
        (100.0, 100.0, True),
        (100.0, 120.0, True),
        (1e10, 1e10 - 1.0, True),  # float rounding of a proven-equal bound
        (-5.0, -7.0, False),  # a minimised first stage, signed: -7 < -5 is below the plan
        (3.0, None, False),
    ],
)
def test_a_bound_is_reported_only_when_it_is_one(objective, bound, kept):
    assert proven_bound(objective, bound) == (bound if kept else None)


LIMITED = [(e.name, e.max_gang_depth) for e in ENGINES if e.max_gang_depth is not None]


@pytest.mark.parametrize(("engine", "deepest"), LIMITED, ids=[e for e, _ in LIMITED])
def test_an_engine_refuses_a_gang_tree_deeper_than_it_honours_in_one_line(engine, deepest):
    inst = instance(nodes(8), example1_tree(), [chain("t", deepest + 1)])
    with pytest.raises(InputError, match=f"does not support a gang hierarchy of depth "
                                         f"{deepest + 1}") as err:
        solve(inst, engine)
    assert "\n" not in str(err.value) and "Job/default/t" in str(err.value)


def test_some_engine_refuses_deep_trees():
    assert LIMITED  # the refusal above is exercised


def test_engine_stats_read_as_the_set_fields_in_declaration_order():
    from toposolve.engines.contract import EngineStats
    from toposolve.engines.cpsat.solve.stats import CpsatStats

    assert dict(EngineStats()) == {}
    stats = CpsatStats(aggregation_level=0, lifted=False)
    stats.cut_short = ["spread not searched"]
    stats.record_size({"variables": 7, "constraints": 3})
    assert list(stats) == [
        "rounds", "refined_classes", "hint_feasible", "aggregation_level", "lifted",
        "variables", "constraints", "stages", "repacked_hints", "cut_short",
    ]
    assert stats["variables"] == 7 and "plan_source" not in stats
    stats.plan_source = None  # set to None is still reported
    assert "plan_source" in stats and {**stats}["plan_source"] is None


def test_every_engine_result_status_is_a_solve_status():
    inst = instance(nodes(4), example1_tree(), [gang("a", 2)])
    problem, profile = compile_problem(inst), load_profile(None)
    for name in ("volcano", "kueue", "kai"):
        result = get_engine(name).load()(problem, profile, SolveOptions())
        assert isinstance(result.status, SolveStatus) and result.usable
        assert dict(result.stats) == {}


DEADLINES = []


def engine_that_records_its_deadline(problem, profile, options, hint=None):
    """A registered engine for the deadline test: the baseline, noting the deadline it got."""
    DEADLINES.append(options.deadline)
    return get_engine(BASELINE).load()(problem, profile, options)


def test_solve_starts_one_deadline_before_the_warm_start(monkeypatch):
    import sys

    import toposolve.engines.registry as registry

    spy = f"{__name__}:engine_that_records_its_deadline"
    monkeypatch.setattr(registry, "ENGINES", (*registry.ENGINES, registry.EngineEntry("spy", spy)))
    monkeypatch.setattr(sys.modules["toposolve.solve"], "BASELINE", "spy")  # the warm start too
    DEADLINES.clear()
    fake = registry.EngineEntry("warm", spy, warm_start=True)
    monkeypatch.setattr(registry, "ENGINES", (*registry.ENGINES, fake))
    solve(busy_cluster(), "warm", time_limit=3)
    baseline, engine = DEADLINES
    assert baseline is engine and engine.limit == 3 and engine.deterministic
    assert engine.wall_cap is None and engine.wall_deadline == engine.started + 3
