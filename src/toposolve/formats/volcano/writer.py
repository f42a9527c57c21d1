""":class:`Instance` → Kubernetes/Volcano manifests that :func:`load_instance` reads back.

Objects written: Nodes, HyperNodes, Queues, PriorityClasses, then per job either

* a **Volcano Job** (``partitionPolicy`` for partitioned tasks) plus a Pod for every running pod,
  when the job is what a Volcano Job expresses: no explicit pod names or per-pod labels, no
  ``min_task_member``, unique task names that are their roles, and subGroupPolicies exactly
  those derived from the partitions; or
* a bare **Pod** (no group annotation) when the job is what Volcano makes of such a pod: one pod
  named like the job, minAvailable 1, no topology or policies; or
* a **PodGroup** plus every pod (pending and running) otherwise. Per-task ``min_available`` then
  goes into ``minTaskMember`` (summed per role, ``Task.role_name``; ``min_task_member`` entries
  win), the pods' ``volcano.sh/task-spec`` label is the role (what Volcano counts), and a
  task's partition is only visible through its pods' ``volcano.sh/partition-id`` labels.

Jobs carry ``metadata.creationTimestamp`` = 2024-01-01T00:00:00Z + ``creation_index`` seconds,
unless creation indexes are just 0, 1, 2, … in list order (the reader's default).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from toposolve.core.instance import (
    TASK_SPEC_LABEL,
    HyperNode,
    Instance,
    Job,
    Queue,
    Task,
)
from toposolve.core.paths import write_file
from toposolve.core.quantity import format_quantities
from toposolve.formats.k8s.gpushare import gpushare_manifest
from toposolve.formats.k8s.levels import drop_refused
from toposolve.formats.k8s.objects import (
    creation_timestamp,
    disruption_budget_manifest,
    node_manifest,
    object_metadata,
    pod_spec_manifest,
    pod_status,
    priority_class_manifest,
)
from toposolve.formats.k8s.specs import (
    label_selector_manifest,
    network_topology_manifest,
    partition_policy_manifest,
    refuse_gang_groups,
    subgroup_policy_manifest,
)
from toposolve.formats.volcano.job import JOB_NAME_LABEL, partition_subgroup_policy
from toposolve.formats.volcano.podgroup import GROUP_NAME_ANNOTATION, QUEUE_NAME_ANNOTATION
from toposolve.formats.volcano.workloads import VOLCANO_SCHEDULER

LOG = logging.getLogger("toposolve")


def write_manifests(instance: Instance, path: str | Path, *,
                    warn: Callable[[str], None] | None = None) -> None:
    """Write :func:`instance_to_manifests` as one multi-document YAML file.

    Parameters
    ----------
    instance
        The instance to write.
    path
        The file written.
    warn
        As in :func:`instance_to_manifests`.
    """
    header = f"# Kubernetes/Volcano manifests written by toposolve from {instance.source}\n"
    body = yaml.safe_dump_all(instance_to_manifests(instance, warn), sort_keys=False,
                              default_flow_style=False, allow_unicode=True)
    write_file(path, header + body)


def instance_to_manifests(instance: Instance,
                          warn: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """The instance as Kubernetes/Volcano objects that :func:`load_instance` reads back.

    Parameters
    ----------
    instance
        The instance to write.
    warn
        Called with one line per job whose constraint no node satisfies (a Kueue input's missing
        level or never-placed request: Volcano's ``networkTopology`` cannot hold it, so the job
        reads back unconstrained); default: the ``toposolve`` logger's warnings.

    Returns
    -------
    list of dict
        Nodes, HyperNodes, Queues, PriorityClasses, then each job's objects (module docstring).
    """
    docs: list[dict[str, Any]] = []
    docs += [node_manifest(n) for n in instance.nodes]
    docs += [hypernode_manifest(h) for h in instance.hypernodes]
    docs += [queue_manifest(q) for q in instance.queues]
    docs += [priority_class_manifest(pc) for pc in instance.priority_classes]
    docs += [disruption_budget_manifest(b) for b in instance.disruption_budgets]
    stamped = [j.creation_index for j in instance.jobs] != list(range(len(instance.jobs)))
    for job in instance.jobs:
        job = drop_refused(job, warn or LOG.warning)
        created = creation_timestamp(job.creation_index) if stamped else None
        if expressible_as_volcano_job(job):
            docs += volcano_job_manifests(job, created)
        elif is_single_pod_job(job):
            docs.append(single_pod_manifest(job, created))
        else:
            docs += podgroup_manifests(job, created)
    return docs


# -- cluster objects --------------------------------------------------------------------------


def hypernode_manifest(hn: HyperNode) -> dict[str, Any]:
    spec: dict[str, Any] = {"tier": hn.tier}
    if hn.tier_name is not None:
        spec["tierName"] = hn.tier_name
    members = []
    for m in hn.members:
        s = m.selector
        if s.exact_match is not None:
            selector: dict[str, Any] = {"exactMatch": {"name": s.exact_match}}
        elif s.regex_match is not None:
            selector = {"regexMatch": {"pattern": s.regex_match}}
        else:
            assert s.label_match is not None
            selector = {"labelMatch": label_selector_manifest(s.label_match)}
        members.append({"type": m.type, "selector": selector})
    spec["members"] = members
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": object_metadata(hn.name),
        "spec": spec,
    }


def queue_manifest(queue: Queue) -> dict[str, Any]:
    spec: dict[str, Any] = {"weight": queue.weight}
    if queue.priority:
        spec["priority"] = queue.priority
    if queue.capability:
        spec["capability"] = format_quantities(queue.capability)
    if queue.deserved:
        spec["deserved"] = format_quantities(queue.deserved)
    if queue.guarantee:
        spec["guarantee"] = {"resource": format_quantities(queue.guarantee)}
    spec["reclaimable"] = queue.reclaimable
    if queue.parent:
        spec["parent"] = queue.parent
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": object_metadata(queue.name),
        "spec": spec,
    }


def _pod(job: Job, task: Task, index: int, labels: dict[str, str], annotations: dict[str, str],
         created: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulerName": VOLCANO_SCHEDULER}
    if job.priority_class is not None:
        spec["priorityClassName"] = job.priority_class
    node = task.running.get(index)
    if node is not None:
        spec["nodeName"] = node
    requests, shares = gpushare_manifest(task, index)
    spec.update(pod_spec_manifest(requests, task.constraints))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": object_metadata(
            task.pod_name(job.name, index),
            job.namespace,
            creationTimestamp=created,
            labels=labels,
            annotations={**annotations, **shares},
        ),
        "spec": spec,
        "status": pod_status(task, index),
    }


# -- jobs -------------------------------------------------------------------------------------


def expressible_as_volcano_job(job: Job) -> bool:
    """True if a Volcano Job manifest reads back as exactly this job."""
    names = [t.name for t in job.tasks]
    return (
        bool(job.tasks)
        and not job.min_task_member
        and not job.min_resources  # a Volcano Job has no minResources: the PodGroup form keeps it
        and len(set(names)) == len(names)
        and all(t.role_name == t.name for t in job.tasks)  # a Volcano Job's task name is the role
        and all(t.pod_names is None and not t.pod_labels for t in job.tasks)
        and all(TASK_SPEC_LABEL not in t.labels and t.task_spec_label for t in job.tasks)
        and job.subgroup_policies
        == [partition_subgroup_policy(t) for t in job.tasks if t.partition is not None]
    )


def volcano_job_manifests(job: Job, created: str | None) -> list[dict[str, Any]]:
    spec: dict[str, Any] = {"schedulerName": VOLCANO_SCHEDULER, "minAvailable": job.min_available}
    spec["queue"] = job.queue
    if job.priority_class is not None:
        spec["priorityClassName"] = job.priority_class
    if job.network_topology is not None:
        spec["networkTopology"] = network_topology_manifest(job.network_topology)
    tasks = []
    for task in job.tasks:
        entry: dict[str, Any] = {"name": task.name, "replicas": task.replicas}
        if task.min_available is not None:
            entry["minAvailable"] = task.min_available
        if task.partition is not None:
            entry["partitionPolicy"] = partition_policy_manifest(task.partition)
        template: dict[str, Any] = {}
        requests, shares = gpushare_manifest(task)
        if task.labels or shares:
            template["metadata"] = {k: v for k, v in (("labels", dict(task.labels)),
                                                      ("annotations", shares)) if v}
        template["spec"] = pod_spec_manifest(requests, task.constraints)
        entry["template"] = template
        tasks.append(entry)
    spec["tasks"] = tasks
    docs = [
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": object_metadata(job.name, job.namespace, creationTimestamp=created),
            "spec": spec,
        }
    ]
    for task in job.tasks:
        for index in sorted(task.running):
            labels = {JOB_NAME_LABEL: job.name, **task.labels_of(index)}
            docs.append(_pod(job, task, index, labels, {}))
    return docs


def podgroup_manifests(job: Job, created: str | None) -> list[dict[str, Any]]:
    min_task_member: dict[str, int] = {}
    for task in job.tasks:
        if task.min_available is not None:
            role = task.role_name
            min_task_member[role] = min_task_member.get(role, 0) + task.min_available
    min_task_member.update(job.min_task_member)
    spec: dict[str, Any] = {"minMember": job.min_available}
    if min_task_member:
        spec["minTaskMember"] = min_task_member
    if job.min_resources:
        spec["minResources"] = format_quantities(job.min_resources)
    spec["queue"] = job.queue
    if job.priority_class is not None:
        spec["priorityClassName"] = job.priority_class
    if job.network_topology is not None:
        spec["networkTopology"] = network_topology_manifest(job.network_topology)
    if job.subgroup_policies:
        refuse_gang_groups(job, "Volcano manifests")
        spec["subGroupPolicy"] = [subgroup_policy_manifest(p) for p in job.subgroup_policies]
    docs = [
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": object_metadata(job.name, job.namespace, creationTimestamp=created),
            "spec": spec,
        }
    ]
    annotations = {GROUP_NAME_ANNOTATION: job.name}
    for task in job.tasks:
        for index in range(task.replicas):
            docs.append(_pod(job, task, index, _pod_labels(task, index), dict(annotations)))
    return docs


def _pod_labels(task: Task, index: int) -> dict[str, str]:
    """Labels of a PodGroup's pod (``task.labels_of``)."""
    return task.labels_of(index)


def is_single_pod_job(job: Job) -> bool:
    """True if a Pod without a PodGroup reads back as exactly this job (Volcano's shadow group)."""
    if len(job.tasks) != 1:
        return False
    task = job.tasks[0]
    return (
        task.replicas == 1
        and task.pod_names == [job.name]
        and task.min_available is None
        and job.min_available == 1
        and job.network_topology is None
        and not job.subgroup_policies
        and not job.min_task_member
    )


def single_pod_manifest(job: Job, created: str | None) -> dict[str, Any]:
    task = job.tasks[0]
    annotations = {} if job.queue == "default" else {QUEUE_NAME_ANNOTATION: job.queue}
    return _pod(job, task, 0, _pod_labels(task, 0), annotations, created)
