"""``toposolve.solve``: run an engine, check its plan, fall back to the baseline's when a
warm-started engine has nothing better.

Every plan returned here has passed the independent checker; a plan that does not is an engine
bug and raises :class:`EngineBug` instead of being returned. Engines are looked up by name in
:mod:`toposolve.engines.registry`; the fallback is decided here and nowhere else.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from typing import Any

from toposolve.check.checker import check_plan
from toposolve.check.disruption import disruption_warnings
from toposolve.core.assignment import to_plan
from toposolve.core.deadline import Deadline
from toposolve.core.errors import require_type
from toposolve.core.instance import Instance
from toposolve.core.plan import Plan
from toposolve.core.problem import Problem, compile_problem
from toposolve.core.status import SolveStatus
from toposolve.engines.common.missing_level import explain_unplaceable
from toposolve.engines.contract import (
    EngineResult,
    ProgressEvent,
    SolveOptions,
    proven_bound,
    require_depth,
    require_devices,
)
from toposolve.engines.registry import BASELINE, engine_names, get_engine
from toposolve.policy.metrics import plan_metrics
from toposolve.policy.objective import ObjectiveValue
from toposolve.policy.profiles import Profile, for_eviction, load_profile

LOG = logging.getLogger("toposolve")

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
    for line in disruption_warnings(problem.instance, plan):
        LOG.warning(line)
    plan.metrics = plan_metrics(problem, plan, profile.objective, profile.comm).summary()
    return plan


def _stats(value: ObjectiveValue, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"objective_stages": dict(value.stages), **(extra or {})}


def _plan(
    problem: Problem, engine: str, result: EngineResult, *, status: SolveStatus | None = None,
    bound: float | None = None, wall_time_s: float | None = None,
    stats: dict[str, Any] | None = None,
) -> Plan:
    return to_plan(
        problem,
        explain_unplaceable(problem, result.assignment, get_engine(engine).missing_levels),
        engine=engine,
        status=str(status or result.status),  # a plain string in the plan
        objective=result.objective.scalar,
        bound=proven_bound(result.objective.scalar, bound),  # a FALLBACK plan's too
        wall_time_s=result.wall_time_s if wall_time_s is None else wall_time_s,
        stats=_stats(result.objective, stats),
    )


def start_deadline(profile: Profile, options: SolveOptions) -> Deadline:
    """The run's deadline, starting now: the options' time limit and mode, else the profile's.

    Parameters
    ----------
    profile
        Its ``solver`` section gives what ``options`` leaves at ``None``.
    options
        The run's options (``time_limit``, ``deterministic``).

    Returns
    -------
    Deadline
        ``options.deadline`` when set, else a new one counting from now.
    """
    if options.deadline is not None:
        return options.deadline
    solver = profile.solver
    limit = solver.time_limit if options.time_limit is None else options.time_limit
    exact = solver.deterministic if options.deterministic is None else options.deterministic
    return Deadline(limit, time.perf_counter(), deterministic=bool(exact))


def solve_problem(problem: Problem, engine: str = "volcano",
        profile: Profile | str | None = None, options: SolveOptions | None = None) -> Plan:
    """Solve a compiled problem; see :func:`solve`.

    Parameters
    ----------
    problem
        The compiled problem (:func:`~toposolve.core.problem.compile_problem`).
    engine
        A registered engine name.
    profile
        A :class:`Profile`, a profile name or a path (default: the default profile).
    options
        The run's :class:`SolveOptions`; its deadline, when unset, starts here, so a warm
        start's time is inside the limit.

    Returns
    -------
    Plan
        The checked plan (the baseline's, as ``FALLBACK``, when the engine has nothing better).
    """
    require_type(problem, Problem, "problem")
    if options is not None:
        require_type(options, SolveOptions, "options")
    if not isinstance(profile, Profile):
        profile = load_profile(profile)
    options = options or SolveOptions()
    profile = for_eviction(profile, options.evict)  # disruption right after placement
    entry = get_engine(engine)
    require_depth(problem, entry.name, entry.max_gang_depth)
    require_devices(problem, entry.name, entry.device_shares, options.evict,
                    entry.device_evictions)
    if entry.warm_start:
        require_depth(problem, BASELINE, get_engine(BASELINE).max_gang_depth)
    start = time.perf_counter()
    options = dataclasses.replace(options, deadline=start_deadline(profile, options))
    if not entry.warm_start:
        result = entry.load()(problem, profile, options)
        plan = _plan(problem, engine, result, bound=result.bound)
        return _checked(problem, plan, profile, options.evict)
    return _warm_started(problem, engine, profile, options, start)


def _warm_started(problem: Problem, engine: str, profile: Profile, options: SolveOptions,
                  start: float) -> Plan:
    """The baseline, then ``engine`` from its plan; the baseline's plan when it is better
    (``start``: when :func:`solve_problem` began, for the plan's wall time)."""
    entry = get_engine(engine)
    if options.progress is not None:  # the first line comes at once, before the mirror runs
        options.progress(ProgressEvent(math.nan, math.nan, time.perf_counter() - start, "", None,
                                       "status", f"[{0.0:6.1f}s] warm start: the {BASELINE} "
                                       "mirror's plan"))
    baseline = get_engine(BASELINE).load()(problem, profile, options)
    result = entry.load()(problem, profile, options, baseline.assignment)
    wall = time.perf_counter() - start
    stats = {
        **result.stats,
        "volcano_objective_stages": dict(baseline.objective.stages),
        "volcano_time_s": baseline.wall_time_s,
    }
    if result.usable and result.objective.better_or_equal(baseline.objective):
        plan = _plan(problem, engine, result, bound=result.bound, wall_time_s=wall, stats=stats)
        return _checked(problem, plan, profile, options.evict)
    why = (
        f"{entry.name} {result.status}: no plan at least as good as the {BASELINE}'s; "
        f"{BASELINE} plan returned"
    )
    # the search's bound still bounds the optimum, so it is kept when it is one for the
    # baseline's plan (≥ its value: _plan checks); stats keep it either way
    plan = _plan(problem, engine, baseline, status=SolveStatus.FALLBACK, bound=result.bound,
                 wall_time_s=wall, stats={**stats, "fallback": why, "search_bound": result.bound})
    return _checked(problem, plan, profile, options.evict)


def default_engine(instance: Instance) -> str:
    """The engine mirroring the scheduler whose objects the instance holds.

    Parameters
    ----------
    instance
        The loaded instance.

    Returns
    -------
    str
        ``volcano``, ``kueue`` or ``kai``.
    """
    return instance.scheduler


def solve(instance: Instance, engine: str | None = None, profile: Profile | str | None = None,
          **options: Any) -> Plan:
    """Place the instance's pending jobs with ``engine`` and return a checked :class:`Plan`.

    Parameters
    ----------
    instance
        The cluster, its topology and its jobs.
    engine
        A name from :mod:`toposolve.engines.registry` (``volcano`` — alias ``heuristic`` —,
        ``kueue``, ``kai`` or ``cpsat``); default: :func:`default_engine`.
    profile
        A :class:`Profile`, a profile name from ``models/`` or a path.
    **options
        Fields of :class:`SolveOptions` (``time_limit``, ``workers``, ``seed``, ...).

    Returns
    -------
    Plan
        The plan, checked by the independent checker.
    """
    require_type(instance, Instance, "instance")
    engine = engine or default_engine(instance)
    return solve_problem(compile_problem(instance), engine, profile, SolveOptions(**options))
