"""CP-SAT engine: the whole pending queue placed at once, exactly.

Rules and rationale: ``docs/cpsat-formulation.md``, section ``toposolve.engines.cpsat``.
"""

from toposolve.core.assignment import Assignment
from toposolve.core.problem import Problem
from toposolve.engines.contract import EngineResult, SolveOptions
from toposolve.engines.cpsat.solve.parameters import sat_overrides
from toposolve.engines.cpsat.solve.solver import CpsatResult, solve_cpsat
from toposolve.policy.profiles import Profile


def solve(problem: Problem, profile: Profile, options: SolveOptions,
          hint: Assignment | None = None) -> EngineResult:
    """The engine contract (:mod:`toposolve.engines.contract`): :func:`solve_cpsat` with
    ``hint`` as warm start; hard limits in a crossing Topology's tree are modelled in that tree
    (:mod:`toposolve.engines.cpsat.model.crossing`)."""
    return solve_cpsat(problem, profile, options, hint)


__all__ = ["CpsatResult", "sat_overrides", "solve", "solve_cpsat"]
