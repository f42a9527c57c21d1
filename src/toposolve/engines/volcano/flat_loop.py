"""Volcano's flat allocate loop for a job of several tasks, pod by pod: placement and words.

``allocateResourcesForTasks`` takes the job's pods in task order; when no node takes one it goes
on while ``NeedContinueAllocating`` allows (never when ``minAvailable`` is the job's pod count;
with per-task minimums by its two rules; always without them), skips a later pod of a role
that failed (``volcano.sh/task-spec``, a cached fit error) and tries a pod without the label
again; it stops once the job is ready (``SubJobReady`` is ``JobReady`` without SubGroup
policies). The engine runs this loop where its planned fill leaves the gang short, so the
placement and the PodGroup condition come from the same run. Sources and the commit read:
docs/volcano-fidelity.md "Reasons in Volcano's words".
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from toposolve.core.instance import TASK_SPEC_LABEL
from toposolve.core.problem import CompiledJob
from toposolve.engines.volcano.fill import place_normal_pods
from toposolve.engines.volcano.fit_errors import JobTasks, gang_condition, nodes_unavailable
from toposolve.engines.volcano.reasons import EngineView, node_fit_reasons
from toposolve.policy.profiles import PluginArgs
from toposolve.policy.rules import gang_ready


class LoopView(EngineView, Protocol):
    """What :func:`allocate_flat_tasks` reads of the allocate action besides :class:`EngineView`."""

    args: PluginArgs

    def task_order(self, groups: list[int]) -> list[int]: ...


@dataclass(frozen=True)
class FlatAttempt:
    """The outcome of one run of the loop.

    Attributes
    ----------
    ready
        Whether the job was ready when the loop ended (its placements then stand).
    allocated
        Pods the loop allocated (Volcano's ``Schedulable`` once the gang is discarded).
    origin
        ``(pod, FitErrors text)`` of the first pod no node took, None if none failed or a queue's
        capability skipped it.
    worded
        False where the first failed pod's nodes refuse it for what toposolve does not word.
    """

    ready: bool
    allocated: int
    origin: tuple[str, str] | None
    worded: bool


def allocate_flat_tasks(engine: LoopView, j: int, nodes: np.ndarray) -> FlatAttempt | None:
    """Run Volcano's flat loop for job ``j`` on ``nodes``, placing on ``engine.state``; the
    caller undoes the placements unless the attempt is ready.

    Returns None (nothing placed) for per-task minimums over pods whose ``volcano.sh/task-spec``
    is not their task's role: Volcano counts them by that label, toposolve's gang by the role.
    """
    problem, state = engine.problem, engine.state
    cj = problem.jobs[j]
    groups = engine.task_order(cj.groups)
    roles = {g: _roles(engine, g) for g in groups}
    if any(m > 0 for m in cj.min_per_task.values()) and any(
            role != problem.group_role[g] for g in groups for role in roles[g].values()):
        return None
    total = sum(problem.group_size(g) for g in groups)
    held: Counter[str] = Counter()  # role -> pods running or allocated
    pending: Counter[str] = Counter()  # role -> pods not allocated
    for g in groups:
        held[problem.group_role[g]] += problem.group_running_count(g)
        pending.update(roles[g].values())
    allocated, failed, origin, worded = 0, set(), None, True
    for g in groups:
        tried = [pod for pod in problem.group_pending[g]
                 if not (roles[g][pod] and roles[g][pod] in failed)]
        want = _pods_until_ready(engine, j, g, len(tried))
        room = state.queue_room(g)  # pods past it are skipped without an error
        placed = place_normal_pods(state, problem, engine.args, g, min(want, room), nodes)
        allocated += placed
        for pod in tried[:placed]:
            held[roles[g][pod]] += 1
            pending[roles[g][pod]] -= 1
        if engine.gang.job_ready(j):  # SubJobReady ends the loop
            return FlatAttempt(True, allocated, origin, worded)
        if placed == want or placed >= room:
            continue
        if origin is None:
            reasons = node_fit_reasons(problem, state.idle, g, nodes)
            worded = reasons is not None
            origin = (tried[placed].split("/", 1)[-1],
                      nodes_unavailable([r for rs in reasons or [] for r in rs],
                                        nodes=nodes.size))
        # the group's later pods fail alike (a pod of a failed role is skipped with the cached
        # error); each failure asks NeedContinueAllocating, whose answer only narrows as roles fail
        failed.update(roles[g][pod] for pod in tried[placed:])
        if not _goes_on(cj, total, held, pending, failed, engine.gang.job_count(j)):
            break
    return FlatAttempt(False, allocated, origin, worded)


def attempt_condition(engine: EngineView, j: int, attempt: FlatAttempt | None) -> str | None:
    """Volcano's PodGroup condition for job ``j`` after ``attempt`` failed on the flat path.

    None where the attempt made the job ready, was not run or not modelled, or its first failed
    pod is refused for what toposolve does not word. The origin is the first pod that failed;
    Volcano takes the first failed task in Go's map order (random when several failed).
    """
    if attempt is None or attempt.ready or not attempt.worded:
        return None
    problem = engine.problem
    groups = problem.jobs[j].groups
    statuses = Counter({"Pending": sum(len(problem.group_pending[g]) for g in groups),
                        "Running": sum(problem.group_running_count(g) for g in groups)})
    return gang_condition(JobTasks(+statuses, problem.jobs[j].min_available, attempt.allocated,
                                   attempt.origin))


def _pods_until_ready(engine: LoopView, j: int, g: int, count: int) -> int:
    """How many of ``count`` more pods of group ``g`` make job ``j`` ready (``count`` if none)."""
    problem, state = engine.problem, engine.state
    holding = {x: state.group_count(x) for x in problem.jobs[j].groups}
    base = holding[g]
    for k in range(1, count + 1):
        holding[g] = base + k
        if gang_ready(problem, j, holding):
            return k
    return count


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


def _roles(engine: LoopView, g: int) -> dict[str, str]:
    """Each pending pod's ``volcano.sh/task-spec`` value (Volcano's ``TaskRole``; empty without
    the label), by ``namespace/name``."""
    problem = engine.problem
    job = problem.instance.jobs[int(problem.group_job[g])]
    task = problem.task_of(g)
    return {f"{job.namespace}/{task.pod_name(job.name, i)}":
            task.labels_of(i).get(TASK_SPEC_LABEL, "") for i in range(task.replicas)}
