"""Volcano's flat allocate loop for a job of several tasks, replayed pod by pod for its words.

``allocateResourcesForTasks`` takes the job's pods in task order; when no node takes one it goes
on while ``NeedContinueAllocating`` allows (never when ``minAvailable`` is the job's pod count,
always without per-task minimums), skips a later pod of a role that failed (``volcano.sh/
task-spec``, a cached fit error) and tries a pod without the label again; it stops once the gang
is ready. toposolve's flat fill places only the pods the gang needs, so the loop is replayed from
the state before the attempt, only to word the PodGroup condition. Sources and the commit read:
docs/volcano-fidelity.md "Reasons in Volcano's words".
"""

from __future__ import annotations

from collections import Counter
from typing import Protocol

import numpy as np

from toposolve.core.instance import TASK_SPEC_LABEL
from toposolve.engines.volcano.fill import place_normal_pods
from toposolve.engines.volcano.fit_errors import JobTasks, gang_condition, nodes_unavailable
from toposolve.engines.volcano.reasons import EngineView, node_fit_reasons
from toposolve.policy.profiles import PluginArgs


class ReplayView(EngineView, Protocol):
    """What :func:`replayed_condition` reads of the allocate action besides :class:`EngineView`."""

    args: PluginArgs

    def task_order(self, groups: list[int]) -> list[int]: ...


def replayed_condition(engine: ReplayView, j: int) -> str | None:
    """Volcano's PodGroup condition for job ``j`` (flat path, several tasks) after its gang
    failed, replayed on ``engine.state`` as it was before the attempt; the caller undoes the
    replay's placements.

    Returns None where Volcano would place the job (toposolve's fill, which stops at the pods
    the gang needs, differs there), for per-task minimums (``CheckTaskReady`` and the per-role
    rules of ``NeedContinueAllocating`` are not replayed), and where the first failed pod's
    nodes refuse it for what toposolve does not word. The origin is the first pod that failed;
    Volcano takes the first failed task in Go's map order (random when several failed).
    """
    problem, state = engine.problem, engine.state
    cj = problem.jobs[j]
    if any(cj.min_per_task.values()):
        return None
    groups = engine.task_order(cj.groups)
    go_on = cj.min_available != sum(problem.group_size(g) for g in groups)
    allocated, failed_roles, origin = 0, set(), None
    for g in groups:
        roles = _roles(engine, g)
        needed = cj.min_available - engine.gang.job_count(j)
        tried = [pod for pod in problem.group_pending[g]
                 if not (roles[pod] and roles[pod] in failed_roles)]
        want = min(len(tried), needed)
        room = state.queue_room(g)  # pods past it are skipped without an error
        placed, idle = _take(engine, g, min(want, room), last=g == groups[-1])
        allocated += placed
        if placed == needed:
            return None  # Volcano's loop makes the gang ready: it binds the job
        if placed == want or placed >= room:
            continue
        if origin is None:
            reasons = node_fit_reasons(problem, idle, g)
            if reasons is None:
                return None
            origin = (tried[placed].split("/", 1)[-1],
                      nodes_unavailable([r for rs in reasons for r in rs], nodes=len(reasons)))
        # the group's later pods fail alike (a pod of a failed role is skipped with the cached
        # error); Volcano's loop goes on to the next group
        failed_roles.update(roles[pod] for pod in tried[placed:])
        if not go_on:
            break
    statuses = Counter({"Pending": sum(len(problem.group_pending[g]) for g in groups),
                        "Running": sum(problem.group_running_count(g) for g in groups)})
    return gang_condition(JobTasks(+statuses, cj.min_available, allocated, origin))


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
