"""Run the heuristic on a test instance and hold its plan to the checker (shared by tests)."""

from __future__ import annotations

from toposolve.check.checker import check_plan
from toposolve.core.assignment import to_plan
from toposolve.core.instance import Instance
from toposolve.core.plan import Plan
from toposolve.core.problem import Problem, compile_problem
from toposolve.engines.volcano import run_heuristic
from toposolve.policy.profiles import Profile, load_profile


def heuristic_run(
    inst: Instance, profile: Profile | None = None, evict: str | None = None
) -> tuple[Problem, Plan]:
    """The heuristic's plan on ``inst`` (with the eviction pass ``evict``), checked with the
    same eviction mode (``both`` without eviction: no eviction to judge)."""
    problem = compile_problem(inst)
    plan = to_plan(
        problem, run_heuristic(problem, profile, evict=evict), engine="heuristic", status="FEASIBLE"
    )
    assert check_plan(inst, plan, eviction_mode=evict or "both") == []
    return problem, plan


def heuristic_plan(
    inst: Instance, profile: Profile | None = None, evict: str | None = None
) -> Plan:
    """:func:`heuristic_run`'s plan."""
    return heuristic_run(inst, profile, evict)[1]


def heuristic_eviction_plan(inst: Instance, evict: str = "preempt") -> Plan:
    """The heuristic's plan with the eviction pass ``evict`` under the ``preemption`` profile."""
    return heuristic_run(inst, load_profile("preemption"), evict)[1]
