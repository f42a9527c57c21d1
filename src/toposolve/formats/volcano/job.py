"""Volcano Jobs (``batch.volcano.sh``) → :class:`Job`, and their pods' running indexes.

Rules (Volcano's admission webhook ``mutate_job.go`` and job controller do the same):

* A task without a name is ``default<i>``. ``template.metadata.labels`` become the pods' labels;
  requests and predicates come from ``template.spec`` (:mod:`toposolve.formats.k8s.pods`).
* ``spec.minAvailable`` defaults to the sum over tasks of the task's ``minAvailable``, else
  ``minPartitions × partitionSize`` when minPartitions > 0, else ``replicas``; an explicit value,
  even 0, is kept. A task without ``minAvailable`` keeps ``Task.min_available = None``.
  ``queue`` defaults to ``default``.
* A ``partitionPolicy`` becomes ``Task.partition`` and the subGroupPolicy the job controller
  derives from it (:func:`partition_subgroup_policy`).
* A Volcano Job in a terminal phase (``status.state.phase`` Completed, Failed, Terminated,
  Aborted) has nothing left to place and is skipped (see
  :mod:`toposolve.formats.volcano.workloads`).
* A pod of the job names its task in label ``volcano.sh/task-spec`` and its index in its name
  ``<job>-<task>-<i>`` (else annotation ``volcano.sh/task-index``); with ``spec.nodeName`` that
  index is running there.
"""

from __future__ import annotations

from collections.abc import Sequence

from toposolve.core.disruption import READY
from toposolve.core.instance import (
    PARTITION_ID_LABEL,
    TASK_SPEC_LABEL,
    Job,
    LabelSelector,
    PartitionPolicy,
    SubGroupPolicy,
    Task,
)
from toposolve.formats.k8s.fields import Field, build, decimal
from toposolve.formats.k8s.gpushare import with_gpushare
from toposolve.formats.k8s.pods import pod_constraints, pod_requests
from toposolve.formats.k8s.specs import (
    network_topology,
    object_name,
    object_namespace,
    partition_policy,
)
from toposolve.formats.volcano.podgroup import PodRecord

TASK_INDEX_ANNOTATION = "volcano.sh/task-index"
TERMINAL_JOB_PHASES = ("Completed", "Failed", "Terminated", "Aborted")
JOB_NAME_LABEL = "volcano.sh/job-name"

_VOLCANO_JOB_FIELDS = {
    "name": "metadata.name",
    "namespace": "metadata.namespace",
    "min_available": "spec.minAvailable",
    "queue": "spec.queue",
    "priority_class": "spec.priorityClassName",
    "network_topology": "spec.networkTopology",
    "tasks": "spec.tasks",
    "subgroup_policies": "spec.tasks",
}
_TEMPLATE_FIELDS = {
    "requests": "template.spec.containers",
    "constraints": "template.spec",
    "labels": "template.metadata.labels",
}


def partition_subgroup_policy(task: Task) -> SubGroupPolicy:
    """The subGroupPolicy Volcano's job controller derives from a task's partitionPolicy."""
    assert task.partition is not None
    p = task.partition
    return SubGroupPolicy(
        name=task.name,
        sub_group_size=p.partition_size,
        label_selector=LabelSelector(match_labels={TASK_SPEC_LABEL: task.name}),
        match_label_keys=[PARTITION_ID_LABEL],
        network_topology=p.network_topology.model_copy() if p.network_topology else None,
        min_sub_groups=p.min_partitions,
    )


def read_min_available(field: Field, tasks: Sequence[Task]) -> int:
    """The job's ``minAvailable`` at ``field``: at most its replicas; the default when absent."""
    min_available = field.integer(minimum=0)
    if min_available is None:
        return default_min_available(tasks)
    replicas = sum(t.replicas for t in tasks)
    if min_available > replicas:
        raise field.fail(f"minAvailable ({min_available}) exceeds the job's replicas ({replicas})")
    return min_available


def default_min_available(tasks: Sequence[Task]) -> int:
    """``spec.minAvailable`` when the Job leaves it out (the webhook's rule, module docstring)."""
    return sum(_default_task_share(t) for t in tasks)


def _default_task_share(task: Task) -> int:
    p = task.partition
    if task.min_available is not None:
        return task.min_available
    if p is not None and p.min_partitions > 0:
        return p.min_partitions * p.partition_size
    return task.replicas


