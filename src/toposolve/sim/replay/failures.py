"""Node failures injected into a replay (``--fail-rate R[,repair=defrag|evict][,down=S]``).

Each node fails R times per day on average: exponential times between failures, drawn from
the replay's seed, in event order (so the same seed gives the same failures). A failed node's
pods are gone and the node stays down ``down`` seconds (unschedulable), then returns; its next
failure is drawn from its return. With ``repair=defrag`` the jobs hit are repaired by
:func:`toposolve.defrag` (``fail=[...]``); a job it cannot repair is evicted whole (lost work,
re-queued); with ``repair=evict`` every job hit is. See ``docs/replay.md``.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from toposolve.core.errors import InputError
from toposolve.formats.trace.model import parse_duration
from toposolve.sim.replay.options import choice, number, option_values

REPAIR_MODES = ("defrag", "evict")
SPEC = "R[,repair=defrag|evict][,down=S]"
DAY = 86400.0


@dataclass(frozen=True)
class FailurePolicy:
    """How often nodes fail and what the replay does about it."""

    rate: float  # failures per node per day
    repair: str = "defrag"
    down: float = 3600.0  # seconds a failed node stays down
    time_limit: float = 2.0  # seconds per repair call (CP-SAT, deterministic)


def _bad(message: str) -> InputError:
    return InputError(f"{message} ({SPEC})", obj="command line", field="--fail-rate")


def _number(name: str, text: str) -> float:
    return number(text, 0, _bad, f"{name} must be a number ≥ 0")


def parse_failure_policy(text: str) -> FailurePolicy:
    """``R[,repair=defrag|evict][,down=S]`` as a :class:`FailurePolicy`; a one-line
    :class:`InputError` (field ``--fail-rate``) if malformed."""
    rate, *items = [part.strip() for part in text.split(",")]
    values = option_values(items, ("repair", "down"), _bad)
    repair = choice(values, "repair", REPAIR_MODES, _bad)
    try:
        down = parse_duration(values.get("down", "3600"))
    except ValueError:
        down = -1.0
    if not 0 < down < math.inf:
        raise _bad(f"down must be positive seconds (or 30m, 1h…), not {values['down']!r}")
    return FailurePolicy(rate=_number("the rate", rate), repair=repair, down=down)


class FailureClock:
    """The failures and returns of ``nodes`` nodes, drawn lazily from ``seed``.

    Events are ``(time, kind, node)`` with kind 0 = return, 1 = failure; ties go by kind
    (returns first), then node index.
    """

    def __init__(self, nodes: int, policy: FailurePolicy, seed: int) -> None:
        self.policy = policy
        self.rng = np.random.default_rng(seed)
        self.events: list[tuple[float, int, int]] = []
        self.down: set[int] = set()
        for n in range(nodes):
            self._schedule_failure(n, 0.0)

    def _schedule_failure(self, node: int, after: float) -> None:
        if self.policy.rate <= 0:
            return
        gap = float(self.rng.exponential(DAY / self.policy.rate))
        heapq.heappush(self.events, (after + gap, 1, node))

    def next_time(self) -> float | None:
        """When the next failure or return happens (None: never)."""
        return self.events[0][0] if self.events else None

    def due(self, t: float) -> tuple[list[int], bool]:
        """The nodes that failed by ``t`` (sorted) and whether any node went down or came
        back; :attr:`down` is then the set of nodes down at ``t``."""
        failed: set[int] = set()
        changed = False
        while self.events and self.events[0][0] <= t:
            at, kind, node = heapq.heappop(self.events)
            changed = True
            if kind == 1:
                failed.add(node)
                self.down.add(node)
                heapq.heappush(self.events, (at + self.policy.down, 0, node))
            else:
                self.down.discard(node)
                self._schedule_failure(node, at)
        return sorted(failed), changed
