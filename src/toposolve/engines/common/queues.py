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


class QueueLedger:
    """What each queue's pods hold, against its capability, for engines whose scheduler has no
    Volcano queue of its own but whose plans must respect one (KAI: a queue's GPU limit; kube:
    none, so a job that could overrun it stays pending).

    Parameters
    ----------
    problem
        The compiled instance; its running pods start the ledger (:meth:`Problem.queue_usage`).
    """

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.used = problem.queue_usage()
        self.caps = {q.name: capability_items(problem, q) for q in problem.queues.values()
                     if q.capability}

    def demand(self, pods: list[int]) -> np.ndarray:
        """[R] the summed request of pods, one group index per pod."""
        out = np.zeros(len(self.problem.resources), dtype=float)
        for g in pods:
            out += self.problem.group_request[g]
        return out

    def overrun(self, j: int, pods: list[int]) -> str | None:
        """Why job ``j``'s queue cannot take ``pods`` (one group index per pod), or None.

        Returns
        -------
        str or None
            The first capped resource, in the queue's order, that the pods would take past the
            capability.
        """
        queue = self.problem.jobs[j].queue
        items = self.caps.get(queue)
        if not items or not pods:
            return None
        used = self.used.get(queue, np.zeros(len(self.problem.resources)))
        total = used + self.demand(pods)
        for r, cap in items:
            if total[r] > cap:
                return (f"queue {queue!r} capability: its pods would request "
                        f"{int(total[r])}m of {self.problem.resources[r]}, capability is {cap}m")
        return None

    def take(self, j: int, pods: list[int]) -> None:
        """Count ``pods`` (one group index per pod) of job ``j`` against its queue."""
        queue = self.problem.jobs[j].queue
        if queue in self.caps and pods:
            amount = self.demand(pods)
            self.used[queue] = self.used[queue] + amount if queue in self.used else amount
