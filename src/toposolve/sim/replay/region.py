"""Where a replay's defrag call may look: the candidate domains of its targets (``region=K``).

A target with a job-wide hard tier must land in one domain of that tier (the highest HyperNodes
of tier ≤ it, as ``toposolve.defrag`` reads a limit); one without may spread, so each node is a
domain. A domain is a **candidate** when, emptied of every job that may move, its usable nodes
would hold the target's summed requests. With no candidate no move admits the target and the
call is skipped. The defrag instance then lists as themselves only the movable jobs with a pod in
the K candidates closest to holding the target already (``docs/defrag.md``, "Over time").
"""

from __future__ import annotations

import numpy as np

from toposolve.core.problem import Problem
from toposolve.engines.common.capacity import fit_in
from toposolve.engines.defrag.common import domain_of_nodes


def target_domains(problem: Problem, j: int) -> tuple[np.ndarray, bool]:
    """[N] each node's domain for job ``j`` — at its job-wide hard tier, else the node itself —
    and whether the domains are nodes."""
    limit = problem.jobs[j].limit
    if limit is not None and limit.hard and limit.tier < problem.topology.max_tier:
        return domain_of_nodes(problem, limit.tier), False
    return np.arange(problem.n_nodes), True


def candidate_region(problem: Problem, j: int, request: np.ndarray, idle: np.ndarray,
                     emptied: np.ndarray, keep: int | None) -> np.ndarray | None:
    """[N] the nodes of the kept candidate domains of job ``j``, or None when none can hold it.

    Parameters
    ----------
    problem
        The cycle's problem (``j`` is one of its jobs).
    request
        [R] the job's summed requests.
    idle, emptied
        [N, R] room now, and room with every movable job gone.
    keep
        How many candidate domains to keep, those with the smallest shortfall first (the
        largest share of ``request`` missing from their idle room; ties: more idle room, then
        domain order); None: all. With node domains (no job-wide tier) only nodes where one of
        its pods fits emptied count, taken in that order until they hold ``request`` emptied,
        then ``keep`` more.
    """
    groups = list(problem.jobs[j].groups)
    usable = problem.group_feasible[groups].any(axis=0)
    dom, by_node = target_domains(problem, j)
    if by_node:
        usable &= np.any([fit_in(emptied, problem.group_request[g]) > 0 for g in groups], axis=0)
    scale = np.maximum(request, 1).astype(float)
    rows = []
    for d in np.unique(dom[usable & (dom >= 0)]).tolist():
        nodes = usable & (dom == d)
        room, now = emptied[nodes].sum(axis=0), idle[nodes].sum(axis=0)
        short = float((np.maximum(request - now, 0) / scale).max())
        rows.append((short, -float((now / scale).min()), d, room))
    rows.sort(key=lambda row: row[:3])
    if by_node:
        return _enough_nodes(rows, request, dom, keep)
    kept = [d for *_, d, room in rows if (room >= request).all()]
    if not kept:
        return None
    return np.isin(dom, kept if keep is None else kept[:keep])


def _enough_nodes(rows: list, request: np.ndarray, dom: np.ndarray,
                  keep: int | None) -> np.ndarray | None:
    """Nodes in ``rows`` order until their emptied room holds ``request``, then ``keep`` more
    (None: all)."""
    total = np.zeros_like(request)
    taken: list[int] = []
    extra = None
    for *_, d, room in rows:
        if extra is not None:
            if keep is not None and extra >= keep:
                break
            extra += 1
        taken.append(d)
        total = total + room
        if extra is None and (total >= request).all():
            extra = 0
    if extra is None:
        return None
    return np.isin(dom, taken)


def regions(problem: Problem, targets: list, request: dict[int, np.ndarray], idle: np.ndarray,
            emptied: np.ndarray, keep: int, limit: int) -> tuple[list, np.ndarray]:
    """The first ``limit`` of ``targets`` (replay runs, queue order) that have a candidate
    domain, and the union of their regions (:func:`candidate_region`; ``keep`` 0: every
    candidate). A target with none is left out: no move admits it."""
    index = {cj.key: cj.index for cj in problem.jobs}
    kept, union = [], np.zeros(problem.n_nodes, dtype=bool)
    for run in targets:
        region = candidate_region(problem, index[run.key], request[run.index], idle, emptied,
                                  keep or None)
        if region is not None:
            kept.append(run)
            union |= region
            if len(kept) == limit:
                break
    return kept, union
