"""One time limit, the moment it counts from, and how it is measured.

A :class:`Deadline` is the stop criterion every engine is given (``SolveOptions.deadline``).
Its ``limit`` is wall seconds, or — when ``deterministic`` — CP-SAT deterministic units (work,
independent of machine load), so the same input gives the same plan. The wall clock still
stops everything at :attr:`Deadline.wall_deadline`: ``started + wall_cap`` (``wall_cap``
defaults to ``limit``). A replay sets ``wall_cap`` above the limit so that the deterministic
budget, not the machine's load, ends each search.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Deadline:
    """A time limit counted from ``started`` (a ``time.perf_counter()`` reading).

    Parameters
    ----------
    limit
        The budget: wall seconds, or deterministic units when ``deterministic``.
    started
        When the limit counts from (default: now).
    deterministic
        Whether ``limit`` is counted in deterministic units.
    wall_cap
        Wall seconds after ``started`` at which everything stops (default: ``limit``).
    """

    limit: float
    started: float = field(default_factory=time.perf_counter)
    deterministic: bool = False
    wall_cap: float | None = None

    def __post_init__(self) -> None:
        if not self.limit >= 0:
            raise ValueError(f"a time limit must be at least 0, got {self.limit}")
        if self.wall_cap is not None and not self.wall_cap >= 0:
            raise ValueError(f"a wall-clock cap must be at least 0, got {self.wall_cap}")

    @property
    def wall_deadline(self) -> float:
        """The ``time.perf_counter()`` reading at which everything stops."""
        return self.started + (self.limit if self.wall_cap is None else self.wall_cap)

    def elapsed(self, now: float | None = None) -> float:
        """Wall seconds since ``started``."""
        return (time.perf_counter() if now is None else now) - self.started

    def wall_left(self, now: float | None = None) -> float:
        """Wall seconds until :attr:`wall_deadline` (negative once it passed)."""
        return self.wall_deadline - (time.perf_counter() if now is None else now)

    def remaining(self, used: float = 0.0, now: float | None = None) -> float:
        """What is left of the limit.

        Parameters
        ----------
        used
            Deterministic units already spent (deterministic mode only).
        now
            The ``time.perf_counter()`` reading to measure at (default: now).

        Returns
        -------
        float
            ``limit − used`` in deterministic mode, else the wall seconds left.
        """
        return self.limit - used if self.deterministic else self.wall_left(now)

    def expired(self, now: float | None = None) -> bool:
        """The wall clock reached :attr:`wall_deadline`."""
        return self.wall_left(now) <= 0
