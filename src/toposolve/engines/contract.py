"""The engine contract: what every engine is given and what it returns.

An engine is a function ``solve(problem, profile, options, hint=None) -> EngineResult``:

* ``problem`` is the compiled :class:`~toposolve.core.problem.Problem` (running pods included, so a
  replay loop can hand over the cluster as it is now);
* ``profile`` the :class:`~toposolve.policy.profiles.Profile` (objective, plugin arguments, solver
  settings);
* ``options`` the run's :class:`SolveOptions`, passed whole (time limit, workers, seed,
  eviction mode, progress callback...); an engine honours the ones that apply to it and the
  time limit always;
* ``hint`` an :class:`~toposolve.core.assignment.Assignment` to start from (a warm start:
  the baseline's plan, or the previous plan in a replay). Engines that cannot use one ignore it.

It returns an :class:`EngineResult`. Checking the plan and falling back to the baseline is not
the engine's business: :func:`toposolve.solve.solve_problem` does both, once, for every engine.
Engines are found by name in :mod:`toposolve.engines.registry`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, TypedDict

from toposolve.core.assignment import Assignment
from toposolve.core.errors import InputError
from toposolve.core.limits import MAX_SEED, MAX_WORKERS, count_problem, time_limit_problem
from toposolve.core.problem import Problem
from toposolve.policy.objective import ObjectiveValue
from toposolve.policy.profiles import Profile
from toposolve.policy.rules import EvictMode


class ProgressEvent(NamedTuple):
    """One progress report: the stage's incumbent, its best bound, seconds since the solve
    started, the objective stage being solved, its gap (``None`` when undefined), what kind of
    report it is and the line a person reads.

    ``kind``: ``"solution"`` (an improving solution), ``"stage"`` (a stage ended) or
    ``"status"`` (a heartbeat while nothing improves: model building, a long search; incumbent
    and bound are NaN when there are none yet). ``text`` gives the stage's values in user units
    (accelerators placed per priority, jobs, tiers) with the gap in percent.
    The first three items are ``(incumbent, bound, elapsed)``, so an event also reads as the
    tuple :func:`toposolve.report.plots.plot_progress` draws (which keeps the solutions only)."""

    incumbent: float
    bound: float
    elapsed: float
    stage: str = ""
    gap: float | None = None
    kind: str = "solution"
    text: str = ""


class Progress(Protocol):
    """A progress callback: called with one :class:`ProgressEvent` per improving solution."""

    def __call__(self, event: ProgressEvent, /) -> None: ...


def relative_gap(objective: float, bound: float | None) -> float | None:
    """``|bound − objective| / max(1, |objective|)``, or ``None`` without a bound."""
    if bound is None:
        return None
    return abs(bound - objective) / max(1.0, abs(objective))


def proven_bound(objective: float, bound: float | None) -> float | None:
    """``bound`` when it is a bound of ``objective`` (larger is better, so ``bound`` ≥ it up to
    float rounding), else ``None``: an engine that proved nothing reports no bound, and then no
    gap."""
    if bound is None or bound < objective - 1e-9 * max(1.0, abs(objective)):
        return None
    return bound


@dataclass
class SolveOptions:
    """Run options that override the profile's solver section (``None`` = keep the profile's).

    Travels whole from :func:`toposolve.solve` to the engine."""

    time_limit: float | None = None
    workers: int | None = None
    seed: int | None = None
    deterministic: bool | None = None
    log: bool = False
    progress: Progress | None = None
    export_model: str | None = None
    parameters: dict[str, Any] | None = None
    evict: EvictMode | None = None  # evict running gangs for pending ones (seed 002)
    # time.perf_counter() the time limit counts from; solve_problem sets it to its own start,
    # so a warm start's time is inside the limit
    started: float | None = None

    def __post_init__(self) -> None:
        """Refuse a value no engine could use (nan or negative time, a million workers…)."""
        checks = (
            ("time_limit", self.time_limit, time_limit_problem),
            ("workers", self.workers, lambda v: count_problem(v, 1, MAX_WORKERS)),
            ("seed", self.seed, lambda v: count_problem(v, 0, MAX_SEED)),
        )
        for name, value, problem in checks:
            why = None if value is None else problem(value)
            if why:
                raise InputError(why, obj="options", field=name)


class EngineStats(TypedDict, total=False):
    """Engine facts that go to ``plan.stats`` (every key optional; an engine sets its own).

    CP-SAT: ``stages`` (one record per solve: stage, status, objective, bound, seconds,
    deterministic_time), ``rounds``, ``refined_classes``, ``aggregation_level``,
    ``build_seconds``, model sizes (``count_variables``, ...), ``hint_feasible``,
    ``hint_dropped_pods``, ``repacked_hints``, ``plan_source`` (coarse model), ``eviction_model``,
    ``cut_short`` (what the time limit cut short).
    Any engine with evictions: ``eviction`` (mode, disruption per engine)."""

    stages: list[dict[str, Any]]
    rounds: int
    refined_classes: int
    aggregation_level: int
    lifted: bool  # the exact model lifted whole-node pods above the leaves (engines/cpsat/lift.py)
    build_seconds: float
    hint_feasible: bool | None
    hint_dropped_pods: int
    repacked_hints: int
    plan_source: str | None
    eviction_model: str
    cut_short: list[str]
    variables: int
    constraints: int
    count_variables: int
    node_classes: int
    modelled_jobs: int
    eviction_slots: int
    victim_jobs: int
    eviction: dict[str, Any]


@dataclass
class EngineResult:
    """What an engine returns: its assignment, status, objective value and bound.

    ``status``: ``FEASIBLE`` (a plan, not proven optimal), ``OPTIMAL``, ``INFEASIBLE``,
    ``UNKNOWN`` (nothing found in time) or ``FALLBACK`` (the engine returned its hint).
    ``bound`` bounds ``objective.scalar`` (``None`` when the engine proves nothing)."""

    assignment: Assignment
    status: str
    objective: ObjectiveValue
    bound: float | None = None
    wall_time_s: float = 0.0
    stats: EngineStats = field(default_factory=dict)  # type: ignore[assignment]

    @property
    def gap(self) -> float | None:
        return relative_gap(self.objective.scalar, self.bound)

    @property
    def usable(self) -> bool:
        """The engine produced a plan (possibly the empty one)."""
        return self.status in ("OPTIMAL", "FEASIBLE", "FALLBACK")


class EngineRefusal(InputError):
    """An engine cannot honour this problem (a gang tree deeper than it models): one line."""


def require_depth(problem: Problem, engine: str, supported: int | None) -> None:
    """Refuse, in one line, a problem whose gang tree is deeper than ``engine`` honours
    (``supported``: its deepest tree, None for any): never flatten one silently."""
    if supported is None or problem.max_gang_depth <= supported:
        return
    job = next(cj for cj in problem.jobs if problem.gang_depth(cj.index) == problem.max_gang_depth)
    raise EngineRefusal(
        f"engine {engine!r} does not support a gang hierarchy of depth {problem.max_gang_depth} yet "
        f"(it honours depth {supported})", file=problem.source, obj=f"Job/{job.key}",
    )


class EngineSolve(Protocol):
    """The signature every engine's ``solve`` has."""

    def __call__(
        self, problem: Problem, profile: Profile, options: SolveOptions, hint: Assignment | None = None
    ) -> EngineResult: ...
