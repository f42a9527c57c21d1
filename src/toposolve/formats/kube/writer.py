"""Any instance → Kubernetes Workload API objects (``generate --format kube``).

Level keys are GKE's (``cloud.google.com/gce-topology-block``, ``…-subblock``, ``…-host``),
see :mod:`toposolve.formats.k8s.levels`. Each job is a ``Workload`` with one PodGroupTemplate
and the ``PodGroup`` made from it (``scheduling.k8s.io/v1alpha2``): ``gang.minCount`` its
``minAvailable``, a hard topology constraint the key of its tier; pods name the PodGroup in
``spec.schedulingGroup.podGroupName``, running pods carry ``nodeName``. What the form cannot say
(soft constraints, sub-gangs) is left out and reported by ``warn``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toposolve.core.instance import KUBE_PODGROUP_LABEL, Instance, Job, Task
from toposolve.formats.k8s.levels import (
    GKE_KEYS,
    Levels,
    level_labels,
    warn_unsupported,
    warn_within_hypernode,
)
from toposolve.formats.k8s.objects import (
    creation_timestamp,
    disruption_budget_manifest,
    node_manifest,
    object_metadata,
    pod_spec_manifest,
    pod_status,
    priority_class_manifest,
)
from toposolve.formats.k8s.pods import SCORE_DEFAULTS
from toposolve.formats.kube.composite_writer import (
    composite_objects,
    is_composite,
    scheduling_spec,
)

API_VERSION = "scheduling.k8s.io/v1alpha2"
TEMPLATE = "main"


def kube_documents(instance: Instance, warn: Callable[[str], None]) -> list[dict[str, Any]]:
    """The instance as Workload API objects.

    Parameters
    ----------
    instance
        The instance to write.
    warn
        Called with one line per thing the form cannot say.

    Returns
    -------
    list of dict
        Nodes, PriorityClasses, then per job its Workload, PodGroup and Pods.
    """
    levels, nodes = level_labels(instance, GKE_KEYS)
    docs: list[dict[str, Any]] = [node_manifest(n) for n in nodes]
    docs += [priority_class_manifest(pc) for pc in instance.priority_classes]
    docs += [disruption_budget_manifest(b) for b in instance.disruption_budgets]
    for job in instance.jobs:
        if is_composite(job):
            warn_within_hypernode(job, warn)
            docs += _composite(job, levels, warn)
            continue
        warn_unsupported(job, warn)
        if any(t.partition is not None for t in job.tasks):
            warn(f"Job/{job.key}: partitions are left out (a PodGroup has one constraint)")
        if job.network_topology is not None and job.network_topology.mode == "soft":
            warn(f"Job/{job.key}: a soft topology constraint is left out (the Workload API has "
                 "none)")
        docs += _objects(job, levels, warn)
    return docs


def _group_spec(job: Job, levels: Levels) -> dict[str, Any]:
    policy = {"gang": {"minCount": job.min_available}} if job.min_available > 0 else {"basic": {}}
    return scheduling_spec(policy, job.network_topology, levels)


def _composite(job: Job, levels: Levels, warn: Callable[[str], None]) -> list[dict[str, Any]]:
    """A gang tree as CompositePodGroups with their PodGroups, then the pods."""
    specs = [*(g.network_topology for g in job.gang_groups),
             *(p.network_topology for p in job.subgroup_policies)]
    if any(s is not None and s.mode == "soft" for s in specs):
        warn(f"Job/{job.key}: a soft topology constraint is left out (the Workload API has "
             "none)")
    created = creation_timestamp(job.creation_index)
    return [*composite_objects(job, levels, created), *_pods(job, warn, group=None)]


def _objects(job: Job, levels: Levels, warn: Callable[[str], None]) -> list[dict[str, Any]]:
    created = creation_timestamp(job.creation_index)
    spec = _group_spec(job, levels)
    workload = {
        "apiVersion": API_VERSION, "kind": "Workload",
        "metadata": object_metadata(job.name, job.namespace, creationTimestamp=created),
        "spec": {"podGroupTemplates": [{"name": TEMPLATE, **spec}]},
    }
    group_spec = {"podGroupTemplateRef": {"workload": {"workloadName": job.name,
                                                       "podGroupTemplateName": TEMPLATE}},
                  **spec}
    if job.priority_class is not None:
        group_spec["priorityClassName"] = job.priority_class
    group = {
        "apiVersion": API_VERSION, "kind": "PodGroup",
        "metadata": object_metadata(job.name, job.namespace, creationTimestamp=created),
        "spec": group_spec,
    }
    return [workload, group, *_pods(job, warn, group=job.name)]


def _pods(job: Job, warn: Callable[[str], None], group: str | None) -> list[dict[str, Any]]:
    """The job's pods, naming PodGroup ``group`` (None: the one their model label names)."""
    pods = []
    for task in job.tasks:
        if not _scores_kept(task):
            warn(f"Job/{job.key}: task {task.name}: its scoring requests are left out (one "
                 "container states only its requests)")
        for i in range(task.replicas):
            labels = dict(task.labels_of(i))
            name = group or labels.get(KUBE_PODGROUP_LABEL, job.name)
            pod_spec: dict[str, Any] = {"schedulingGroup": {"podGroupName": name}}
            if task.running.get(i) is not None:
                pod_spec["nodeName"] = task.running[i]
            pod_spec.update(pod_spec_manifest(pod_requests(task), task.constraints))
            meta = object_metadata(task.pod_name(job.name, i), job.namespace, labels=labels)
            pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod_spec,
                         "status": pod_status(task, i)})
    return pods


def pod_requests(task: Task) -> dict[str, int]:
    """The requests of the task's one container: its requests, and an explicit 0 for a cpu /
    memory it scores as 0 (left unset, the kube reader would score kube-scheduler's default)."""
    scoring = task.requests if task.score_requests is None else task.score_requests
    out = dict(task.requests)
    for name in SCORE_DEFAULTS:
        if name not in out and not scoring.get(name, 0):
            out[name] = 0
    return out


def _scores_kept(task: Task) -> bool:
    """Whether the kube reader scores the written pod as ``task`` scores its pods."""
    scoring = task.requests if task.score_requests is None else task.score_requests
    written = pod_requests(task)
    return all(scoring.get(name, 0) == written.get(name, default)
               for name, default in SCORE_DEFAULTS.items())
