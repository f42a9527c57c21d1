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
    every = np.arange(problem.n_nodes)
    allocated, failed_roles, origin = 0, set(), None
    for g in groups:
        roles = _roles(engine, g)
        for pod in problem.group_pending[g]:
            role = roles[pod]
            if (role and role in failed_roles) or state.queue_room(g) < 1:
                continue  # a cached fit error, or the queue skips the pod without one
            if place_normal_pods(state, problem, engine.args, g, 1, every):
                allocated += 1
                if engine.gang.job_ready(j):
                    return None
                continue
            if origin is None:
                reasons = node_fit_reasons(problem, state.idle, g)
                if reasons is None:
                    return None
                origin = (pod.split("/", 1)[-1],
                          nodes_unavailable([r for rs in reasons for r in rs], nodes=len(reasons)))
            failed_roles.add(role)
            if not go_on:
                break
        if origin is not None and not go_on:
            break
    statuses = Counter({"Pending": sum(len(problem.group_pending[g]) for g in groups),
                        "Running": sum(problem.group_running_count(g) for g in groups)})
    return gang_condition(JobTasks(+statuses, cj.min_available, allocated, origin))


def _roles(engine: ReplayView, g: int) -> dict[str, str]:
    """Each pending pod's ``volcano.sh/task-spec`` value (Volcano's ``TaskRole``; empty without
    the label), by ``namespace/name``."""
    problem = engine.problem
    job = problem.instance.jobs[int(problem.group_job[g])]
    task = next(t for t in job.tasks if t.name == problem.group_task[g])
    return {f"{job.namespace}/{task.pod_name(job.name, i)}":
            task.labels_of(i).get(TASK_SPEC_LABEL, "") for i in range(task.replicas)}
