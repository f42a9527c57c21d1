"""Assignments from model solutions, and the finishing touches every returned plan gets.

Why apart: the exact and the coarse strategies and the orchestrator all turn solution vectors
into :class:`~toposolve.core.assignment.Assignment` objects (node counts, evictions, the
per-group totals a repacking starts from) and copy or complete them; written once here.
"""

from __future__ import annotations

from toposolve.core.assignment import Assignment
from toposolve.core.footprint import Footprint
from toposolve.core.problem import Problem
from toposolve.engines.cpsat.model.model import PlacementModel


def decoded(pm: PlacementModel, solution: list[int],
            counts: dict[int, dict[int, int]]) -> Assignment:
    """The plan of a solution: its node counts and, when evictions are modelled, its evictions."""
    out = as_assignment(counts)
    if pm.devices is not None:  # per-device sharing: the devices each new pod takes
        for g, nodes in pm.devices.picks(solution, counts)[0].items():
            for n, picks in nodes.items():
                out.add_devices(g, n, picks)
    if pm.evict is not None:
        out.evicted = pm.evict.evicted(solution)
    return out


def coarse_plan(pm: PlacementModel, solution: list[int]) -> tuple[Assignment, dict[int, int]]:
    """Per-group totals of a coarse solution (node ignored: repack only reads totals) and, per
    job, the lowest HyperNode holding the classes it uses (the repacking tries there first)."""
    problem, cands = pm.problem, pm.cands
    totals = Assignment()
    homes: dict[int, list[int]] = {}
    for g, row in pm.counts(solution).items():
        if row.sum():
            totals.add(g, 0, int(row.sum()))
            used = cands.allowed[g][row > 0]
            homes.setdefault(int(problem.group_job[g]),
                             []).extend(cands.classes.home[used].tolist())
    topo = problem.topology
    guide = {}
    for j, hs in homes.items():
        h = hs[0]
        for other in hs[1:]:
            h = topo.lca(h, other)
        guide[j] = h
    return totals, guide


def as_assignment(counts: dict[int, dict[int, int]]) -> Assignment:
    out = Assignment()
    for g, per in counts.items():
        for n, c in per.items():
            out.add(g, n, c)
    return out


def copy_assignment(a: Assignment) -> Assignment:
    return Assignment(
        counts={g: dict(per) for g, per in a.counts.items()},
        job_domain=dict(a.job_domain), subjob_domain=dict(a.subjob_domain),
        reasons=dict(a.reasons), evicted=list(a.evicted), nominated_jobs=set(a.nominated_jobs),
        devices={g: {n: list(p) for n, p in per.items()} for g, per in a.devices.items()},
    )


def set_domains(problem: Problem, assignment: Assignment) -> None:
    """Report the domain each placed job's (and policy SubJob's) pods occupy
    (:mod:`toposolve.core.footprint`)."""
    placed = assignment.placed_jobs(problem)
    footprint = Footprint.of_jobs(problem, assignment, placed)
    for j in placed:
        cj = problem.jobs[j]
        h = footprint.domain(cj.groups)
        if h is not None:
            assignment.job_domain[j] = h
        for s in cj.subjobs:
            h = (
                footprint.domain(problem.subjobs[s].groups)
                if problem.subjobs[s].policy >= 0
                else None
            )
            if h is not None:
                assignment.subjob_domain[s] = h
