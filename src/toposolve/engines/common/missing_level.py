"""Pending reasons of jobs whose constraint names a level their tree lacks.

Such a constraint (``NetworkTopology.missing_level``) holds on no node: the compiled problem gives
its groups no candidate (``Problem.unplaceable_jobs``), so every engine
leaves the job pending; this module words why, the same for every engine
(``docs/kueue-fidelity.md``).
"""

from __future__ import annotations

from toposolve.core.assignment import Assignment
from toposolve.core.problem import Problem


def missing_level_reason(level: str) -> str:
    """toposolve's pending reason of a job constrained at ``level``, which its tree lacks."""
    return (f"its topology constraint names level {level!r}, which its topology does not have: "
            "no node satisfies it")


def explain_unplaceable(problem: Problem, assignment: Assignment,
                        scheduler_words: bool = False) -> Assignment:
    """``assignment`` with :func:`missing_level_reason` as the reason of each job of
    :attr:`Problem.unplaceable_jobs` that has pending pods.

    Parameters
    ----------
    problem
        The compiled instance.
    assignment
        An engine's assignment of ``problem`` (changed in place).
    scheduler_words
        Whether the engine words such a job as its scheduler does (``scheduler_reason`` kept);
        else its scheduler reason, a wording of "no candidate node", is dropped.

    Returns
    -------
    Assignment
        ``assignment`` itself.
    """
    for j, level in problem.unplaceable_jobs.items():
        if problem.has_pending(j):
            assignment.reasons[j] = missing_level_reason(level)
            if not scheduler_words:
                assignment.scheduler_reasons.pop(j, None)
    return assignment
