"""Pending reasons of jobs whose constraint names a level their tree lacks, or that their
scheduler never places.

Such a constraint (``NetworkTopology.missing_level`` / ``never_placed``) holds on no node: the
compiled problem gives its groups no candidate (``Problem.unplaceable_jobs`` /
``never_placed_jobs``), so every engine leaves the job pending; this module words why, the same
for every engine (``docs/kueue-fidelity.md``).
"""

from __future__ import annotations

from toposolve.core.assignment import Assignment
from toposolve.core.problem import Problem


def missing_level_reason(level: str) -> str:
    """toposolve's pending reason of a job constrained at ``level``, which its tree lacks."""
    return (f"its topology constraint names level {level!r}, which its topology does not have: "
            "no node satisfies it")


def never_placed_reason(why: str) -> str:
    """toposolve's pending reason of a job whose request its scheduler never places (``why``:
    the scheduler's own reason)."""
    return f"its topology request is one its scheduler never places: {why}"


def explain_unplaceable(problem: Problem, assignment: Assignment,
                        scheduler_words: bool = False) -> Assignment:
    """``assignment`` with :func:`missing_level_reason` as the reason of each job of
    :attr:`Problem.unplaceable_jobs`, :func:`never_placed_reason` of each of
    :attr:`Problem.never_placed_jobs`, that has pending pods.

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
    reasons = {j: missing_level_reason(level) for j, level in problem.unplaceable_jobs.items()}
    reasons |= {j: never_placed_reason(why) for j, why in problem.never_placed_jobs.items()}
    for j, reason in reasons.items():
        if problem.has_pending(j):
            assignment.reasons[j] = reason
            if not scheduler_words:
                assignment.scheduler_reasons.pop(j, None)
    return assignment
