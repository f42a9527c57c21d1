"""ClusterQueue nominal quota as the Kueue mirror charges it (``docs/kueue-fidelity.md``): the
requests of a queue's admitted and running pods stay within its nominal quota; cohort borrowing
and lending are not modelled.
"""

from __future__ import annotations

import numpy as np

from toposolve.core.problem import Problem
from toposolve.engines.common.queues import capability_vector
from toposolve.engines.kueue.reasons import quota_message


class QuotaBook:
    """Nominal quota used per ClusterQueue (running pods count against it)."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.cap: dict[str, np.ndarray] = {}
        for q in problem.queues.values():
            vec = capability_vector(problem, q)
            if vec is not None:
                self.cap[q.name] = vec
        self.used: dict[str, np.ndarray] = {}
        for g, running in enumerate(problem.group_running):
            n = sum(running.values())
            if n:
                self._add(problem.jobs[int(problem.group_job[g])].queue,
                          n * problem.group_request[g])

    def _add(self, queue: str, amount: np.ndarray) -> None:
        self.used[queue] = self.used.get(queue, np.zeros_like(amount)) + amount

    def admits(self, queue: str, demand: np.ndarray) -> str | None:
        cap = self.cap.get(queue)
        if cap is None:
            return None
        after = self.used.get(queue, np.zeros_like(demand)) + demand
        over = [self.problem.resources[i] for i in np.flatnonzero((cap >= 0) & (after > cap))]
        if over:
            return f"ClusterQueue {queue!r} nominal quota exceeded for {', '.join(over)}"
        return None

    def demand(self, groups: list[int]) -> np.ndarray:
        """[R] what the pending pods of ``groups`` request together."""
        problem = self.problem
        return sum((len(problem.group_pending[g]) * problem.group_request[g] for g in groups),
                   np.zeros(len(problem.resources), dtype=np.int64))

    def charge(self, queue: str, demand: np.ndarray) -> None:
        self._add(queue, demand)

    def kueue_message(self, j: int, groups: list[int], has_leader: bool) -> str | None:
        """Kueue's words for job ``j`` (its pending pod ``groups``, a podset group's leader
        or not) refused by its queue's quota (None where toposolve cannot tell them:
        docs/kueue-fidelity.md "Reasons in Kueue's words")."""
        problem = self.problem
        cj = problem.jobs[j]
        queue = problem.queues.get(cj.queue)
        if (queue is None or len(queue.flavors) != 1 or has_leader
                or any(problem.group_running_count(g) for g in cj.groups)):
            return None
        podsets: dict[str, np.ndarray] = {}
        for g in sorted(groups):  # pod groups follow the tasks' (podsets') order
            total = len(problem.group_pending[g]) * problem.group_request[g]
            podsets[problem.group_task[g]] = podsets.get(problem.group_task[g], 0) + total
        used = self.used.get(cj.queue, np.zeros(len(problem.resources), dtype=np.int64))
        return quota_message(problem.resources, queue.flavors[0], list(podsets.items()),
                             self.cap[cj.queue], used)
