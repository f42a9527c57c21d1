"""Gang readiness and ordering over the live state, as Volcano's gang and priority plugins define
them.

* ``JobReady``, ``SubJobReady``, ``JobValid``: the shared rules of :mod:`toposolve.policy.rules`,
applied
  to the pods holding a node now (running and placed so far).
* SubJob order: SubJobs still required for ``minSubGroups`` first, then higher priority, then not
  ready before ready, then smaller MatchIndex, then SubJob id.
* Job order in a queue: higher priority, then not ready before ready, then older (creation
  index), then ``namespace/name``. Queue order: higher ``Queue.priority``, then smaller share
  (max over deserved resources of allocated / deserved), then name.
"""

from __future__ import annotations

from toposolve.core.problem import Problem
from toposolve.engines.volcano.state import ClusterState
from toposolve.policy.rules import gang_invalid, gang_ready, subjob_ready


class Gang:
    """Readiness queries over the live state."""

    def __init__(self, problem: Problem, state: ClusterState) -> None:
        self.problem = problem
        self.state = state

    def subjob_count(self, s: int) -> int:
        return sum(self.state.group_count(g) for g in self.problem.subjobs[s].groups)

    def task_counts(self, j: int) -> dict[str, int]:
        counts: dict[str, int] = {}
        for g in self.problem.jobs[j].groups:
            name = self.problem.group_role[g]
            counts[name] = counts.get(name, 0) + self.state.group_count(g)
        return counts

    def job_count(self, j: int) -> int:
        return sum(self.state.group_count(g) for g in self.problem.jobs[j].groups)

    def _holding(self, groups: list[int]) -> dict[int, int]:
        """Pods of ``groups`` holding a node now (running and placed)."""
        return {g: self.state.group_count(g) for g in groups}

    def subjob_ready(self, s: int) -> bool:
        sj = self.problem.subjobs[s]
        return subjob_ready(self.problem, s, self._holding(self.problem.jobs[sj.job].groups))

    def job_ready(self, j: int) -> bool:
        return gang_ready(self.problem, j, self._holding(self.problem.jobs[j].groups))

    def job_valid(self, j: int) -> str | None:
        """Why the gang can never be ready (Volcano's ``JobValid``), or ``None``."""
        return gang_invalid(self.problem, j)

    def pending_in(self, s: int) -> int:
        return sum(self.pending_of_group(g) for g in self.problem.subjobs[s].groups)

    def pending_of_group(self, g: int) -> int:
        running = self.problem.group_running_count(g)
        return len(self.problem.group_pending[g]) - (self.state.group_count(g) - running)

    def subjob_order(self, j: int) -> list[int]:
        """Pending SubJobs of job ``j`` in Volcano's worksheet order."""
        problem = self.problem
        cj = problem.jobs[j]
        pending = [s for s in cj.subjobs if self.pending_in(s) > 0]

        def base_key(s: int) -> tuple:
            sj = problem.subjobs[s]
            ready = self.subjob_count(s) >= sj.min_available
            return (-sj.priority, ready, sj.match_index, sj.id)

        required: set[int] = set()
        for policy, minimum in cj.min_subjobs.items():
            members = [s for s in cj.subjobs if problem.subjobs[s].policy == policy]
            ready = [s for s in members if self.subjob_count(s) >= problem.subjobs[s].min_available]
            not_ready = sorted((s for s in members if s not in ready
                                and s in pending), key=base_key)
            required.update(not_ready[: max(0, minimum - len(ready))])
        return sorted(pending, key=lambda s: (s not in required, *base_key(s)))
