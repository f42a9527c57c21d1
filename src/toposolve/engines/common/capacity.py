"""Free node capacity shared by the Kueue and KAI mirrors: fit counts and a rollback point.

``free`` starts as allocatable minus the running pods' requests; engines subtract what they
place. :func:`fit_counts` is the number of pods of one request each node still holds (Kueue's
``CountIn``, KAI's node accommodation), 0 where the pods' predicates fail.
"""

from __future__ import annotations

import numpy as np

from toposolve.core.limits import UNLIMITED
from toposolve.core.problem import Problem


class Capacity:
    """Free resources per node ([N, R] int64 milli-units)."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.free = problem.allocatable - problem.used

    def fit_counts(self, request: np.ndarray, feasible: np.ndarray | None = None) -> np.ndarray:
        """[N] pods of ``request`` each node holds (0 where not ``feasible``)."""
        return fit_in(self.free, request, feasible)

    def take(self, group: int, node: int, count: int) -> None:
        self.free[node] -= count * self.problem.group_request[group]

    def snapshot(self) -> np.ndarray:
        return self.free.copy()

    def restore(self, saved: np.ndarray) -> None:
        self.free = saved


def fits_per_resource(free: np.ndarray, request: np.ndarray, resources: np.ndarray | list[int]
                      ) -> np.ndarray:
    """[rows, len(resources)] how many pods of ``request`` each resource alone lets into each row
    of ``free`` (negative entries count as 0); :func:`fit_in` is their minimum. ``resources``:
    indices or a mask of requested resources only."""
    return np.maximum(free[:, resources], 0) // request[resources]


def fit_in(free: np.ndarray, request: np.ndarray, feasible: np.ndarray | None = None) -> np.ndarray:
    """How many pods of ``request`` fit in each row of ``free``: the one fit count of the engines.

    Parameters
    ----------
    free
        [rows, R] free resources (negative entries count as 0).
    request
        [R] one pod's request; only the resources it requests are compared.
    feasible
        [rows] whether the pod's predicates pass (0 pods where not); None: everywhere.

    Returns
    -------
    numpy.ndarray
        [rows] int64 pod counts, at most :data:`~toposolve.core.limits.UNLIMITED` (a request of
        nothing fits that many).
    """
    used = request > 0
    if not used.any():
        counts = np.full(free.shape[0], UNLIMITED, dtype=np.int64)
    else:
        fits = np.min(fits_per_resource(free, request, used), axis=1)
        counts = np.minimum(fits, UNLIMITED).astype(np.int64)
    if feasible is not None:
        counts = np.where(feasible, counts, 0)
    return counts
