"""Gang readiness and ordering, as Volcano's gang and priority plugins define them.

* ``JobReady``: ready pods (running + placed) ≥ minMember; each task name has ≥ its minAvailable
  (skipped when minMember < Σ per-task minimums, as Volcano's ``CheckTaskReady`` does); each
  subGroupPolicy with ``minSubGroups`` has that many ready SubJobs.
* ``SubJobReady``: for a job without subGroupPolicy it *is* JobReady; otherwise the SubJob has
  ≥ subGroupSize ready pods.
* SubJob order: SubJobs still required for ``minSubGroups`` first, then higher priority, then not
  ready before ready, then smaller MatchIndex, then SubJob id.
* Job order in a queue: higher priority, then not ready before ready, then older (creation
  index), then ``namespace/name``. Queue order: higher ``Queue.priority``, then smaller share
  (max over deserved resources of allocated / deserved), then name.
"""

from __future__ import annotations

from ...problem import Problem
from .state import ClusterState


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
            name = self.problem.group_task[g]
            counts[name] = counts.get(name, 0) + self.state.group_count(g)
        return counts

    def job_count(self, j: int) -> int:
        return sum(self.state.group_count(g) for g in self.problem.jobs[j].groups)

    def subjob_ready(self, s: int) -> bool:
        sj = self.problem.subjobs[s]
        if sj.policy < 0 and not self.problem.instance.jobs[sj.job].subgroup_policies:
            return self.job_ready(sj.job)
        return self.subjob_count(s) >= sj.min_available

    def job_ready(self, j: int) -> bool:
        cj = self.problem.jobs[j]
        if self.job_count(j) < cj.min_available:
            return False
        if cj.min_per_task and cj.min_available >= sum(cj.min_per_task.values()):
            counts = self.task_counts(j)
            if any(counts.get(t, 0) < m for t, m in cj.min_per_task.items()):
                return False
        for policy, minimum in cj.min_subjobs.items():
            ready = sum(
                1
                for s in cj.subjobs
                if self.problem.subjobs[s].policy == policy
                and self.subjob_count(s) >= self.problem.subjobs[s].min_available
            )
            if ready < minimum:
                return False
        return True

    def job_valid(self, j: int) -> str | None:
        """Why the gang can never be ready (Volcano's ``JobValid``), or ``None``."""
        cj = self.problem.jobs[j]
        total = sum(
            len(self.problem.group_pending[g]) + self.problem.group_running_count(g)
            for g in cj.groups
        )
        if total < cj.min_available:
            return f"gang invalid: {total} pods exist but minAvailable is {cj.min_available}"
        for policy, minimum in cj.min_subjobs.items():
            have = sum(1 for s in cj.subjobs if self.problem.subjobs[s].policy == policy)
            if have < minimum:
                return f"gang invalid: {have} SubJobs exist but minSubGroups is {minimum}"
        return None

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
            not_ready = sorted((s for s in members if s not in ready and s in pending), key=base_key)
            required.update(not_ready[: max(0, minimum - len(ready))])
        return sorted(pending, key=lambda s: (s not in required, *base_key(s)))
