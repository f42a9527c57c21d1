"""Gang-aware preemption and reclaim for the heuristic engine (seed 002, Volcano
``gangpreempt``/``gangreclaim``): victim bundles, ROI, domain search, nominated placements.

Entry point: :func:`run_preemption` after :meth:`HeuristicEngine.run`. The action itself and the
rules it follows are described in :mod:`.preempt`; bundles in :mod:`.bundles`, ROI in :mod:`.roi`,
who may be evicted in :mod:`toposolve.policy.rules.eviction` (shared with CP-SAT), where in
:mod:`.domains`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toposolve.engines.volcano.evict.bundles import Bundle, BundleKind, GangState, split_bundles
from toposolve.engines.volcano.evict.domains import candidate_domains
from toposolve.engines.volcano.evict.preempt import EvictionAction, EvictionOutcome, VictimRecord
from toposolve.engines.volcano.evict.roi import ROI_THRESHOLD, roi
from toposolve.engines.volcano.evict.room import FreedRoom
from toposolve.engines.volcano.state import Eviction
from toposolve.policy.rules import EvictMode, QueueQuotas, RunningPods, evict_actions

if TYPE_CHECKING:
    from toposolve.engines.volcano.engine import HeuristicEngine

def run_preemption(engine: HeuristicEngine, mode: EvictMode) -> EvictionOutcome:
    """Evict for the jobs the allocate pass left pending, then refresh ``engine.assignment``.

    ``both`` runs the preempt action, then the reclaim action (Volcano's action order
    ``allocate, preempt, reclaim``). Mutates ``engine.state`` (evictions and placements) and
    ``engine.assignment`` (counts rebuilt from the state log, ``evicted``, ``nominated_jobs``,
    domains and reasons); returns what happened to whom.
    """
    actions = evict_actions(mode)
    outcome = EvictionOutcome()
    pods = RunningPods(engine.problem)
    room = FreedRoom(engine.problem, engine.state)
    for action in actions:
        EvictionAction(engine, action, pods, outcome, room, preempt_too=mode == "both").run()
    _refresh_assignment(engine)
    return outcome


def _refresh_assignment(engine: HeuristicEngine) -> None:
    """Counts and devices from the state log (placements only), evictions, and the
    preemptors' domains."""
    assignment = engine.assignment
    assignment.counts = {}
    assignment.devices = {}
    for batch in engine.state.log:
        if isinstance(batch, Eviction):
            continue
        group, nodes, counts = batch
        for node, count in zip(nodes.tolist(), counts.tolist(), strict=True):
            assignment.add(group, node, count)
    for group, node, picks in engine.state.placed_devices():
        assignment.add_devices(group, node, picks)
    assignment.evicted = engine.state.evicted_pods()
    engine.report_domains(sorted(assignment.nominated_jobs))


__all__ = [
    "ROI_THRESHOLD",
    "Bundle",
    "BundleKind",
    "EvictionOutcome",
    "GangState",
    "QueueQuotas",
    "VictimRecord",
    "candidate_domains",
    "roi",
    "run_preemption",
    "split_bundles",
]
