"""Queue capabilities as the engines read them: per resource index, in the queue's own order."""

from __future__ import annotations

import numpy as np

from toposolve.core.instance import Queue
from toposolve.core.problem import Problem


def capability_items(problem: Problem, queue: Queue) -> list[tuple[int, int]]:
    """The queue's capability as (resource index, amount) pairs.

    Parameters
    ----------
    problem
        The compiled instance (its resource index).
    queue
        A queue of the instance.

    Returns
    -------
    list[tuple[int, int]]
        One pair per capped resource the problem knows, in the order the queue lists them (CP-SAT
        adds its constraints in this order); empty when the queue caps nothing.
    """
    index = problem.resource_index
    return [(index[r], amount) for r, amount in (queue.capability or {}).items() if r in index]


def capability_vector(problem: Problem, queue: Queue) -> np.ndarray | None:
    """[R] the queue's capability per resource, -1 where uncapped; None without a capability."""
    if not queue.capability:
        return None
    vec = np.full(len(problem.resources), -1, dtype=np.int64)
    for r, amount in capability_items(problem, queue):
        vec[r] = amount
    return vec
