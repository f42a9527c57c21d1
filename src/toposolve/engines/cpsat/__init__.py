"""CP-SAT engine: the whole pending queue placed at once, exactly.

Rules and rationale: ``docs/cpsat-formulation.md``, section ``toposolve.engines.cpsat``.
"""

from toposolve.core.assignment import Assignment
from toposolve.core.problem import Problem
from toposolve.engines.common.crossing import crossing_reason, without_crossing
from toposolve.engines.contract import EngineResult, SolveOptions
from toposolve.engines.cpsat.solve.parameters import sat_overrides
from toposolve.engines.cpsat.solve.solver import CpsatResult, solve_cpsat
from toposolve.policy.profiles import Profile


def solve(problem: Problem, profile: Profile, options: SolveOptions,
          hint: Assignment | None = None) -> EngineResult:
    """The engine contract (:mod:`toposolve.engines.contract`): :func:`solve_cpsat` with
    ``hint`` as warm start. Jobs constrained in a crossing Topology's tree are not modelled: they
    stay pending with one line (:mod:`toposolve.engines.common.crossing`)."""
    result = solve_cpsat(without_crossing(problem), profile, options, hint)
    for j, tree in problem.crossing_jobs.items():
        if problem.has_pending(j):
            result.assignment.reasons[j] = crossing_reason(tree, "cpsat")
    return result


__all__ = ["CpsatResult", "sat_overrides", "solve", "solve_cpsat"]
