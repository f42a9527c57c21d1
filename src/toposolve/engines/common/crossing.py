"""Jobs constrained in a crossing Topology's tree, for the engines that do not mirror one.

The KAI and Kueue mirrors measure a constraint in its own tree (``Limit.tree``, a Topology that
crosses the main tree over the same nodes); the other mirrors leave such jobs pending with one
line saying so, never placing them by the main tree's domains (``docs/label-topology.md``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from toposolve.core.assignment import Assignment
from toposolve.core.problem import Problem


def crossing_reason(tree: str, engine: str) -> str:
    """The pending reason of a job constrained in constraint tree ``tree``."""
    return (f"constrained in Topology {tree!r}, which crosses the cluster's main tree over the "
            f"same nodes: the {engine} engine does not mirror crossing Topologies "
            "(kai and kueue do)")


def without_crossing(problem: Problem) -> Problem:
    """``problem`` with no pending pod of its crossing jobs (the same object when it has none):
    their running pods still hold their nodes.

    Parameters
    ----------
    problem
        The compiled instance.

    Returns
    -------
    Problem
        A shallow copy whose ``group_pending`` is empty for the groups of
        :attr:`Problem.crossing_jobs`.
    """
    held = problem.crossing_jobs
    if not held:
        return problem
    job_of = problem.group_job.tolist()
    pending = [[] if job_of[g] in held else pods for g, pods in enumerate(problem.group_pending)]
    return dataclasses.replace(problem, group_pending=pending)


def hold_back_crossing(problem: Problem, engine: str,
                       run: Callable[[Problem], Assignment]) -> Assignment:
    """``run`` on :func:`without_crossing` of ``problem``; each crossing job with pending pods
    gets :func:`crossing_reason` as its reason.

    Parameters
    ----------
    problem
        The compiled instance.
    engine
        The engine's name, for the reason.
    run
        The engine: compiled problem → assignment (of the same groups and nodes).

    Returns
    -------
    Assignment
        ``run``'s assignment with the crossing jobs' reasons.
    """
    assignment = run(without_crossing(problem))
    for j, tree in problem.crossing_jobs.items():
        if problem.has_pending(j):
            assignment.reasons[j] = crossing_reason(tree, engine)
            assignment.scheduler_reasons.pop(j, None)
    return assignment