def read_volcano_job(root: Field) -> Job:
    spec = root["spec"]
    task_fields = spec["tasks"].elements()
    if not task_fields:
        raise spec["tasks"].fail("a Volcano Job needs at least one task")
    tasks: list[Task] = []
    for i, t in enumerate(task_fields):
        task = _volcano_task(t, i)
        if any(other.name == task.name for other in tasks):
            raise t["name"].fail(f"duplicate task name {task.name!r}")
        tasks.append(task)
    min_available = read_min_available(spec["minAvailable"], tasks)
    return build(
        Job,
        root,
        _VOLCANO_JOB_FIELDS,
        namespace=object_namespace(root),
        name=object_name(root),
        min_available=min_available,
        queue=spec["queue"].text("") or "default",
        priority_class=spec["priorityClassName"].text("") or None,
        network_topology=network_topology(spec["networkTopology"]),
        tasks=tasks,
        subgroup_policies=[partition_subgroup_policy(t) for t in tasks if t.partition is not None],
    )


def _volcano_task(t: Field, index: int) -> Task:
    replicas = t["replicas"].integer(0, minimum=0)
    assert replicas is not None
    min_available = t["minAvailable"].integer(minimum=0)
    if min_available is not None and min_available > replicas:
        raise t["minAvailable"].fail(
            f"minAvailable ({min_available}) exceeds replicas ({replicas})"
        )
    template = t["template"]
    labels = template.at("metadata.labels").string_map()
    labels.pop(TASK_SPEC_LABEL, None)  # the controller sets it to the task name
    requests, constraints, gpushare = with_gpushare(template, pod_requests(template["spec"]),
                                                    pod_constraints(template["spec"]))
    return build(
        Task,
        t,
        _TEMPLATE_FIELDS,
        name=t["name"].text("") or f"default{index}",
        replicas=replicas,
        min_available=min_available,
        requests=requests,
        labels=labels,
        constraints=constraints,
        partition=_partition(t["partitionPolicy"], replicas),
        device_share=None if gpushare is None else gpushare.share,
    )


def _partition(pp: Field, replicas: int) -> PartitionPolicy | None:
    if not pp.present:
        return None
    total = pp["totalPartitions"].integer(required=True, minimum=1)
    size = pp["partitionSize"].integer(required=True, minimum=1)
    minimum = pp["minPartitions"].integer(0, minimum=0)
    assert total is not None and size is not None and minimum is not None
    if total * size != replicas:
        raise pp.fail(
            f"replicas ({replicas}) must equal totalPartitions × partitionSize ({total} × {size})"
        )
    return partition_policy(pp, total=total, size=size, minimum=minimum)


def job_phase(root: Field) -> str:
    return root.at("status.state.phase").text("") or ""


def volcano_owner(root: Field, namespace: str) -> tuple[str, str] | None:
    for ref in root.at("metadata.ownerReferences").elements():
        api = ref["apiVersion"].text("") or ""
        if ref["kind"].text("") == "Job" and api.startswith("batch.volcano.sh/"):
            return (namespace, ref["name"].text("") or "")
    return None


def mark_running(job: Job, pod: PodRecord) -> None:
    """Record a Volcano Job's pod: its task index runs on ``spec.nodeName`` (if set)."""
    task_name = pod.labels.get(TASK_SPEC_LABEL)
    if task_name is None:
        raise pod.fail(f"pod of Job/{job.key} has no {TASK_SPEC_LABEL} label",
                       f"metadata.labels.{TASK_SPEC_LABEL}")
    task = next((t for t in job.tasks if t.name == task_name), None)
    if task is None:
        raise pod.fail(f"Job/{job.key} has no task {task_name!r}",
                       f"metadata.labels.{TASK_SPEC_LABEL}")
    index = _task_index(job.name, task.name, pod)
    if index is None or not 0 <= index < task.replicas:
        raise pod.fail(
            f"cannot tell which of the {task.replicas} pods of task {task.name!r} this is: "
            f"expected the name {job.name}-{task.name}-<0..{task.replicas - 1}> "
            f"or annotation {TASK_INDEX_ANNOTATION}",
            "metadata.name",
        )
    if pod.node is None:
        return
    if index in task.running:
        raise pod.fail(f"another running pod already is index {index} of task {task.name!r}",
                       "metadata.name")
    task.running[index] = pod.node
    if pod.health != READY:
        task.unready[index] = pod.health


def _task_index(job_name: str, task_name: str, pod: PodRecord) -> int | None:
    prefix = f"{job_name}-{task_name}-"
    rest = pod.name[len(prefix) :] if pod.name.startswith(prefix) else ""
    for text in (rest, pod.annotations.get(TASK_INDEX_ANNOTATION, "")):
        index = decimal(text)  # ASCII digits only: '²'.isdigit() is true, int('²') fails
        if index is not None and index >= 0:
            return index
    return None
