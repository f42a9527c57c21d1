"""A warm start for the ``comm`` stage: the same pods as a plan, layout jobs on the fewest leaves.

The plan's other placements stay. Each plain layout job it places (one pending group, no running
pods, no hard topology limit, no SubJob policy or GangNode) is re-placed, largest first, into
the level-1 cell (the domain above the leaves) whose fullest-first leaves hold it in the fewest
leaves — ties: the fewer idle slots left there (the tightest fit), then the lower cell — and
within it leaf by leaf, most room first, nodes in index order; without such a cell, over the
whole cluster the same way. None when a job no longer fits. CP-SAT then starts from whichever of
this and the plan the profile ranks higher (:func:`.warmstart.choose_start`).
"""

from __future__ import annotations

import numpy as np

from toposolve.core.assignment import Assignment
from toposolve.core.problem import Problem
from toposolve.engines.common.capacity import fit_in
from toposolve.policy.comm_stage import comm_jobs, level_tiers, node_cells

NO_FIT = 1 << 30  # leaves "needed" where the room is too small


def _movable(problem: Problem, j: int, plan: Assignment) -> int | None:
    """The one group of layout job ``j`` the plan places and the greedy may move, else None."""
    cj = problem.jobs[j]
    if (len(cj.groups) != 1 or (cj.limit is not None and cj.limit.hard) or cj.gang_nodes
            or any(problem.subjobs[s].policy >= 0 for s in cj.subjobs)):
        return None
    g = cj.groups[0]
    if problem.group_running_count(g) or not any(plan.counts.get(g, {}).values()):
        return None
    return g


def _leaves_needed(room: np.ndarray, pods: int) -> int:
    """Fullest-first leaves of ``room`` (pods per leaf) that hold ``pods``; a large number
    when they cannot."""
    covered = np.cumsum(np.sort(room)[::-1])
    if not covered.size or covered[-1] < pods:
        return NO_FIT
    return int(np.searchsorted(covered, pods)) + 1


def _place(fits: np.ndarray, leaf: np.ndarray, spine: np.ndarray, pods: int) -> np.ndarray | None:
    """[N] pods per node for one job (see the module docstring), or None."""
    best = None
    for s in sorted(set(spine[fits > 0].tolist())):
        inside = (spine == s) & (fits > 0)
        room = np.bincount(np.unique(leaf[inside], return_inverse=True)[1],
                           weights=fits[inside]).astype(np.int64)
        key = (_leaves_needed(room, pods), int(room.sum()) - pods, s)
        if key[0] < NO_FIT and (best is None or key < best[0]):
            best = (key, inside)
    chosen = best[1] if best is not None else fits > 0
    if int(fits[chosen].sum()) < pods:
        return None
    leaves = sorted(set(leaf[chosen].tolist()),
                    key=lambda c: (-int(fits[chosen & (leaf == c)].sum()), c))
    out = np.zeros(len(fits), dtype=np.int64)
    for c in leaves:
        for n in np.flatnonzero(chosen & (leaf == c)).tolist():
            take = min(int(fits[n]), pods)
            out[n], pods = take, pods - take
            if pods == 0:
                return out
    return None  # pragma: no cover - the room was counted above


def fewest_leaves_start(problem: Problem, plan: Assignment) -> Assignment | None:
    """``plan`` with its plain layout jobs re-placed on the fewest leaves (module docstring)."""
    moved = {j: g for j in comm_jobs(problem) if (g := _movable(problem, j, plan)) is not None}
    if not moved:
        return None
    out = Assignment()
    for g, per in plan.counts.items():
        if g not in moved.values():
            for n, c in per.items():
                out.add(g, n, c)
    idle = np.maximum(problem.allocatable - problem.used - out.usage(problem), 0)
    cells = node_cells(problem.topology, level_tiers(problem.topology))
    if cells.shape[1] == 0:
        return None
    leaf = cells[:, 0]
    spine = cells[:, 1] if cells.shape[1] > 1 else np.zeros_like(leaf)
    size = {g: sum(c for c in plan.counts[g].values() if c > 0) for g in moved.values()}
    for j in sorted(moved, key=lambda j: (-size[moved[j]], j)):
        g = moved[j]
        fits = fit_in(idle, problem.group_request[g], problem.group_feasible[g])
        counts = _place(np.minimum(fits, size[g]), leaf, spine, size[g])
        if counts is None:
            return None
        for n in np.flatnonzero(counts).tolist():
            out.add(g, n, int(counts[n]))
            idle[n] -= counts[n] * problem.group_request[g]
    return out
