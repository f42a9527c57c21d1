"""The order in which a mirror admits jobs (Kueue's and KAI's queue heads, flattened)."""

from __future__ import annotations

from toposolve.core.problem import Problem


def admission_order(problem: Problem) -> list[int]:
    """Jobs with pending pods, in admission order.

    Parameters
    ----------
    problem
        The compiled instance.

    Returns
    -------
    list[int]
        Job indices by priority descending, then creation order, then index (the tie-break).
    """
    pending = [cj.index for cj in problem.jobs if any(problem.group_pending[g] for g in cj.groups)]
    return sorted(pending,
                  key=lambda j: (-problem.jobs[j].priority, problem.jobs[j].creation_index, j))
