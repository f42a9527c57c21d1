"""Volcano's flat allocate loop for a job of several tasks, replayed pod by pod for its words.

``allocateResourcesForTasks`` takes the job's pods in task order; when no node takes one it goes
on while ``NeedContinueAllocating`` allows (never when ``minAvailable`` is the job's pod count;
with per-task minimums by its two rules; always without them), skips a later pod of a role
that failed (``volcano.sh/task-spec``, a cached fit error) and tries a pod without the label
again; it stops once the job's count is reached (``SubJobReady``), and the task minimums decide
(``JobReady``). toposolve's flat fill places only the pods it planned, so the loop is replayed
from the state before the attempt, only to word the PodGroup condition. Sources and the commit
read: docs/volcano-fidelity.md "Reasons in Volcano's words".
"""

from __future__ import annotations

from collections import Counter
from typing import Protocol

import numpy as np

from toposolve.core.instance import TASK_SPEC_LABEL
from toposolve.core.problem import CompiledJob
from toposolve.engines.volcano.fill import place_normal_pods
from toposolve.engines.volcano.fit_errors import JobTasks, gang_condition, nodes_unavailable
from toposolve.engines.volcano.reasons import EngineView, node_fit_reasons
from toposolve.policy.profiles import PluginArgs
from toposolve.policy.rules import gang_ready


class ReplayView(EngineView, Protocol):
    """What :func:`replayed_condition` reads of the allocate action besides :class:`EngineView`."""

    args: PluginArgs

    def task_order(self, groups: list[int]) -> list[int]: ...


def replayed_condition(engine: ReplayView, j: int) -> str | None:
    """Volcano's PodGroup condition for job ``j`` (flat path, several tasks) after its gang
    failed, replayed on ``engine.state`` as it was before the attempt; the caller undoes the
    replay's placements.

    Returns None where Volcano would place the job (toposolve's fill, which stops at the pods
    it planned, differs there), for per-task minimums over pods whose ``volcano.sh/task-spec``
    is not their task's name (Volcano counts them by that label), and where the first failed
    pod's nodes refuse it for what toposolve does not word. The origin is the first pod that
    failed; Volcano takes the first failed task in Go's map order (random when several failed).
    """
    problem, state = engine.problem, engine.state
    cj = problem.jobs[j]
    groups = engine.task_order(cj.groups)
    roles = {g: _roles(engine, g) for g in groups}
    if any(m > 0 for m in cj.min_per_task.values()) and any(
            role != problem.group_task[g] for g in groups for role in roles[g].values()):
        return None
    total = sum(problem.group_size(g) for g in groups)
    held: Counter[str] = Counter()  # role -> pods running or allocated
    pending: Counter[str] = Counter()  # role -> pods not allocated
    for g in groups:
        held[problem.group_task[g]] += problem.group_running_count(g)
        pending.update(roles[g].values())
    allocated, failed, origin = 0, set(), None
    for g in groups:
        needed = cj.min_available - engine.gang.job_count(j)
        tried = [pod for pod in problem.group_pending[g]
                 if not (roles[g][pod] and roles[g][pod] in failed)]
        want = min(len(tried), needed)
        room = state.queue_room(g)  # pods past it are skipped without an error
        placed, idle = _take(engine, g, min(want, room), last=g == groups[-1])
        allocated += placed
        for pod in tried[:placed]:
            held[roles[g][pod]] += 1
            pending[roles[g][pod]] -= 1
        if placed == needed:  # SubJobReady ends the loop; JobReady (task minimums) decides
            holding = {x: state.group_count(x) for x in cj.groups}
            holding[g] += placed if g == groups[-1] else 0  # counted, not placed
            if gang_ready(problem, j, holding):
                return None
            break
        if placed == want or placed >= room:
            continue
        if origin is None:
            reasons = node_fit_reasons(problem, idle, g)
            if reasons is None:
                return None
            origin = (tried[placed].split("/", 1)[-1],
                      nodes_unavailable([r for rs in reasons for r in rs], nodes=len(reasons)))
        # the group's later pods fail alike (a pod of a failed role is skipped with the cached
        # error); each failure asks NeedContinueAllocating, whose answer only narrows as roles fail
        failed.update(roles[g][pod] for pod in tried[placed:])
        if not _goes_on(cj, total, held, pending, failed, engine.gang.job_count(j)):
            break
    statuses = Counter({"Pending": sum(len(problem.group_pending[g]) for g in groups),
                        "Running": sum(problem.group_running_count(g) for g in groups)})
    return gang_condition(JobTasks(+statuses, cj.min_available, allocated, origin))


def _goes_on(cj: CompiledJob, total: int, held: Counter[str], pending: Counter[str],
             failed: set[str], ready: int) -> bool:
    """``NeedContinueAllocating`` once pods of the ``failed`` roles found no node: never when
    ``minAvailable`` is the job's pod count; below the per-task minimums' sum, while the ready
    pods and the pending ones of roles that have not failed can still reach it; else while every
    failed role holds its minimum."""
    if cj.min_available == total:
        return False
    minimums = cj.min_per_task
    if cj.min_available < sum(minimums.values()):
        left = sum(n for role, n in pending.items() if role not in failed)
        return ready + left >= cj.min_available
    return all(held[role] >= minimums.get(role, 0) for role in failed)


def _take(engine: ReplayView, g: int, count: int, last: bool) -> tuple[int, np.ndarray]:
    """Up to ``count`` pods of group ``g`` placed one by one (the fading node score); the pods
    placed and the nodes' idle capacity after them. For the last group no later pod depends on
    which nodes they take, and pods of one shape fill exactly ``min(count, Σ fit)``: counted,
    not placed (every node then filled to what it takes)."""
    problem, state = engine.problem, engine.state
    every = np.arange(problem.n_nodes)
    if not last:
        return place_normal_pods(state, problem, engine.args, g, count, every), state.idle
    fit = state.fit_counts(g, every)
    return (int(min(count, fit.sum())),
            state.idle - fit[:, None] * problem.group_request[g])


def _roles(engine: ReplayView, g: int) -> dict[str, str]:
    """Each pending pod's ``volcano.sh/task-spec`` value (Volcano's ``TaskRole``; empty without
    the label), by ``namespace/name``."""
    problem = engine.problem
    job = problem.instance.jobs[int(problem.group_job[g])]
    task = next(t for t in job.tasks if t.name == problem.group_task[g])
    return {f"{job.namespace}/{task.pod_name(job.name, i)}":
            task.labels_of(i).get(TASK_SPEC_LABEL, "") for i in range(task.replicas)}
