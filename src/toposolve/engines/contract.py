"""The engine contract: what every engine is given and what it returns.

An engine is a function ``solve(problem, profile, options, hint=None) -> EngineResult``:
``problem`` is the compiled :class:`~toposolve.core.problem.Problem` (running pods included);
``profile`` the :class:`~toposolve.policy.profiles.Profile`; ``options`` the run's
:class:`SolveOptions`, whole (an engine honours those that apply to it; CP-SAT stops at its
:class:`~toposolve.core.deadline.Deadline`, the greedy mirrors end long before); ``hint`` an
:class:`~toposolve.core.assignment.Assignment` to start from (a warm start), ignored by
engines that cannot use one. Checking the plan and falling back to the baseline is
:func:`toposolve.solve.solve_problem`'s business, once for every engine. Engines are found by
name in :mod:`toposolve.engines.registry`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Any, NamedTuple, Protocol

from toposolve.core.assignment import Assignment
from toposolve.core.deadline import Deadline
from toposolve.core.errors import InputError
from toposolve.core.limits import MAX_SEED, MAX_WORKERS, count_problem, time_limit_problem
from toposolve.core.problem import Problem
from toposolve.core.status import SolveStatus
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
    """The relative gap between a plan's value and a bound of it.

    Parameters
    ----------
    objective
        The plan's scalar objective (larger is better).
    bound
        A bound of the optimum, or ``None``.

    Returns
    -------
    float or None
        ``|bound − objective| / max(1, |objective|)``, or ``None`` without a bound.
    """
    if bound is None:
        return None
    return abs(bound - objective) / max(1.0, abs(objective))


def proven_bound(objective: float, bound: float | None) -> float | None:
    """``bound`` when it bounds ``objective``, else ``None`` (then no gap is reported).

    Parameters
    ----------
    objective
        The plan's scalar objective (larger is better).
    bound
        What the engine claims bounds the optimum, or ``None``.

    Returns
    -------
    float or None
        ``bound`` when it is at least ``objective`` up to float rounding, else ``None``.
    """
    if bound is None or bound < objective - 1e-9 * max(1.0, abs(objective)):
        return None
    return bound


@dataclass
class SolveOptions:
    """Run options that override the profile's solver section (``None`` = keep the profile's).

    They travel whole from :func:`toposolve.solve` to the engine. ``deadline``: the
    :class:`~toposolve.core.deadline.Deadline` the engine honours; :func:`toposolve.solve`
    starts one (from ``time_limit`` and ``deterministic``) when it begins, so the warm start's
    time is inside it. ``evict``: also evict running gangs for pending ones."""

    time_limit: float | None = None
    workers: int | None = None
    seed: int | None = None
    deterministic: bool | None = None
    log: bool = False
    progress: Progress | None = None
    export_model: str | None = None
    parameters: dict[str, Any] | None = None
    evict: EvictMode | None = None
    deadline: Deadline | None = None

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


class Unset(Enum):
    """The type of :data:`UNSET`: a statistic the engine did not record (left out of the plan)."""

    UNSET = "unset"


UNSET = Unset.UNSET


@dataclass
class EngineStats(Mapping[str, Any]):
    """An engine's own statistics for ``plan.stats``: a dataclass of typed fields, read as a
    mapping of the fields that are set (not :data:`UNSET`), in the order they are declared.

    Every engine reports its status, objective, bound and time in :class:`EngineResult`; what
    else it measures is its own subclass (e.g.
    :class:`toposolve.engines.cpsat.solve.stats.CpsatStats`).
    The base class has no fields: the mirrors report nothing more."""

    def as_dict(self) -> dict[str, Any]:
        """The set fields, in declaration order."""
        values = ((f.name, getattr(self, f.name)) for f in fields(self))
        return {name: value for name, value in values if value is not UNSET}

    def __getitem__(self, key: str) -> Any:
        return self.as_dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.as_dict())

    def __len__(self) -> int:
        return len(self.as_dict())


@dataclass
class EngineResult:
    """What an engine returns: its assignment, status, objective value and bound.

    ``status``: a :class:`~toposolve.core.status.SolveStatus` (``FALLBACK``: the engine
    returned its hint). ``bound`` bounds ``objective.scalar`` (``None`` when the engine proves
    nothing). ``stats``: the engine's own :class:`EngineStats`."""

    assignment: Assignment
    status: SolveStatus
    objective: ObjectiveValue
    bound: float | None = None
    wall_time_s: float = 0.0
    stats: EngineStats = field(default_factory=EngineStats)

    @property
    def gap(self) -> float | None:
        return relative_gap(self.objective.scalar, self.bound)

    @property
    def usable(self) -> bool:
        """The engine produced a plan (possibly the empty one)."""
        return SolveStatus(self.status).usable


class EngineRefusal(InputError):
    """An engine cannot honour this problem (a gang tree deeper than it models): one line."""


def require_depth(problem: Problem, engine: str, supported: int | None) -> None:
    """Refuse, in one line, a gang tree deeper than ``engine`` honours (never flatten one).

    Parameters
    ----------
    problem
        The compiled problem.
    engine
        The engine's name, for the message.
    supported
        The deepest gang tree the engine honours; ``None`` for any.

    Raises
    ------
    EngineRefusal
        When ``problem`` has a deeper gang tree.
    """
    if supported is None or problem.max_gang_depth <= supported:
        return
    depth = problem.max_gang_depth
    job = next(cj for cj in problem.jobs if problem.gang_depth(cj.index) == depth)
    raise EngineRefusal(
        f"engine {engine!r} does not support a gang hierarchy of depth {depth} yet "
        f"(it honours depth {supported})", file=problem.source, obj=f"Job/{job.key}",
    )


def require_devices(problem: Problem, engine: str, supported: bool, evict: object = None,
                    evicts_on_devices: bool = False) -> None:
    """Refuse, in one line, per-device sharing where ``engine`` cannot place pods on devices
    (or evicts without freeing devices); never place them on pooled capacity.

    Parameters
    ----------
    problem
        The compiled problem.
    engine
        The engine's name, for the message.
    supported
        Whether the engine places pods on devices.
    evict
        The run's eviction mode (None or ``"none"``: no eviction).
    evicts_on_devices
        Whether the engine's evictions free the victims' devices.

    Raises
    ------
    EngineRefusal
        When ``problem`` shares a resource per device and the engine cannot honour it.
    """
    evicting = evict not in (None, "none")
    if not problem.has_devices or (supported and (not evicting or evicts_on_devices)):
        return
    resource = problem.resources[problem.device_resource]
    what = "with eviction " if supported else ""
    raise EngineRefusal(
        f"engine {engine!r} does not support per-device sharing of {resource} {what}yet "
        "(use the volcano, kueue, kai, kube or cpsat engine; with eviction, the volcano or "
        "cpsat engine)",
        file=problem.source, obj="deviceShare")


class EngineSolve(Protocol):
    """The signature every engine's ``solve`` has."""

    def __call__(self, problem: Problem, profile: Profile, options: SolveOptions,
                 hint: Assignment | None = None) -> EngineResult: ...
