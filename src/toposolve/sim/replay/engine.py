"""How a replay asks an engine for one cycle's plan.

Every plan comes back through :func:`toposolve.solve.solve_problem`, which runs the engine on
the compiled :class:`~toposolve.core.problem.Problem` and checks the plan with the independent
checker against the cycle's instance (an invalid plan raises ``EngineBug``): every cycle is
checked. ``volcano`` is the Volcano mirror (the ``heuristic`` engine).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from toposolve.core.errors import InputError
from toposolve.core.plan import Plan
from toposolve.core.problem import Problem
from toposolve.engines.registry import get_engine
from toposolve.policy.profiles import Profile, load_profile
from toposolve.solve import SolveOptions, solve_problem

CycleSolver = Callable[[Problem], Plan]


def engine_name(name: str) -> str:
    """The registered engine ``name`` stands for; InputError for an unknown one."""
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

    CP-SAT runs deterministically by default (``deterministic``: its time limit is then counted
    in deterministic units), so a replay is reproducible for a seed — unless a search reaches
    the wall-clock deadline first, which CP-SAT sets at the time limit in wall seconds.
    ``wall_factor`` moves that deadline to ``wall_factor`` × the time limit: on a shared machine
    a factor of 10–30 lets the deterministic budget, not the machine's load, end every search
    (a replay simulates the cycle's time; the wall clock is only a safety net there). It is done
    through ``SolveOptions.started`` (when the limit counts from), so the engine's own elapsed
    times in ``plan.stats`` (``build_seconds``…) then count from that later start; the replay
    measures its cycle times itself.
    """
    if not wall_factor >= 1:
        raise InputError(f"must be at least 1, got {wall_factor}", field="wall_factor")
    engine_name(engine)
    resolved = profile if isinstance(profile, Profile) else load_profile(profile)
    options = SolveOptions(
        time_limit=time_limit,
        seed=seed,
        deterministic=deterministic if get_engine(engine).warm_start else None,
        evict=evict,  # type: ignore[arg-type]
    )

    limit = time_limit if time_limit is not None else resolved.solver.time_limit
    slack = (wall_factor - 1) * limit

    def solve(problem: Problem) -> Plan:
        run = options
        if slack:  # the limit counts from later (SolveOptions.started): the deadline moves out by slack
            run = dataclasses.replace(options, started=time.perf_counter() + slack)
        return solve_problem(problem, engine, resolved, run)  # type: ignore[arg-type]

    return solve
