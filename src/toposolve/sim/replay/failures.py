"""Node failures injected into a replay
(``--fail-rate R[,repair=defrag|evict][,down=S][,scope=SCOPE[:RATE][+…]][,restart=…]``).

Each failure unit — a node, or with ``scope=TIER`` a HyperNode of that tier (a rack's switch or
power: all its nodes at once) — fails R times per day on average: exponential times between
failures, drawn from the replay's seed, in event order (so the same seed gives the same
failures); ``scope=node+rack`` runs one such process per scope, merged in time order, and
``scope=node:2+rack:0.1`` gives each its own rate (a scope without ``:RATE`` fails at R). A failed
node's pods are gone and the node stays down ``down`` seconds (unschedulable), then returns;
its unit's next failure is drawn from its return. With ``repair=defrag`` the jobs hit are
repaired by :func:`toposolve.defrag` (``fail=[...]``); a job it cannot repair is evicted whole
(lost work, re-queued); with ``repair=evict`` every job hit is. ``restart=`` says what their
progress becomes (:mod:`.restart`). See ``docs/replay.md``.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from toposolve.core.errors import InputError
from toposolve.core.topology import Topology
from toposolve.formats.trace.model import parse_duration
from toposolve.sim.replay.options import choice, number, option_values
from toposolve.sim.replay.restart import Restart, parse_restart

REPAIR_MODES = ("defrag", "evict")
SPEC = ("R[,repair=defrag|evict][,down=S][,scope=node|TIER[:RATE][+TIER[:RATE]…]]"
        "[,restart=keep|lose|checkpoint:I[:save=S][:restore=R]]")
DAY = 86400.0


@dataclass(frozen=True)
class FailurePolicy:
    """How often nodes fail and what the replay does about it."""

    rate: float  # failures per unit (node, or HyperNode of the scope tier) per day
    repair: str = "defrag"
    down: float = 3600.0  # seconds a failed node stays down
    time_limit: float = 2.0  # seconds per repair call (CP-SAT, deterministic)
    # what fails as one: "node", or a tier (number or name) of HyperNodes; "node+rack": one
    # independent failure process per named scope, each at ``rate``; "node:2+rack:0.1": each
    # at its own rate (failures per unit of that scope per day)
    scope: str = "node"
    # what the jobs a failure touches keep of their progress: keep (repaired and moved jobs
    # keep it, evicted ones start over), lose (all start over), checkpoint:I (all resume from
    # their last checkpoint)
    restart: str = "keep"

    def __post_init__(self) -> None:
        parse_restart(self.restart, _bad)  # a bad restart is refused here, in one line
        scopes = self.scopes
        if not all(scopes) or len(set(scopes)) < len(scopes):
            raise _bad(f"scope must name each failure scope once (node, or a tier), joined "
                       f"by '+', not {self.scope!r}")
        _ = self.scope_rates  # a bad scope rate is refused here, in one line

    @property
    def scopes(self) -> tuple[str, ...]:
        """The named scopes, each an independent failure process (``node+rack``: two)."""
        return tuple(name for name, _ in self._scope_parts())

    @property
    def scope_rates(self) -> tuple[float, ...]:
        """The failure rate (per unit per day) of each of :attr:`scopes`: its ``:RATE``, else
        :attr:`rate`."""
        return tuple(self.rate if text is None else
                     _number(f"the rate of scope {name!r}", text)
                     for name, text in self._scope_parts())

    def _scope_parts(self) -> list[tuple[str, str | None]]:
        # a tier name is a label key or HyperNode tier name, neither of which holds ':'
        parts = [part.strip().partition(":") for part in self.scope.split("+")]
        return [(name.strip(), rate.strip() if sep else None) for name, sep, rate in parts]

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


def failure_clock(topology: Topology, policy: FailurePolicy, seed: int) -> FailureClock:
    """The clock of ``policy``'s failure processes on ``topology``: one per named scope
    (:func:`failure_units`); two names for the same tier are a one-line error."""
    units = [failure_units(topology, scope) for scope in policy.scopes]
    seen = [sorted(map(sorted, u)) for u in units]
    if any(seen[k] in seen[:k] for k in range(len(seen))):
        raise _bad(f"scope names the same failure units twice: {policy.scope!r}")
    return FailureClock(units[0], policy, seed, more=units[1:])


class FailureClock:
    """The failures and returns of failure units, drawn lazily from ``seed``.

    ``units`` is a node count (each node fails alone) or the node lists that fail together
    (:func:`failure_units`): one failure process; ``more`` adds one process per list of units
    (further scopes). The k-th process fails at ``policy.scope_rates[k]`` (``policy.rate`` when
    the counts differ). The first process draws from ``seed`` (as it would alone), the k-th from
    ``(seed, k)``. Events are ``(time, kind, unit)`` with kind 0 = return, 1 = failure; ties go
    by kind (returns first), then unit index (the first process's units first). A node is down
    while any unit holding it is.
    """

    def __init__(self, units: int | Sequence[Sequence[int]], policy: FailurePolicy,
                 seed: int, *, more: Sequence[Sequence[Sequence[int]]] = ()) -> None:
        self.policy = policy
        first = [[n] for n in range(units)] if isinstance(units, int) else units
        processes = [first, *more]
        self.units = [list(u) for process in processes for u in process]
        self.process = [k for k, process in enumerate(processes) for _ in process]
        self.scopes = policy.scopes if len(policy.scopes) == len(processes) else tuple(
            map(str, range(len(processes))))
        self.rates = (policy.scope_rates if len(policy.scopes) == len(processes)
                      else (policy.rate,) * len(processes))
        self.rngs = [np.random.default_rng(seed if k == 0 else [seed, k])
                     for k in range(len(processes))]
        self.events: list[tuple[float, int, int]] = []
        self.holds: Counter[int] = Counter()  # node -> how many of its units are down
        self.failed_units: Counter[str] = Counter()  # scope -> units that failed at the last due
        for u in range(len(self.units)):
            self._schedule_failure(u, 0.0)

    @property
    def down(self) -> set[int]:
        """The nodes down now."""
        return {n for n, held in self.holds.items() if held > 0}

    def _schedule_failure(self, unit: int, after: float) -> None:
        rate = self.rates[self.process[unit]]
        if rate <= 0:
            return
        rng = self.rngs[self.process[unit]]
        gap = float(rng.exponential(DAY / rate))
        heapq.heappush(self.events, (after + gap, 1, unit))

    def next_time(self) -> float | None:
        """When the next failure or return happens (None: never)."""
        return self.events[0][0] if self.events else None

    def due(self, t: float) -> tuple[list[int], bool]:
        """The nodes that went down by ``t`` (sorted; a node already down does not fail again)
        and whether any node went down or came back; :attr:`down` is then the set of nodes down
        at ``t`` and :attr:`failed_units` counts, per scope, the units that took a node down."""
        failed: set[int] = set()
        changed = False
        self.failed_units = Counter()
        while self.events and self.events[0][0] <= t:
            at, kind, unit = heapq.heappop(self.events)
            changed = True
            nodes = self.units[unit]
            if kind == 1:
                fresh = {n for n in nodes if self.holds[n] == 0}
                failed |= fresh
                if fresh:
                    self.failed_units[self.scopes[self.process[unit]]] += 1
                self.holds.update(nodes)
                heapq.heappush(self.events, (at + self.policy.down, 0, unit))
            else:
                self.holds.subtract(nodes)
                self._schedule_failure(unit, at)
        return sorted(failed), changed
