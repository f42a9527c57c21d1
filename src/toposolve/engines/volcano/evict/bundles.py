"""SAFE / WHOLE victim bundles of one job inside one domain (seed 002 §3.4, Phase 1).

Rules and rationale: ``docs/eviction.md``, section ``toposolve.engines.volcano.evict.bundles``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from toposolve.core.problem import Problem, RunningPod
from toposolve.engines.volcano.evict.roi import local_gain
from toposolve.engines.volcano.readiness import Gang


class BundleKind(IntEnum):
    SAFE = 0
    WHOLE = 1


@dataclass
class Bundle:
    kind: BundleKind
    job: int
    pods: list[RunningPod]
    local: np.ndarray  # [R] requests of the bundle's pods
    global_: np.ndarray  # [R] what evicting it destroys (zeros for SAFE)

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.pods]


@dataclass
class GangState:
    """A victim job's readiness right now."""

    ready: int  # pods holding a node
    min_available: int
    role_ready: dict[str, int] = field(default_factory=dict)
    role_min: dict[str, int] = field(default_factory=dict)
    # only for jobs with minSubGroups: SubJob -> (its policy, whether it is ready)
    subjobs: dict[int, tuple[int, bool]] = field(default_factory=dict)
    min_subjobs: dict[int, int] = field(default_factory=dict)  # policy -> minSubGroups


def gang_state(problem: Problem, gang: Gang, j: int) -> GangState:
    cj = problem.jobs[j]
    subjobs: dict[int, tuple[int, bool]] = {}
    if cj.min_subjobs:
        for s in cj.subjobs:
            sj = problem.subjobs[s]
            subjobs[s] = (sj.policy, gang.subjob_count(s) >= sj.min_available)
    return GangState(
        ready=gang.job_count(j),
        min_available=cj.min_available,
        role_ready=gang.task_counts(j),
        role_min=dict(cj.min_per_task),
        subjobs=subjobs,
        min_subjobs=dict(cj.min_subjobs),
    )


def victim_pod_order(pods: Sequence[RunningPod], request_of: Callable[[RunningPod], np.ndarray],
                     need: np.ndarray, mask: np.ndarray) -> list[RunningPod]:
    """Pods of one job in the order their surplus is spent (see the module rules)."""
    if not mask.any():
        return sorted(pods, key=lambda p: (-p.index, p.task_position, p.name))
    return sorted(
        pods,
        key=lambda p: (-local_gain(request_of(p), need, mask), -p.index, p.task_position, p.name),
    )


def split_bundles(job: int, state: GangState, pods: Sequence[RunningPod],
                  request_of: Callable[[RunningPod], np.ndarray], held: np.ndarray) -> list[Bundle]:
    """SAFE then WHOLE bundle of ``pods`` (the job's local pods, already in victim order).

    ``held`` is the job's global footprint (requests of every pod it holds).
    """
    if not pods:
        return []
    zero = np.zeros_like(held)

    def make(kind: BundleKind, chosen: list[RunningPod]) -> Bundle:
        local = sum((request_of(p) for p in chosen), start=zero.copy())
        return Bundle(kind, job, chosen, local,
                      zero.copy() if kind == BundleKind.SAFE else held.copy())

    job_surplus = state.ready - state.min_available
    if job_surplus < 0:
        return [make(BundleKind.SAFE, list(pods))]  # already broken: nothing left to protect

    enforce_roles = state.min_available >= sum(state.role_min.values())
    role_surplus = ({r: state.role_ready.get(r,
            0) - m for r, m in state.role_min.items()} if enforce_roles else {})
    broken = {s for s, (_, ready) in state.subjobs.items() if not ready}
    group_surplus: dict[int, int] = {}
    for policy, ready in state.subjobs.values():
        group_surplus[policy] = group_surplus.get(policy, 0) + int(ready)
    for policy, minimum in state.min_subjobs.items():
        group_surplus[policy] = group_surplus.get(policy, 0) - minimum

    safe: list[RunningPod] = []
    whole: list[RunningPod] = []
    for pod in pods:
        role_ok = pod.task not in role_surplus or role_surplus[pod.task] > 0
        group_ok = True
        if state.subjobs:
            entry = state.subjobs.get(pod.subjob)
            group_ok = entry is not None and (pod.subjob in broken or group_surplus.get(entry[0],
                                                                                        0) > 0)
        if job_surplus > 0 and role_ok and group_ok:
            safe.append(pod)
            job_surplus -= 1
            if pod.task in role_surplus:
                role_surplus[pod.task] -= 1
            if state.subjobs and pod.subjob not in broken:
                broken.add(pod.subjob)  # its first eviction breaks the SubJob
                policy = state.subjobs[pod.subjob][0]
                group_surplus[policy] = group_surplus.get(policy, 0) - 1
        else:
            whole.append(pod)
    out = []
    if safe:
        out.append(make(BundleKind.SAFE, safe))
    if whole:
        out.append(make(BundleKind.WHOLE, whole))
    return out
