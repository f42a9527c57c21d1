"""``toposolve.solve``: run an engine, check its plan, fall back to the baseline's when a
warm-started engine has nothing better.

Every plan returned here has passed the independent checker; a plan that does not is an engine
bug and raises :class:`EngineBug` instead of being returned. Engines are looked up by name in
:mod:`toposolve.engines.registry`; the fallback is decided here and nowhere else.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from toposolve.check.checker import check_plan
from toposolve.core.assignment import to_plan
from toposolve.core.instance import Instance
from toposolve.core.plan import Plan
from toposolve.core.problem import Problem, compile_problem
from toposolve.engines.contract import EngineResult, SolveOptions, proven_bound, require_depth
from toposolve.engines.registry import BASELINE, engine_names, get_engine
from toposolve.policy.metrics import plan_metrics
from toposolve.policy.objective import ObjectiveValue
from toposolve.policy.profiles import Profile, for_eviction, load_profile

ENGINES: tuple[str, ...] = engine_names()  # every accepted engine name, aliases included

__all__ = ["ENGINES", "EngineBug", "SolveOptions", "default_engine", "solve", "solve_problem"]


class EngineBug(RuntimeError):
    """An engine produced a plan the checker rejects."""


def _checked(problem: Problem, plan: Plan, profile: Profile, evict: str | None = None) -> Plan:
    """``plan`` once the independent checker accepts it, with its human metrics."""
    violations = check_plan(problem.instance, plan, eviction_mode=evict or "none")
    if violations:
        lines = "\n".join(str(v) for v in violations[:20])
        raise EngineBug(f"engine {plan.engine!r} produced an invalid plan:\n{lines}")
    plan.metrics = plan_metrics(problem, plan, profile.objective).summary()
    return plan


def _stats(value: ObjectiveValue, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"objective_stages": dict(value.stages), **(extra or {})}


def _plan(
    problem: Problem, engine: str, result: EngineResult, *, status: str | None = None,
    bound: float | None = None, wall_time_s: float | None = None, stats: dict[str, Any] | None = None,
) -> Plan:
    return to_plan(
        problem,
        result.assignment,
        engine=engine,
        status=status or result.status,
        objective=result.objective.scalar,
        bound=proven_bound(result.objective.scalar, bound),  # a FALLBACK plan's too
        wall_time_s=result.wall_time_s if wall_time_s is None else wall_time_s,
        stats=_stats(result.objective, stats),
    )


def solve_problem(
    problem: Problem,
    engine: str = "heuristic",
    profile: Profile | str | None = None,
    options: SolveOptions | None = None,
) -> Plan:
    """Solve a compiled problem; see :func:`solve`."""
    if not isinstance(profile, Profile):
        profile = load_profile(profile)
    options = options or SolveOptions()
    profile = for_eviction(profile, options.evict)  # disruption right after placement
    entry = get_engine(engine)
    require_depth(problem, entry.name, entry.max_gang_depth)
    if entry.warm_start:
        require_depth(problem, BASELINE, get_engine(BASELINE).max_gang_depth)
    start = time.perf_counter()
    if options.started is None:  # the time limit covers the warm start too
        options = dataclasses.replace(options, started=start)
    if not entry.warm_start:
        result = entry.load()(problem, profile, options)
        return _checked(problem, _plan(problem, engine, result, bound=result.bound), profile, options.evict)

    baseline = get_engine(BASELINE).load()(problem, profile, options)
    result = entry.load()(problem, profile, options, baseline.assignment)
    wall = time.perf_counter() - start
    stats = {
        **result.stats,
        "heuristic_objective_stages": dict(baseline.objective.stages),
        "heuristic_time_s": baseline.wall_time_s,
    }
    if result.usable and result.objective.better_or_equal(baseline.objective):
        plan = _plan(problem, engine, result, bound=result.bound, wall_time_s=wall, stats=stats)
        return _checked(problem, plan, profile, options.evict)
    why = f"{entry.name} {result.status}: no plan at least as good as the {BASELINE}'s; {BASELINE} plan returned"
    # the search's bound still bounds the optimum, so it is kept when it is one for the
    # baseline's plan (≥ its value: _plan checks); stats keep it either way
    plan = _plan(
        problem, engine, baseline, status="FALLBACK", bound=result.bound, wall_time_s=wall,
        stats={**stats, "fallback": why, "search_bound": result.bound},
    )
    return _checked(problem, plan, profile, options.evict)


def default_engine(instance: Instance) -> str:
    """The engine mirroring the scheduler whose objects the instance holds."""
    return instance.scheduler


def solve(
    instance: Instance,
    engine: str | None = None,
    profile: Profile | str | None = None,
    **options: Any,
) -> Plan:
    """Place the instance's pending jobs with ``engine`` and return a checked :class:`Plan`.

    ``engine`` is a name from :mod:`toposolve.engines.registry` (``heuristic`` — alias
    ``volcano`` — or ``cpsat``); ``profile`` is a :class:`Profile`, a profile name from
    ``models/`` or a path; ``options`` are the fields of :class:`SolveOptions` (``time_limit``,
    ``workers``, ``seed``, ...). Without ``engine``, the mirror of the input's scheduler
    (:func:`default_engine`: ``volcano``, ``kueue`` or ``kai``).
    """
    return solve_problem(compile_problem(instance), engine or default_engine(instance), profile, SolveOptions(**options))
