"""``toposolve.solve``: run an engine, check its plan, fall back when CP-SAT has nothing better.

Every plan returned here has passed the independent checker; a plan that does not is an engine
bug and raises :class:`EngineBug` instead of being returned.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from .checker import check_plan
from .engines.assignment import Assignment, to_plan
from .engines.heuristic import run_heuristic
from .model.instance import Instance
from .objective import ObjectiveValue, evaluate
from .plan import Plan
from .problem import Problem, compile_problem
from .profiles import Profile, load_profile

Engine = Literal["heuristic", "cpsat"]
ENGINES: tuple[str, ...] = ("heuristic", "cpsat")


class EngineBug(RuntimeError):
    """An engine produced a plan the checker rejects."""


@dataclass
class SolveOptions:
    """Run options that override the profile's solver section (``None`` = keep the profile's)."""

    time_limit: float | None = None
    workers: int | None = None
    seed: int | None = None
    deterministic: bool | None = None
    log: bool = False
    progress: Callable[[float, float, float], None] | None = None
    export_model: str | None = None
    parameters: dict[str, Any] | None = None
    # "preempt" / "reclaim" / "both": evict running gangs for pending ones (seed 002)
    evict: Literal["preempt", "reclaim", "both"] | None = None


def _checked(instance: Instance, plan: Plan, evict: str | None = None) -> Plan:
    violations = check_plan(instance, plan, eviction_mode=evict or "none")
    if violations:
        lines = "\n".join(str(v) for v in violations[:20])
        raise EngineBug(f"engine {plan.engine!r} produced an invalid plan:\n{lines}")
    return plan


def _heuristic(problem: Problem, profile: Profile, evict: str | None) -> tuple[Assignment, ObjectiveValue, float]:
    start = time.perf_counter()
    assignment = run_heuristic(problem, profile, evict=evict)
    elapsed = time.perf_counter() - start
    return assignment, evaluate(problem, assignment, profile.objective), elapsed


def _stats(value: ObjectiveValue, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"objective_stages": dict(value.stages), **(extra or {})}


def solve_problem(
    problem: Problem,
    engine: Engine = "heuristic",
    profile: Profile | str | None = None,
    options: SolveOptions | None = None,
) -> Plan:
    """Solve a compiled problem; see :func:`solve`."""
    if not isinstance(profile, Profile):
        profile = load_profile(profile) if profile is not None else load_profile(None)
    options = options or SolveOptions()
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r} (choose from {', '.join(ENGINES)})")
    instance = problem.instance
    start = time.perf_counter()
    heuristic, h_value, h_time = _heuristic(problem, profile, options.evict)
    if engine == "heuristic":
        plan = to_plan(
            problem,
            heuristic,
            engine="heuristic",
            status="FEASIBLE",
            objective=h_value.scalar,
            wall_time_s=h_time,
            stats=_stats(h_value),
        )
        return _checked(instance, plan, options.evict)

    from .engines.cpsat import solve_cpsat

    result = solve_cpsat(
        problem,
        profile,
        hint=heuristic,
        time_limit=options.time_limit,
        workers=options.workers,
        seed=options.seed,
        deterministic=options.deterministic,
        log=options.log,
        progress=options.progress,
        export_model=options.export_model,
        parameters=options.parameters,
        evict=options.evict,
    )
    wall = time.perf_counter() - start
    stats = {**result.stats, "heuristic_objective_stages": dict(h_value.stages), "heuristic_time_s": h_time}
    usable = result.assignment is not None and result.objective is not None
    if usable and result.objective.better_or_equal(h_value):
        plan = to_plan(
            problem,
            result.assignment,
            engine="cpsat",
            status=result.status,
            objective=result.objective.scalar,
            bound=result.bound,
            wall_time_s=wall,
            stats=_stats(result.objective, stats),
        )
        return _checked(instance, plan, options.evict)
    why = "no solution" if not usable else "no solution at least as good as the heuristic's"
    plan = to_plan(
        problem,
        heuristic,
        engine="cpsat",
        status="FALLBACK",
        objective=h_value.scalar,
        bound=result.bound,
        wall_time_s=wall,
        stats=_stats(h_value, {**stats, "fallback": f"CP-SAT {result.status}: {why}; heuristic plan returned"}),
    )
    return _checked(instance, plan, options.evict)


def solve(
    instance: Instance,
    engine: Engine = "heuristic",
    profile: Profile | str | None = None,
    **options: Any,
) -> Plan:
    """Place the instance's pending jobs with ``engine`` and return a checked :class:`Plan`.

    ``profile`` is a :class:`Profile`, a profile name from ``models/`` or a path; ``options`` are
    the fields of :class:`SolveOptions` (``time_limit``, ``workers``, ``seed``, ...).
    """
    return solve_problem(compile_problem(instance), engine, profile, SolveOptions(**options))
