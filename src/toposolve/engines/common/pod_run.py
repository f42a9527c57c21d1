"""kube-scheduler's pod-by-pod run over a set of nodes (``docs/kube-fidelity.md``): each pending
pod in order is filtered (it fits and its predicates pass; with per-device sharing the device
plugin's fit) and bound to the node of the highest node score
(:mod:`toposolve.engines.common.node_scores`), its nominated node first when that fits. Shared
by the kube mirror's placements and the Kueue mirror's non-TAS placement.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from toposolve.core.problem import Problem
from toposolve.engines.common.capacity import Capacity, fit_in
from toposolve.engines.common.devices import DeviceCapacity, device_fit, pick_devices
from toposolve.engines.common.node_scores import NodeScoring


@dataclass
class Trial:
    """One placement's pod-by-pod run: the pods it scheduled, in order, as (group, node).

    ``stopped``: (pods scheduled, running included; pods not yet evaluated) when GangScheduling's
    PlacementFeasible ended the run. With ``record``, ``missed`` keeps the first pod that found no
    node: its group and the free capacity of ``nodes`` when it was evaluated (its fit error)."""

    domain: int | None
    nodes: np.ndarray
    pods: list[tuple[int, int]] = field(default_factory=list)
    record: bool = False
    missed: tuple[int, np.ndarray] | None = None
    stopped: tuple[int, int] | None = None


def run_groups(problem: Problem, cap: Capacity, node: NodeScoring, groups: list[int],
               minimum: int, trial: Trial, running: int) -> bool:
    """The pod-by-pod run of the pending pods of ``groups`` (in order) in ``trial``'s nodes;
    True when ``running`` + the pods scheduled reach ``minimum`` (GangScheduling's
    PlacementFeasible, which stops the run once the minimum is out of reach)."""
    nodes = trial.nodes
    free = cap.free[nodes].copy()
    room = cap.room if isinstance(cap, DeviceCapacity) else None
    devices = room.free[nodes].copy() if room is not None else None  # taken as the run goes
    alloc = problem.allocatable[nodes]
    remaining = sum(len(problem.group_pending[g]) for g in groups)
    at = {int(n): k for k, n in enumerate(nodes)} if problem.group_nominated else {}
    for g in groups:
        request = problem.group_request[g]
        pod = problem.score_request(g)
        fits = fit_in(free, request, problem.group_feasible[g, nodes])
        if room is not None:  # the device plugin admits a shared pod only where a device fits
            fits = np.minimum(fits, device_fit(devices, *room.shape(g), room.rule))
        used = alloc - free
        scores = node.scores(used, alloc, pod)
        nominated = problem.group_nominated.get(g, [])
        for i in range(len(problem.group_pending[g])):
            remaining -= 1
            best = int(np.where(fits > 0, scores, np.iinfo(np.int64).min).argmax()) \
                if len(fits) else 0
            mine = at.get(nominated[i], -1) if i < len(nominated) else -1
            if mine >= 0 and fits[mine] > 0:  # a nominated node that fits is taken unscored
                best = mine
            if len(fits) and fits[best] > 0:
                trial.pods.append((g, int(nodes[best])))
                free[best] -= request
                fits[best] -= 1  # also exact for devices: their fit counts these picks
                if room is not None:
                    take_devices(devices[best], *room.shape(g), room.rule)
                used[best] += request
                scores[best] = node.scores(used[best], alloc[best], pod)
                continue
            if trial.record and trial.missed is None:
                trial.missed = (g, free.copy())
            if running + len(trial.pods) + remaining < minimum:
                trial.stopped = (running + len(trial.pods), remaining)
                return False  # the gang's PlacementFeasible check stops the run
    return running + len(trial.pods) >= minimum


def take_devices(free: np.ndarray, milli: int, count: int, rule: str) -> None:
    """Take one pod's devices from ``free`` ([D], in place) by ``rule``; a pod fits (counted)."""
    picked = pick_devices(free, milli, count, rule) if count else ()
    assert picked is not None, "a counted pod must fit its devices"
    free[list(picked)] -= milli
