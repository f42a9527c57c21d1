"""Assignments from model solutions, and the finishing touches every returned plan gets.

Why apart: the exact and the coarse strategies and the orchestrator all turn solution vectors
into :class:`~toposolve.engines.assignment.Assignment` objects (node counts, evictions, the
per-group totals a repacking starts from) and copy or complete them; written once here.
"""

from __future__ import annotations

from ...problem import Problem
from ..assignment import Assignment
from .model import PlacementModel


def decoded(pm: PlacementModel, solution: list[int], counts: dict[int, dict[int, int]]) -> Assignment:
    """The plan of a solution: its node counts and, when evictions are modelled, its evictions."""
    out = as_assignment(counts)
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
            homes.setdefault(int(problem.group_job[g]), []).extend(cands.classes.home[used].tolist())
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
    )


def set_domains(problem: Problem, assignment: Assignment) -> None:
    """Report the lowest HyperNode holding each placed job's (and policy SubJob's) pods."""
    topo = problem.topology
    evicted = set(assignment.evicted)
    nodes_of_group: dict[int, list[int]] = {}
    for pod, n in problem.running_pods.items():
        if pod not in evicted:
            nodes_of_group.setdefault(problem.pod_group[pod], []).append(n)
    for g, per in assignment.counts.items():
        nodes_of_group.setdefault(g, []).extend(n for n, c in per.items() if c > 0)
    for j in assignment.placed_jobs(problem):
        cj = problem.jobs[j]
        assignment.job_domain[j] = topo.lca_of_nodes([n for g in cj.groups for n in nodes_of_group.get(g, [])])
        for s in cj.subjobs:
            if problem.subjobs[s].policy < 0:
                continue
            nodes = [n for g in problem.subjobs[s].groups for n in nodes_of_group.get(g, [])]
            if nodes:
                assignment.subjob_domain[s] = topo.lca_of_nodes(nodes)
