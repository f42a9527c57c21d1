"""Every pod of the instance by full name, with its job, task and SubJob.

SubJob membership follows Volcano's: the first ``subGroupPolicy`` whose ``labelSelector``
matches the pod's labels (``task.labels_of(i)``) takes the pod into the SubJob
``<ns>/<job>/<policy>-<values of matchLabelKeys joined by '-'>``; a pod no policy matches is in
the SubJob whose id is the job's own ``<ns>/<job>``.

Where the seed is silent, Volcano's code (``getSubJobMatchValues``) decides: a policy takes a
pod only if the pod has a non-empty value for every one of the policy's ``matchLabelKeys``, and
a policy without ``matchLabelKeys`` takes no pod.
"""

from __future__ import annotations

from typing import NamedTuple

from toposolve.check.labels import selector_holds
from toposolve.core.errors import InputError
from toposolve.core.instance import Instance, Job, Task


class PodInfo(NamedTuple):  # a tuple: a replay's cycle indexes one per busy node
    name: str  # "<namespace>/<pod>"
    job: Job
    task: Task
    subjob: str  # SubJob id
    policy: int  # index of the matched subGroupPolicy, -1 for none
    running_on: str | None  # node of a running pod
    index: int = 0  # the pod's index in its task

    @property
    def health(self) -> str:
        """``ready``, ``not-ready`` or ``starting`` (``Task.unready``) of a running pod."""
        return self.task.health_of(self.index)


def subjob_of(job: Job, labels: dict[str, str]) -> tuple[int, str]:
    """(policy index, SubJob id) of a pod with ``labels`` (policy -1: the job's own SubJob)."""
    for p, policy in enumerate(job.subgroup_policies):
        values = [labels.get(key) for key in policy.match_label_keys]
        if values and all(values) and selector_holds(policy.label_selector, labels):
            return p, f"{job.key}/{policy.name}-" + "-".join(values)
    return -1, job.key


def index_pods(instance: Instance) -> dict[str, PodInfo]:
    """All pods by full name; raise :class:`InputError` on a duplicate pod.

    A pod may run on a node the instance does not have (Volcano keeps such a task): it counts
    toward its gangs and lies in no HyperNode.
    """
    pods: dict[str, PodInfo] = {}
    for job in instance.jobs:
        prefix, key = f"{job.namespace}/", job.key
        for task in job.tasks:
            running = task.running
            for i in range(task.replicas):
                name = prefix + task.pod_name(job.name, i)
                if name in pods:
                    raise InputError("duplicate pod name", file=instance.source, obj=f"Pod/{name}")
                policy, subjob = (subjob_of(job,
                        task.labels_of(i)) if job.subgroup_policies else (-1, key))
                pods[name] = PodInfo(name, job, task, subjob, policy, running.get(i), i)
    return pods
