"""Issue 19 §4: the public functions refuse ``None`` or a dict where an Instance, a Problem or a
Plan belongs with a TypeError naming the parameter, raised at the entry point itself."""

from __future__ import annotations

import traceback

import pytest
from builders import example1_tree, gang, hard, instance, nodes

import toposolve
from toposolve.core.assignment import Assignment
from toposolve.core.errors import require_type
from toposolve.formats.trace.model import Trace
from toposolve.policy.profiles import ObjectiveSpec
from toposolve.sim.replay import replay

INSTANCE = instance(nodes(8), example1_tree(), [gang("a", 2, topology=hard(1))])
PROBLEM = toposolve.compile_problem(INSTANCE)
PLAN = toposolve.solve(INSTANCE, "heuristic")

# (entry point, its arguments with BAD where the wrong value goes, the parameter, its type)
CALLS = [
    (toposolve.solve, lambda bad: (bad, "heuristic"), "instance", "Instance"),
    (toposolve.compile_problem, lambda bad: (bad,), "instance", "Instance"),
    (toposolve.check_plan, lambda bad: (bad, PLAN), "instance", "Instance"),
    (toposolve.check_plan, lambda bad: (INSTANCE, bad), "plan", "Plan"),
    (toposolve.diff, lambda bad: (bad, PLAN), "a", "Plan"),
    (toposolve.diff, lambda bad: (PLAN, bad), "b", "Plan"),
    (toposolve.plan_metrics, lambda bad: (bad, PLAN), "problem", "Problem"),
    (toposolve.plan_metrics, lambda bad: (PROBLEM, bad), "plan", "Plan"),
    (toposolve.solve_problem, lambda bad: (bad, "heuristic"), "problem", "Problem"),
    (toposolve.solve_problem, lambda bad: (PROBLEM, "heuristic", None, bad), "options",
     "SolveOptions"),
    (replay, lambda bad: (bad, Trace()), "cluster", "Instance"),
    (replay, lambda bad: (INSTANCE, bad), "trace", "Trace"),
    (toposolve.compare, lambda bad: (bad, ("heuristic",)), "instance", "Instance"),
    (toposolve.from_plan, lambda bad: (bad, PLAN), "problem", "Problem"),
    (toposolve.from_plan, lambda bad: (PROBLEM, bad), "plan", "Plan"),
    (toposolve.to_plan, lambda bad: (PROBLEM, bad), "assignment", "Assignment"),
    (toposolve.evaluate, lambda bad: (bad, Assignment(), ObjectiveSpec()), "problem", "Problem"),
    (toposolve.run_heuristic, lambda bad: (bad,), "problem", "Problem"),
]


@pytest.mark.parametrize("bad", [None, {"nodes": []}], ids=["None", "dict"])
@pytest.mark.parametrize("function, args, name, kind", CALLS,
                         ids=[f"{c[0].__name__}-{c[2]}" for c in CALLS])
def test_a_wrong_argument_is_a_type_error_naming_the_parameter(function, args, name, kind, bad):
    kwargs = {"engine": "x", "status": "y"} if function is toposolve.to_plan else {}
    if name == "options" and bad is None:  # the default: no options given
        assert isinstance(function(*args(bad)), toposolve.Plan)
        return
    with pytest.raises(TypeError) as err:
        function(*args(bad), **kwargs)
    assert str(err.value).startswith(f"{name} must be a toposolve {kind}, not {type(bad).__name__}")
    # raised by the entry point (through require_type), not frames deeper
    frames = [f.name for f in traceback.extract_tb(err.value.__traceback__)]
    assert frames[-2:] == [function.__name__, "require_type"]


def test_require_type_passes_the_right_type_through():
    require_type(PLAN, toposolve.Plan, "plan")
    with pytest.raises(TypeError, match=r"^plan must be a toposolve Plan, not list "):
        require_type([], toposolve.Plan, "plan")
