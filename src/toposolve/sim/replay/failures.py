"""Node failures injected into a replay
(``--fail-rate R[,repair=defrag|evict][,down=S][,scope=node|TIER]``).

Each failure unit — a node, or with ``scope=TIER`` a HyperNode of that tier (a rack's switch or
power: all its nodes at once) — fails R times per day on average: exponential times between
failures, drawn from the replay's seed, in event order (so the same seed gives the same
failures). A failed node's pods are gone and the node stays down ``down`` seconds
(unschedulable), then returns; its unit's next failure is drawn from its return. With
``repair=defrag`` the jobs hit are repaired by
:func:`toposolve.defrag` (``fail=[...]``); a job it cannot repair is evicted whole (lost work,
re-queued); with ``repair=evict`` every job hit is. ``restart=`` says what their progress
becomes (:mod:`.restart`). See ``docs/replay.md``.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from toposolve.core.errors import InputError
from toposolve.core.topology import Topology
from toposolve.formats.trace.model import parse_duration
from toposolve.sim.replay.options import choice, number, option_values
from toposolve.sim.replay.restart import Restart, parse_restart

REPAIR_MODES = ("defrag", "evict")
SPEC = "R[,repair=defrag|evict][,down=S][,scope=node|TIER][,restart=keep|lose|checkpoint:I]"
DAY = 86400.0


@dataclass(frozen=True)
class FailurePolicy:
    """How often nodes fail and what the replay does about it."""

    rate: float  # failures per unit (node, or HyperNode of the scope tier) per day
    repair: str = "defrag"
    down: float = 3600.0  # seconds a failed node stays down
    time_limit: float = 2.0  # seconds per repair call (CP-SAT, deterministic)
    scope: str = "node"  # what fails as one: "node", or a tier (number or name) of HyperNodes
    # what the jobs a failure touches keep of their progress: keep (repaired and moved jobs
    # keep it, evicted ones start over), lose (all start over), checkpoint:I (all resume from
    # their last checkpoint)
    restart: str = "keep"

    def __post_init__(self) -> None:
        parse_restart(self.restart, _bad)  # a bad restart is refused here, in one line

    @property
    def rule(self) -> Restart:
        """The restart rule of the jobs a failure repairs, moves or evicts (:mod:`.restart`)."""
        return parse_restart(self.restart, _bad)


def _bad(message: str) -> InputError:
    return InputError(f"{message} ({SPEC})", obj="command line", field="--fail-rate")


def _number(name: str, text: str) -> float:
    return number(text, 0, _bad, f"{name} must be a number ≥ 0")


def parse_failure_policy(text: str) -> FailurePolicy:
    """``R[,repair=…][,down=S][,scope=…][,restart=…]`` as a :class:`FailurePolicy`; a one-line
    :class:`InputError` (field ``--fail-rate``) if malformed."""
    rate, *items = [part.strip() for part in text.split(",")]
    values = option_values(items, ("repair", "down", "scope", "restart"), _bad)
    repair = choice(values, "repair", REPAIR_MODES, _bad)
    try:
        down = parse_duration(values.get("down", "3600"))
    except ValueError:
        down = -1.0
    if not 0 < down < math.inf:
        raise _bad(f"down must be positive seconds (or 30m, 1h…), not {values['down']!r}")
    return FailurePolicy(rate=_number("the rate", rate), repair=repair, down=down,
                         scope=values.get("scope", "node"),
                         restart=values.get("restart", "keep"))


def failure_units(topology: Topology, scope: str) -> list[list[int]]:
    """The node indices that fail together: one list per node for ``scope="node"``; else one
    per HyperNode of the tier ``scope`` names (a number or a tier name; HyperNode order), and
    one per node under no HyperNode of that tier. One-line :class:`InputError` for a tier the
    topology does not have."""
    nodes = len(topology.node_names)
    if scope == "node":
        return [[n] for n in range(nodes)]
    tier = topology.tier_name_to_tier.get(scope, int(scope) if scope.isdigit() else None)
    tiers = sorted(set(topology.tier.tolist()) - {topology.max_tier})
    if tier not in tiers:
        names = ", ".join([*map(str, tiers), *sorted(topology.tier_name_to_tier)])
        raise _bad(f"scope must be node or a HyperNode tier of the cluster ({names or 'none'}), "
                   f"not {scope!r}")
    at = topology.node_at_tier[:, tier]
    units = {int(h): [int(n) for n in (at == h).nonzero()[0]] for h in sorted(set(at.tolist()))
             if h >= 0}
    return [*units.values(), *([int(n)] for n in (at < 0).nonzero()[0])]


class FailureClock:
    """The failures and returns of failure units, drawn lazily from ``seed``.

    ``units`` is a node count (each node fails alone) or the node lists that fail together
    (:func:`failure_units`). Events are ``(time, kind, unit)`` with kind 0 = return,
    1 = failure; ties go by kind (returns first), then unit index.
    """

    def __init__(self, units: int | Sequence[Sequence[int]], policy: FailurePolicy,
                 seed: int) -> None:
        self.policy = policy
        self.units = [[n] for n in range(units)] if isinstance(units, int) else [
            list(u) for u in units]
        self.rng = np.random.default_rng(seed)
        self.events: list[tuple[float, int, int]] = []
        self.down: set[int] = set()
        for u in range(len(self.units)):
            self._schedule_failure(u, 0.0)

    def _schedule_failure(self, unit: int, after: float) -> None:
        if self.policy.rate <= 0:
            return
        gap = float(self.rng.exponential(DAY / self.policy.rate))
        heapq.heappush(self.events, (after + gap, 1, unit))

    def next_time(self) -> float | None:
        """When the next failure or return happens (None: never)."""
        return self.events[0][0] if self.events else None

    def due(self, t: float) -> tuple[list[int], bool]:
        """The nodes that failed by ``t`` (sorted) and whether any node went down or came
        back; :attr:`down` is then the set of nodes down at ``t``."""
        failed: set[int] = set()
        changed = False
        while self.events and self.events[0][0] <= t:
            at, kind, unit = heapq.heappop(self.events)
            changed = True
            nodes = self.units[unit]
            if kind == 1:
                failed.update(nodes)
                self.down.update(nodes)
                heapq.heappush(self.events, (at + self.policy.down, 0, unit))
            else:
                self.down.difference_update(nodes)
                self._schedule_failure(unit, at)
        return sorted(failed), changed
