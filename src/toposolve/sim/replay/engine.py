"""How a replay asks an engine for one cycle's plan.

Every plan comes back through :func:`toposolve.solve.solve_problem`, which runs the engine on
the compiled :class:`~toposolve.core.problem.Problem` and checks the plan with the independent
checker against the cycle's instance (an invalid plan raises ``EngineBug``): every cycle is
checked. ``volcano`` is the Volcano mirror (the ``heuristic`` engine); ``fgd:<policy>`` runs a
policy of FGD's experiment (:mod:`.fgd_policies`), its plans checked the same way.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

from toposolve.core.deadline import Deadline
from toposolve.core.errors import InputError
from toposolve.core.limits import MAX_SEED, count_problem, time_limit_problem
from toposolve.core.plan import Plan
from toposolve.core.problem import Problem
from toposolve.engines.registry import get_engine
from toposolve.policy.profiles import Profile, load_profile
from toposolve.sim.replay.fgd_policies import PREFIX, policy_solver
from toposolve.solve import SolveOptions, solve_problem

CycleSolver = Callable[[Problem], Plan]


def engine_name(name: str) -> str:
    """The registered engine ``name`` stands for (or an FGD policy, ``fgd:FGD``, …);
    InputError for an unknown one."""
    if name.startswith(PREFIX):
        policy_solver(name, 0)  # InputError for an unknown policy
        return name
    try:
        return get_engine(name).name
    except ValueError as exc:
        raise InputError(str(exc), field="engine") from None


def cycle_solver(
    engine: str,
    profile: Profile | str | None,
    *,
    time_limit: float | None,
    seed: int,
    evict: str | None,
    deterministic: bool = True,
    wall_factor: float = 1.0,
) -> CycleSolver:
    """A function from one cycle's problem to its checked plan.

    Parameters
    ----------
    engine, profile
        The engine name and the profile (name, path or :class:`Profile`).
    time_limit
        Each cycle's time limit (default: the profile's).
    seed, evict
        The engine's seed and eviction mode.
    deterministic
        Count the limit in deterministic units (CP-SAT), so a replay repeats for a seed.
    wall_factor
        Each cycle's wall-clock cap in multiples of the limit (its
        :class:`~toposolve.core.deadline.Deadline`'s ``wall_cap``): 10–30 lets the
        deterministic budget, not the machine's load, end every search.

    Returns
    -------
    CycleSolver
        Solves one cycle's problem under a fresh deadline.
    """
    if not 1 <= wall_factor < math.inf:
        raise InputError(f"must be at least 1 and finite, got {wall_factor}", field="wall_factor")
    if time_limit is not None and (problem := time_limit_problem(time_limit)):
        raise InputError(problem, field="time_limit")
    if problem := count_problem(seed, 0, MAX_SEED):
        raise InputError(problem, field="seed")
    engine_name(engine)
    if engine.startswith(PREFIX):
        return policy_solver(engine, seed)
    resolved = profile if isinstance(profile, Profile) else load_profile(profile)
    options = SolveOptions(
        time_limit=time_limit, seed=seed, deterministic=deterministic,
        evict=evict,  # type: ignore[arg-type]
    )
    limit = time_limit if time_limit is not None else resolved.solver.time_limit

    def solve(problem: Problem) -> Plan:
        deadline = Deadline(limit, deterministic=deterministic, wall_cap=wall_factor * limit)
        run = dataclasses.replace(options, deadline=deadline)
        return solve_problem(problem, engine, resolved, run)

    return solve
