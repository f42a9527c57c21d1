"""Shared by the CP-SAT tests: solve, check the plan, compare with the heuristic."""

from __future__ import annotations

from dataclasses import dataclass

from builders import nodes_of

from toposolve.check.checker import check_plan
from toposolve.core.assignment import Assignment, to_plan
from toposolve.core.plan import Plan
from toposolve.core.problem import Problem, compile_problem
from toposolve.engines.contract import SolveOptions
from toposolve.engines.cpsat import CpsatResult, solve_cpsat
from toposolve.engines.volcano import run_heuristic
from toposolve.policy.objective import ObjectiveValue, evaluate
from toposolve.policy.profiles import Profile, load_profile


@dataclass
class Solved:
    problem: Problem
    result: CpsatResult
    plan: Plan
    heuristic: ObjectiveValue

    def nodes_of(self, job: str) -> list[str]:
        return nodes_of(self.plan, job)

    def job(self, name: str):
        return self.plan.job(f"default/{name}")


def heuristic_value(problem: Problem, profile: Profile) -> tuple[Assignment, ObjectiveValue]:
    assignment = run_heuristic(problem, profile)
    return assignment, evaluate(problem, assignment, profile.objective)


def solve_checked(
    inst, profile: Profile | None = None, *, use_hint: bool = True, **options
) -> Solved:
    """CP-SAT on ``inst``; the plan must pass the checker and, when the heuristic's plan is the
    warm start, be at least as good as it (a better CP-SAT plan, or the hint returned as
    FALLBACK)."""
    profile = profile or load_profile("lexicographic")
    problem = compile_problem(inst)
    baseline = heuristic_value(problem, profile)
    hint = baseline[0] if use_hint else None
    options.setdefault("time_limit", 10)
    result = solve_cpsat(problem, profile, SolveOptions(**options), hint)
    plan = to_plan(problem, result.assignment, engine="cpsat", status=result.status)
    assert check_plan(inst, plan) == []
    if hint is not None:
        assert result.objective.better_or_equal(baseline[1])
    return Solved(problem, result, plan, baseline[1])
