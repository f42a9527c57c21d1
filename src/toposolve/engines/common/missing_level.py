"""Pending reasons of jobs whose constraint names a level their tree lacks, or that their
scheduler never places.

Such a constraint (``NetworkTopology.missing_level`` / ``never_placed``) holds on no node: the
compiled problem gives its groups no candidate (``Problem.refused_jobs``), so every engine leaves
the job pending; this module words why, the same for every engine, and is the one place that
sets that reason (``docs/kueue-fidelity.md``).
"""

from __future__ import annotations

from toposolve.core.assignment import Assignment
from toposolve.core.problem import Problem
from toposolve.core.refusal import MISSING_LEVEL, Refusal


def missing_level_reason(level: str) -> str:
    """toposolve's pending reason of a job constrained at ``level``, which its tree lacks."""
    return (f"its topology constraint names level {level!r}, which its topology does not have: "
            "no node satisfies it")


def never_placed_reason(why: str) -> str:
    """toposolve's pending reason of a job whose request its scheduler never places (``why``:
    the scheduler's own reason)."""
    return f"its topology request is one its scheduler never places: {why}"


def refusal_reason(refusal: Refusal) -> str:
    """toposolve's pending reason of a job whose constraint ``refusal`` says no node satisfies:
    :func:`missing_level_reason` or :func:`never_placed_reason`."""
    if refusal.kind == MISSING_LEVEL:
        return missing_level_reason(refusal.why)
    return never_placed_reason(refusal.why)


def explain_unplaceable(problem: Problem, assignment: Assignment,
                        scheduler_words: bool = False) -> Assignment:
    """``assignment`` with :func:`refusal_reason` as the reason of each job of
    :attr:`Problem.refused_jobs` that has pending pods.

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
    for j, refusal in problem.refused_jobs.items():
        if problem.has_pending(j):
            assignment.reasons[j] = refusal_reason(refusal)
            if not scheduler_words:
                assignment.scheduler_reasons.pop(j, None)
    return assignment
