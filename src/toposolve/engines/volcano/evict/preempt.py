"""The gang-aware preempt / reclaim action (seed 002 §3.3, Volcano ``gangpreempt``/``gangreclaim``).

Rules and rationale: ``docs/eviction.md``, section ``toposolve.engines.volcano.evict.preempt``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cmp_to_key
from typing import TYPE_CHECKING

import numpy as np

from toposolve.core.problem import RunningPod
from toposolve.engines.volcano.evict.bundles import (
    Bundle,
    BundleKind,
    gang_state,
    split_bundles,
    victim_pod_order,
)
from toposolve.engines.volcano.evict.domains import candidate_domains
from toposolve.engines.volcano.evict.roi import compare_roi, requested, roi
from toposolve.engines.volcano.evict.room import FreedRoom
from toposolve.engines.volcano.state import Eviction
from toposolve.policy.rules import EvictAction, QueueQuotas, RunningPods, held_by, preempt_allows

if TYPE_CHECKING:
    from toposolve.engines.volcano.engine import HeuristicEngine

_EPS = 1e-6


@dataclass
class VictimRecord:
    """What the pass did to one victim job."""

    job: str
    evicted: list[str] = field(default_factory=list)
    was_broken: bool = False  # already below its gang minimum before this pass touched it
    broken: bool = False  # below its gang minimum (minAvailable, role or SubJob minimums) after


@dataclass
class EvictionOutcome:
    """Result of the eviction pass, for reports and tests."""

    placed: dict[str, str] = field(default_factory=dict)  # preemptor job -> domain it was placed in
    modes: dict[str, str] = field(default_factory=dict)  # preemptor job -> "preempt" / "reclaim"
    victims: dict[str, VictimRecord] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)  # job -> why eviction did not help

    def stats(self) -> dict:
        return {
            "preemptors_placed": len(self.placed),
            "evicted_pods": sum(len(v.evicted) for v in self.victims.values()),
            "victim_jobs": len(self.victims),
            "broken_gangs": sum(1 for v in self.victims.values() if v.broken and not v.was_broken),
        }


class EvictionAction:
    """One pass of gang preempt or gang reclaim over the engine's state."""

    def __init__(self, engine: HeuristicEngine, mode: EvictAction, pods: RunningPods,
            outcome: EvictionOutcome, room: FreedRoom | None = None, preempt_too: bool = False):
        self.engine = engine
        # shared by both actions of "both"
        self.room = room or FreedRoom(engine.problem, engine.state)
        self.preempt_too = preempt_too  # mode "both": preemption rights count for freed room too
        self.problem = engine.problem
        self.state = engine.state
        self.mode = mode
        self.pods = pods
        self.outcome = outcome
        # the reclaimer's queue is judged live; a victim queue on what its running pods still
        # hold, never on the pods this plan binds to it (docs/eviction.md)
        self.quotas = QueueQuotas(self.problem,
                                  self.state.queue_used) if mode == "reclaim" else None
        self.victim_quotas = self.quotas.viewing(self.state.queue_held) if self.quotas else None
        self.resources = self.problem.resources
        self.protected = self._jobs_with_placements()  # receive bindings: never victims
        self.lost_jobs = {int(self.problem.group_job[self.problem.pod_group[p]])
                          for p in self.state.evicted_pods()}

    # ---- who preempts ------------------------------------------------------------------------
    def _jobs_with_placements(self) -> set[int]:
        return {
            int(self.problem.group_job[b[0]])
            for b in self.state.log
            if not isinstance(b, Eviction) and int(b[2].sum()) > 0
        }

    def preemptors(self) -> list[int]:
        """Starving jobs in queue order, then job order: pending pods, valid, not ready, not
        placed by this plan, not a victim of this pass."""
        engine, problem = self.engine, self.problem
        by_queue: dict[str, list[int]] = {}
        for j, cj in enumerate(problem.jobs):
            if j in self.protected or j in self.lost_jobs:
                continue
            if not any(engine.gang.pending_of_group(g) > 0 for g in cj.groups):
                continue
            if engine.gang.job_valid(j) is not None or engine.gang.job_ready(j):
                continue
            by_queue.setdefault(cj.queue, []).append(j)
        order: list[int] = []
        for q in sorted(by_queue, key=engine.queue_order_key):
            order.extend(sorted(by_queue[q], key=engine.job_order_key))
        return order

    def run(self) -> None:
        for j in self.preemptors():
            if j in self.lost_jobs:
                continue  # became a victim of an earlier preemptor in this pass
            why = self._reclaimer_blocked(j) if self.mode == "reclaim" else None
            if why is None:
                why = self._try_with_room(j)
            if why is not None:
                self._fail(j, why)

    def _may_take(self, preemptor: int, victim: int) -> bool:
        """Whether ``preemptor`` may take room freed by evicting pods of ``victim``."""
        if self._allowed(preemptor, victim):
            return True
        return self.preempt_too and preempt_allows(self.problem, preemptor, victim)

    def _try_with_room(self, j: int) -> str | None:
        """:meth:`_try_job` seeing only the freed room ``j`` may take (:mod:`.room`)."""
        mark = self.state.mark()
        with self.room.hidden_from(lambda v: self._may_take(j, v)):
            why = self._try_job(j)
        if why is None:
            self.room.add(self.state.evicted_pods(mark))
            self.room.settle(lambda v: self._may_take(j, v))
        return why

    # ---- one preemptor -----------------------------------------------------------------------
    def _reclaimer_blocked(self, j: int) -> str | None:
        assert self.quotas is not None
        queue = self.problem.jobs[j].queue
        if self.quotas.overused(queue):
            return f"queue {queue!r} already holds its deserved share"
        if not self.quotas.preemptive(queue, self.engine.minimum_request(j)):
            return f"queue {queue!r} would exceed its deserved share with this gang"
        return None

    def _try_job(self, j: int) -> str | None:
        """Evict and place ``j`` in its first workable domain; None on success, else why not."""
        engine, state = self.engine, self.state
        need = engine.minimum_request(j)
        mask = requested(need, self.resources)
        domains = candidate_domains(engine, j)
        if not domains:
            limit = engine.job_limit[j]
            return f"no HyperNode of tier ≤ {limit} could hold the gang even if emptied"
        any_victims = False
        for h in domains:
            nodes = state.nodes_in(h)
            if nodes.size == 0:
                continue
            bundles = self.domain_bundles(j, nodes, need, mask)
            if not bundles:
                continue
            any_victims = True
            idle = state.hn_alloc[h] - state.hn_used[h]
            freed = np.zeros(len(self.resources))
            chosen: list[Bundle] = []
            for bundle in bundles:
                chosen.append(bundle)
                freed = freed + bundle.local
                if np.any(idle + freed < need - _EPS):
                    continue
                ready_before = self._simulate(j, h, chosen)
                if ready_before is not None:
                    self._commit(j, h, chosen, ready_before)
                    return None
        k = len(domains)
        where = f"its {k} candidate HyperNode{'s' if k != 1 else ''}"
        if not any_victims:
            who = (
                "same queue, lower priority"
                if self.mode == "preempt"
                else "reclaimable queues over their deserved share"
            )
            return f"no evictable pods ({who}) in {where}"
        return f"evicting every allowed victim in {where} does not make room for the gang"

    def _simulate(self, j: int, h: int, chosen: list[Bundle]) -> dict[int, bool] | None:
        """Apply the evictions and place ``j`` inside ``h``; keep it all on success and return
        whether each victim job was ready before, else roll back and return None."""
        engine, state = self.engine, self.state
        ready_before = {b.job: engine.gang.job_ready(b.job) for b in chosen}
        mark = state.mark()
        state.evict([p.name for b in chosen for p in b.pods])
        if engine.allocate_within(j, h):
            return ready_before
        state.undo_to(mark)  # the evictions (allocate_within rolled back its own work)
        return None

    def _commit(self, j: int, h: int, chosen: list[Bundle], ready_before: dict[int, bool]) -> None:
        problem, gang = self.problem, self.engine.gang
        cj = problem.jobs[j]
        self.outcome.placed[cj.key] = problem.topology.names[h]
        self.outcome.modes[cj.key] = self.mode
        self.outcome.failures.pop(cj.key, None)
        self.engine.assignment.nominated_jobs.add(j)
        self.engine.assignment.reasons.pop(j, None)
        self.protected.add(j)
        for bundle in chosen:
            key = problem.jobs[bundle.job].key
            record = self.outcome.victims.get(key)
            if record is None:
                record = VictimRecord(key, was_broken=not ready_before[bundle.job])
                self.outcome.victims[key] = record
            record.evicted.extend(bundle.names)
            record.broken = not gang.job_ready(bundle.job)
            self.lost_jobs.add(bundle.job)

    def _fail(self, j: int, why: str) -> None:
        key = self.problem.jobs[j].key
        text = f"eviction ({self.mode}): {why}"
        self.outcome.failures[key] = text
        base = self.engine.assignment.reasons.get(j)
        self.engine.assignment.reasons[j] = f"{base}; {text}" if base else text

    # ---- bundles -----------------------------------------------------------------------------
    def _allowed(self, preemptor: int, victim: int) -> bool:
        if victim in self.protected or victim == preemptor:
            return False
        if self.mode == "preempt":
            return preempt_allows(self.problem, preemptor, victim)
        assert self.victim_quotas is not None
        return self.victim_quotas.reclaim_allows(self.problem.jobs[preemptor].queue, victim)

    def _held(self, v: int) -> np.ndarray:
        """Requests of every pod job ``v`` holds now (its global footprint)."""
        groups = self.problem.jobs[v].groups
        return held_by(self.problem, v, {g: self.state.group_count(g) for g in groups})

    def domain_bundles(self, j: int, nodes: np.ndarray, need: np.ndarray,
                       mask: np.ndarray) -> list[Bundle]:
        """Sorted (and, for reclaim, cut) bundles of the allowed victims on ``nodes``."""
        problem, gang = self.problem, self.engine.gang
        gone = set(self.state.evicted_pods())
        by_job: dict[int, list[RunningPod]] = {}
        allowed_jobs: dict[int, bool] = {}
        for pod in self.pods.on_nodes(nodes):
            if pod.name in gone:
                continue
            ok = allowed_jobs.get(pod.job)
            if ok is None:
                ok = allowed_jobs[pod.job] = self._allowed(j, pod.job)
            if ok:
                by_job.setdefault(pod.job, []).append(pod)
        request_of = self.pods.request
        bundles: list[Bundle] = []
        for v in sorted(by_job):
            ordered = victim_pod_order(by_job[v], request_of, need, mask)
            bundles.extend(split_bundles(v, gang_state(problem, gang, v), ordered, request_of,
                                         self._held(v)))
        bundles = self.sort_bundles(bundles, need, mask)
        if self.mode == "reclaim":
            bundles = self._cut(bundles)
        return bundles

    def sort_bundles(self, bundles: list[Bundle], need: np.ndarray,
                     mask: np.ndarray) -> list[Bundle]:
        problem = self.problem
        rois = {id(b): roi(b.local, b.global_, need, mask) for b in bundles}

        def victim_key(b: Bundle) -> tuple:
            if self.mode == "preempt":
                return (problem.jobs[b.job].priority,)
            assert self.victim_quotas is not None
            return self.victim_quotas.victim_queue_key(problem.jobs[b.job].queue)

        def job_key(b: Bundle) -> tuple:
            cj = problem.jobs[b.job]
            return (cj.priority, -cj.creation_index)

        def stable_key(b: Bundle) -> tuple:
            return (problem.jobs[b.job].key, b.pods[0].name, len(b.pods))

        def compare(a: Bundle, b: Bundle) -> int:
            if a.kind != b.kind:
                return -1 if a.kind < b.kind else 1
            if victim_key(a) != victim_key(b):
                return -1 if victim_key(a) < victim_key(b) else 1
            by_roi = compare_roi(rois[id(a)], rois[id(b)])
            if by_roi:
                return by_roi
            ka, kb = (job_key(a), stable_key(a)), (job_key(b), stable_key(b))
            return 0 if ka == kb else (-1 if ka < kb else 1)

        # a comparator with an ROI threshold is not transitive; a fixed starting order keeps
        # the result reproducible
        return sorted(sorted(bundles, key=stable_key), key=cmp_to_key(compare))

    def _cut(self, bundles: list[Bundle]) -> list[Bundle]:
        """Proportion's cut-off: WHOLE bundles survive intact or not at all, SAFE ones shrink."""
        assert self.victim_quotas is not None
        problem = self.problem
        flat = [
            (p.name, problem.jobs[b.job].queue, self.pods.request(p).astype(float))
            for b in bundles
            for p in b.pods
        ]
        allowed = self.victim_quotas.cut_off(flat)
        out: list[Bundle] = []
        for b in bundles:
            kept = [p for p in b.pods if p.name in allowed]
            if len(kept) == len(b.pods):
                out.append(b)
            elif kept and b.kind == BundleKind.SAFE:
                local = sum((self.pods.request(p) for p in kept), start=np.zeros_like(b.local))
                out.append(Bundle(b.kind, b.job, kept, local, b.global_))
        return out
