"""The time limit of one CP-SAT run: what is left, and what was cut short.

The run's :class:`~toposolve.core.deadline.Deadline` counts from when :func:`toposolve.solve`
began (so the warm start's time is inside it) and bounds everything: model building, hints,
every search, the repacking and the reasons.

* Wall-clock mode (``deterministic = false``): the stages share what is left of the wall clock
  minus ``reserve`` (the work after the search).
* Deterministic mode (the default): the stages share ``time_limit`` deterministic units, so the
  same input gives the same plan. Each search is also capped at the deadline's wall clock; a
  search stopped by that cap is recorded as cut short (the one case a run may not repeat).

Building the model checks the deadline as it goes (:meth:`Budget.check` raises
:class:`OutOfTime`); the run then returns the warm start. Every step that stops early adds one
phrase to :attr:`Budget.cut_short`, which the plan carries as ``stats.cut_short``.
"""

from __future__ import annotations

from toposolve.core.deadline import Deadline
from toposolve.engines.cpsat.solve.parameters import Settings


class OutOfTime(Exception):
    """The deadline passed while building a model."""


class Budget:
    """What is left of the time limit, in wall seconds or deterministic units."""

    def __init__(self, settings: Settings, deadline: Deadline | None = None) -> None:
        self.settings = settings
        if deadline is None:
            deadline = Deadline(settings.time_limit, deterministic=settings.deterministic)
        self.clock = deadline
        self.t0 = deadline.started
        self.deadline = deadline.wall_deadline
        self.deterministic_used = 0.0
        self.reserve = 0.0  # wall seconds kept for the work after the search
        self.cut_short: list[str] = []

    def elapsed(self) -> float:
        return self.clock.elapsed()

    def wall_left(self) -> float:
        """Wall seconds until the deadline, less the reserve."""
        return self.clock.wall_left() - self.reserve

    def remaining(self) -> float:
        """What the stages may still share: deterministic units or wall seconds."""
        if self.settings.deterministic:
            return self.clock.remaining(self.deterministic_used)
        return self.wall_left()

    def exhausted(self) -> bool:
        return self.remaining() <= 0 or self.wall_left() <= 0

    def spend(self, solver) -> None:
        self.deterministic_used += solver.deterministic_time

    def check(self, what: str) -> None:
        """Raise :class:`OutOfTime` (noting ``what`` was cut short) once the deadline passed."""
        if self.wall_left() <= 0:
            self.note(f"{what} (at {self.elapsed():.1f} s)")
            raise OutOfTime(what)

    def note(self, what: str) -> None:
        if what not in self.cut_short:
            self.cut_short.append(what)

    def configure(self, solver, share_of_remaining: float, *, workers: int | None = None) -> float:
        """Parameters of one search given ``share_of_remaining`` of the budget; returns the
        wall-clock cap it was given (the deadline, in deterministic mode)."""
        cap = max(self.wall_left(), 0.01)
        share = self.remaining() * share_of_remaining
        self.settings.configure(solver, share, workers=workers, wall_cap=cap)
        return cap

    def stopped_by_wall(self, solver, cap: float, finished: bool) -> bool:
        """A deterministic search that ended at the wall-clock cap, not at its own budget."""
        if finished or not self.settings.deterministic:
            return False
        return solver.wall_time >= 0.95 * cap
