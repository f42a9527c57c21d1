"""Any instance → KAI-Scheduler objects (``generate --format kai``).

Level keys are EKS's (``topology.k8s.aws/network-node-layer-1`` … ``-3``), see
:mod:`toposolve.formats.k8s.levels`. Hard topology → required level, soft → preferred level,
partitions → SubGroups with a required level. Running pods carry ``nodeName``. What the form
cannot say is left out and reported by ``warn``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toposolve.core.instance import Instance, Job, NetworkTopology, Task
from toposolve.formats.k8s.constraint_levels import (
    constraint_levels,
    main_tops,
    own_main_levels,
)
from toposolve.formats.k8s.levels import TOPOLOGY_NAME, Levels, level_labels, warn_unsupported
from toposolve.formats.k8s.objects import (
    creation_timestamp,
    disruption_budget_manifest,
    node_manifest,
    object_metadata,
    pod_spec_manifest,
    pod_status,
    priority_class_manifest,
)
from toposolve.formats.kai.fractions import fraction_manifest
from toposolve.formats.kai.reader import PODGROUP_ANNOTATION, SUBGROUP_LABEL
from toposolve.formats.kai.subgroups import kai_shaped, kai_subgroups

EKS_KEYS = tuple(f"topology.k8s.aws/network-node-layer-{i}" for i in (1, 2, 3))
KAI_SCHEDULER = "kai-scheduler"


def kai_documents(instance: Instance, warn: Callable[[str], None]) -> list[dict[str, Any]]:
    """The instance as KAI objects.

    Parameters
    ----------
    instance
        The instance to write.
    warn
        Called with one line per thing the form cannot say.

    Returns
    -------
    list of dict
        Nodes, Topology, Queues, PriorityClasses, PodGroups (v2alpha2) and their Pods.
    """
    own = own_main_levels(instance)
    if own is None:
        levels, nodes = level_labels(instance, EKS_KEYS)
        main = _main_name(instance)
    else:
        main, levels, nodes = own
    docs: list[dict[str, Any]] = [node_manifest(n) for n in nodes]
    trees = {main: levels, **constraint_levels(instance, nodes, warn)}  # the main tree first
    docs += [_topology(name, tree) for name, tree in trees.items()]
    capability = {q.name: q.capability.get("nvidia.com/gpu") for q in instance.queues}
    for q in sorted({j.queue for j in instance.jobs} | set(capability)):
        limit = capability.get(q)
        gpu = {"quota": -1, "limit": -1 if limit is None else limit // 1000, "overQuotaWeight": 1}
        docs.append({
            "apiVersion": "scheduling.run.ai/v2",
            "kind": "Queue",
            "metadata": object_metadata(q),
            "spec": {"resources": {"gpu": gpu}},
        })
    docs += [priority_class_manifest(pc) for pc in instance.priority_classes]
    docs += [disruption_budget_manifest(b) for b in instance.disruption_budgets]
    kept = {*trees, *_sole_top(instance)}
    for job in instance.jobs:
        warn_unsupported(job, warn, kept, subgroups=kai_shaped(job))
        docs += _podgroup(job, trees)
    return docs


def _topology(name: str, levels: Levels) -> dict[str, Any]:
    return {"apiVersion": "kai.scheduler/v1alpha1", "kind": "Topology",
            "metadata": object_metadata(name),
            "spec": {"levels": [{"nodeLabel": k} for k in levels.keys]}}


def _main_name(instance: Instance) -> str:
    """The Topology name the jobs read name when they all name one (none: ``default``)."""
    named = {j.topology_name for j in instance.jobs} - {None}
    trees = {t.name for t in instance.constraint_trees}
    return named.pop() if len(named) == 1 and not named & trees else TOPOLOGY_NAME


def _sole_top(instance: Instance) -> list[str]:
    """The main tree's top HyperNode when it is the only one (a constraint kept within it is
    kept within the written Topology)."""
    tops = [h.name for h in main_tops(instance)]
    return tops if len(tops) == 1 else []


def _kai_constraint(nt: NetworkTopology | None,
                    trees: dict[str, Levels]) -> dict[str, Any] | None:
    """The ``topologyConstraint`` of a constraint, in its constraint tree's Topology when that
    is written, else in the main one."""
    if nt is None:
        return None
    name = nt.tree if nt.tree in trees else next(iter(trees))
    levels = trees[name]
    c: dict[str, Any] = {"topology": name}
    required = levels.key_of(nt.highest_tier_allowed) if nt.mode == "hard" else None
    soft = nt.highest_tier_allowed if nt.mode == "soft" else None
    preferred = levels.key_of(nt.preferred_tier or soft)
    if required is not None:
        c["requiredTopologyLevel"] = required
    if preferred is not None:
        c["preferredTopologyLevel"] = preferred
    return c if len(c) > 1 else None


def _podgroup(job: Job, trees: dict[str, Levels]) -> list[dict[str, Any]]:
    spec: dict[str, Any] = {"minMember": job.min_available, "queue": job.queue}
    if job.priority_class is not None:
        spec["priorityClassName"] = job.priority_class
    constraint = _kai_constraint(job.network_topology, trees)
    if constraint is not None:
        spec["topologyConstraint"] = constraint
    subgroups: list[dict[str, Any]] = []
    if kai_shaped(job):
        subgroups, top = kai_subgroups(job, lambda nt: _kai_constraint(nt, trees))
        if top is not None:
            spec["minSubGroup"] = top
    pods = [pod for task in job.tasks for pod in _task_pods(job, task, trees, subgroups)]
    if subgroups:
        spec["subGroups"] = subgroups
    created = creation_timestamp(job.creation_index)
    pg = {
        "apiVersion": "scheduling.run.ai/v2alpha2",
        "kind": "PodGroup",
        "metadata": object_metadata(job.name, job.namespace, creationTimestamp=created),
        "spec": spec,
    }
    return [pg, *pods]


def _task_pods(job: Job, task: Task, trees: dict[str, Levels],
               subgroups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A task's pods; its partitions are appended to ``subgroups``."""
    p = task.partition
    pods = []
    for i in range(task.replicas):
        labels = dict(task.labels_of(i))
        if p is not None:
            sg = f"{task.name}-{i // p.partition_size}"
            labels[SUBGROUP_LABEL] = sg
            if i % p.partition_size == 0:
                entry: dict[str, Any] = {"name": sg, "minMember": p.partition_size}
                sub = _kai_constraint(p.network_topology, trees)
                if sub is not None:
                    entry["topologyConstraint"] = sub
                subgroups.append(entry)
        pod_spec: dict[str, Any] = {"schedulerName": KAI_SCHEDULER}
        if task.running.get(i) is not None:
            pod_spec["nodeName"] = task.running[i]
        requests, fraction, groups = fraction_manifest(task, i, task.running.get(i))
        pod_spec.update(pod_spec_manifest(requests, task.constraints))
        name = task.pod_name(job.name, i)
        meta = object_metadata(name, job.namespace, labels={**labels, **groups},
                               annotations={PODGROUP_ANNOTATION: job.name, **fraction})
        pods.append({
            "apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod_spec,
            "status": pod_status(task, i),
        })
    return pods
