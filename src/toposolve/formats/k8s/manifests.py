"""Kubernetes / Volcano manifests → :class:`Instance`.

Kinds read (matched on API group and kind; any version): ``v1 Node`` (labels, allocatable,
unschedulable, taints; a node whose ``Ready`` condition is not ``True`` is read as
unschedulable), ``topology.volcano.sh HyperNode``, ``scheduling.volcano.sh Queue``,
``scheduling.k8s.io PriorityClass``, ``policy PodDisruptionBudget``, ``batch.volcano.sh
Job``, ``scheduling.volcano.sh PodGroup`` and ``v1 Pod``
(:mod:`toposolve.formats.volcano.workloads`), and Volcano's label discovery ConfigMap
(:mod:`toposolve.formats.volcano.label_discovery`). Kueue, KAI and Kubernetes Workload API
(``scheduling.k8s.io`` PodGroup / Workload) objects go to their readers
(:func:`read_other_scheduler`).

Other kinds are skipped with one warning line each. Names must be unique per kind (and
namespace). The fields read are listed in ``docs/formats.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from toposolve.core.errors import InputError
from toposolve.core.instance import (
    HyperNode,
    Instance,
    Job,
    Member,
    MemberSelector,
    Node,
    PodDisruptionBudget,
    PriorityClass,
    Queue,
    Taint,
)
from toposolve.core.label_levels import option_hypernodes
from toposolve.formats.k8s.fields import Document, Field, build
from toposolve.formats.k8s.gpushare import without_pooled_milli
from toposolve.formats.k8s.part import SchedulerPart
from toposolve.formats.k8s.running_devices import place_unrecorded
from toposolve.formats.k8s.specs import label_selector, object_name
from toposolve.formats.k8s.timeslicing import GPU, shared_replicas, time_sliced
from toposolve.formats.k8s.tolerated import warn_tolerated
from toposolve.formats.kai.reader import KAI_KINDS, read_kai_part
from toposolve.formats.kube.reader import KUBE_KINDS, read_kube_part
from toposolve.formats.kube.scheduler_config import CONFIG_KIND, read_scheduler_config
from toposolve.formats.kueue.jobs import JOB_KINDS, is_queued
from toposolve.formats.kueue.part import read_kueue_part
from toposolve.formats.kueue.reader import KUEUE_KINDS
from toposolve.formats.native.names import reject_duplicates
from toposolve.formats.volcano.label_discovery import find_label_discovery, is_controller_configmap
from toposolve.formats.volcano.workloads import read_workloads

CORE = ""
NODE = (CORE, "Node")
POD = (CORE, "Pod")
HYPERNODE = ("topology.volcano.sh", "HyperNode")
VOLCANO_JOB = ("batch.volcano.sh", "Job")
PODGROUP = ("scheduling.volcano.sh", "PodGroup")
QUEUE = ("scheduling.volcano.sh", "Queue")
PRIORITY_CLASS = ("scheduling.k8s.io", "PriorityClass")
CONFIGMAP = (CORE, "ConfigMap")
PDB = ("policy", "PodDisruptionBudget")
KNOWN_KINDS = (NODE, POD, HYPERNODE, VOLCANO_JOB, PODGROUP, QUEUE, PRIORITY_CLASS, PDB,
               *KUEUE_KINDS,
               *KAI_KINDS, *KUBE_KINDS, *JOB_KINDS, CONFIG_KIND)

MEMBER_SELECTORS = ("exactMatch", "regexMatch", "labelMatch")


def read_manifests(docs: Sequence[Document], *, source: str, warn: Callable[[str], None],
                   topology_labels: Sequence[str] = ()) -> Instance:
    """Build the instance from manifest objects (already split into single objects);
    ``topology_labels`` (top level first) adds HyperNodes from node labels."""
    by_kind: dict[tuple[str, str], list[Document]] = {kind: [] for kind in KNOWN_KINDS}
    configmaps: list[Document] = []
    for doc in docs:
        if not doc.kind or "apiVersion" not in doc.body:
            missing = "kind" if not doc.kind else "apiVersion"
            raise InputError(f"not a Kubernetes object: {missing} is missing", file=doc.file,
                             obj=doc.object_name(namespaced=False) if doc.kind else None)
        key = (doc.api_group, doc.kind)
        if key in by_kind:
            by_kind[key].append(doc)
        elif key == CONFIGMAP and is_controller_configmap(doc):
            configmaps.append(doc)
        else:
            obj = doc.object_name(namespaced=doc.declares_namespace)
            warn(f"{doc.file}: {obj}: skipped (kind not used by toposolve)")

    nodes = _unique([read_node(d) for d in by_kind[NODE]], by_kind[NODE])
    discovery = find_label_discovery(configmaps, topology_labels)
    kept = [d for d in by_kind[HYPERNODE] if discovery is None or discovery.keeps(d)]
    hypernodes = _unique([read_hypernode(d) for d in kept], kept)
    if discovery is not None:
        hypernodes += discovery.hypernodes(nodes, by_kind[HYPERNODE], warn)
    elif topology_labels:
        hypernodes += option_hypernodes(nodes, topology_labels, taken=[h.name for h in hypernodes])
    queues = _unique([read_queue(d) for d in by_kind[QUEUE]], by_kind[QUEUE])
    classes = _unique(
        [read_priority_class(d) for d in by_kind[PRIORITY_CLASS]], by_kind[PRIORITY_CLASS]
    )
    other = read_other_scheduler(by_kind, nodes, {c.name for c in classes}, by_kind[POD], warn)
    pods = by_kind[POD]
    if other is not None:  # Kueue/KAI: its topology, queues and jobs; pods it accounted for are its
        pods = [d for d in pods if _pod_key(d) not in other.consumed_pods]
        hypernodes += other.hypernodes
        queues += other.queues
        classes += [c for c in other.classes if c.name not in {k.name for k in classes}]
    jobs = [_own_priorities_only(job)
            for job in read_workloads(by_kind[VOLCANO_JOB], by_kind[PODGROUP], pods, warn=warn)]
    if other is not None:
        for job in jobs:  # the scheduler's own jobs rank first (running pods' rank does not matter)
            job.creation_index += len(other.jobs)
        jobs = [*other.jobs, *jobs]
    scheduler = other.scheduler if other is not None else "volcano"
    nodes, jobs, queues = _devices(nodes, by_kind[NODE], jobs, queues, scheduler, source, warn)
    instance = Instance(
        nodes=nodes,
        hypernodes=hypernodes,
        constraint_trees=other.constraint_trees if other is not None else [],
        jobs=jobs,
        queues=queues,
        priority_classes=classes,
        disruption_budgets=_unique(
            [read_disruption_budget(d) for d in by_kind[PDB]], by_kind[PDB], namespaced=True),
        source=source,
        scheduler=scheduler,
        kube_scoring=read_scheduler_config(by_kind[CONFIG_KIND], warn),
    )
    origin = {
        doc.object_name(namespaced=True).replace(f"{doc.kind}/", f"{kind}/", 1): doc.file
        for kind, docs in (("Job", by_kind[PODGROUP]), ("Job", by_kind[VOLCANO_JOB]),
                           ("Pod", by_kind[POD]))
        for doc in docs
    }
    origin.update((doc.object_name(namespaced=False), doc.file) for doc in by_kind[QUEUE])
    warn_tolerated(instance, warn, origin)
    return instance


def _devices(nodes: list[Node], docs: list[Document], jobs: list[Job], queues: list[Queue],
             scheduler: str, source: str, warn: Callable[[str], None]
             ) -> tuple[list[Node], list[Job], list[Queue]]:
    """Time-sliced GPUs read as devices (:mod:`~toposolve.formats.k8s.timeslicing`) and every
    running pod of the per-device resource on devices."""
    replicas = shared_replicas(nodes, docs, warn)
    shared = next((t.device_share.resource for j in jobs for t in j.tasks
                   if t.device_share is not None), None)
    if replicas > 1 and (shared is not None or scheduler == "kueue"):
        why = (f"pods share {shared} per device already" if shared is not None
               else "Kueue's quotas count replicas")
        warn(f"{source}: GPU nodes share their GPUs as {replicas} replicas, but {why}; {GPU} is "
             "read as a plain count")
        replicas = 1
    nodes, jobs, queues = time_sliced(without_pooled_milli(nodes, jobs), jobs, queues, replicas)
    return nodes, place_unrecorded(nodes, jobs, source, warn), queues


def _pod_key(doc: Document) -> tuple[str, str]:
    return (doc.namespace, doc.name)


def _own_priorities_only(job: Job) -> Job:
    """Drop a pod PriorityClass that repeats the job's (Volcano copies the PodGroup's onto its
    pods): the model keeps a task's class only where it differs, so both forms read alike."""
    for task in job.tasks:
        if task.constraints.priority_class == job.priority_class:
            task.constraints.priority_class = None
    return job


def _unique(objects: list, docs: list[Document], *, namespaced: bool = False) -> list:
    """Reject a second object of the same kind and name (and namespace, when ``namespaced``)."""

    def fail(position: int, key: str) -> InputError:
        doc = docs[position]
        what = f"{doc.kind} {key!r}" if namespaced else f"{doc.kind} name {key!r}"
        return InputError(f"duplicate {what}", file=doc.file,
                          obj=doc.object_name(namespaced=namespaced), field="metadata.name")

    reject_duplicates((o.key if namespaced else o.name for o in objects), fail)
    return objects


def _root(doc: Document) -> Field:
    return Field.root(doc, doc.object_name(namespaced=False))


def read_node(doc: Document) -> Node:
    root = _root(doc)
    status = root["status"]
    allocatable = status["allocatable"] if status["allocatable"].present else status["capacity"]
    taints = [
        build(Taint, t, key=t["key"].required_text(), value=t["value"].text(""),
              effect=t["effect"].required_text())
        for t in root.at("spec.taints").elements()
    ]
    return build(
        Node,
        root,
        {
            "name": "metadata.name",
            "labels": "metadata.labels",
            "allocatable": allocatable.path,
            "unschedulable": "spec.unschedulable",
            "taints": "spec.taints",
        },
        name=object_name(root),
        labels=root.at("metadata.labels").string_map(),
        allocatable=allocatable.resources(),
        unschedulable=root.at("spec.unschedulable").boolean(False) or not _ready(status),
        taints=taints,
    )


def _ready(status: Field) -> bool:
    """False when the node's ``Ready`` condition is listed and is not ``True``."""
    return all(c["status"].text("") == "True" for c in status["conditions"].elements()
               if c["type"].text("") == "Ready")


def read_hypernode(doc: Document) -> HyperNode:
    root = _root(doc)
    spec = root["spec"]
    members = [_member(m) for m in spec["members"].elements()]
    return build(
        HyperNode,
        root,
        {
            "name": "metadata.name",
            "tier": "spec.tier",
            "tier_name": "spec.tierName",
            "members": "spec.members",
        },
        name=object_name(root),
        tier=spec["tier"].integer(required=True, minimum=0, numeric_string=True),
        tier_name=spec["tierName"].text("") or None,
        members=members,
    )


def _member(member: Field) -> Member:
    kind = member["type"].text("") or "Node"
    if kind not in ("Node", "HyperNode"):
        raise member["type"].fail(f"unknown member type {kind!r} (expected Node or HyperNode)")
    selector = member["selector"]
    given = [name for name in MEMBER_SELECTORS if selector[name].present]
    if len(given) != 1:
        found = f"found {' and '.join(given)}" if given else "found none"
        hint = ""
        if member["name"].present:  # the sloppy `- name: node0` form some examples use
            hint = "; members name their target as selector.exactMatch.name, not name"
        raise selector.fail(
            f"exactly one of exactMatch, regexMatch, labelMatch must be set ({found}){hint}"
        )
    values = {
        "exact_match": selector.at("exactMatch.name").required_text()
        if given[0] == "exactMatch"
        else None,
        "regex_match": selector.at("regexMatch.pattern").required_text()
        if given[0] == "regexMatch"
        else None,
        "label_match": label_selector(selector["labelMatch"]) if given[0] == "labelMatch" else None,
    }
    return build(Member, member, type=kind, selector=build(MemberSelector, selector, **values))


def read_queue(doc: Document) -> Queue:
    root = _root(doc)
    spec = root["spec"]
    return build(
        Queue,
        root,
        {
            "name": "metadata.name",
            "guarantee": "spec.guarantee.resource",
            "weight": "spec.weight",
            "capability": "spec.capability",
            "deserved": "spec.deserved",
            "reclaimable": "spec.reclaimable",
            "priority": "spec.priority",
            "parent": "spec.parent",
        },
        name=object_name(root),
        weight=spec["weight"].integer(1, minimum=0),
        capability=spec["capability"].resources(),
        deserved=spec["deserved"].resources(),
        guarantee=spec.at("guarantee.resource").resources(),
        reclaimable=spec["reclaimable"].boolean(True),
        priority=spec["priority"].integer(0),
        parent=spec["parent"].text("") or None,  # Go's omitempty: "" is unset
    )


def read_priority_class(doc: Document) -> PriorityClass:
    root = _root(doc)
    return build(
        PriorityClass,
        root,
        {"name": "metadata.name"},
        name=object_name(root),
        value=root["value"].integer(required=True),
        global_default=root["globalDefault"].boolean(False),
    )


def read_disruption_budget(doc: Document) -> PodDisruptionBudget:
    """A ``policy/v1 PodDisruptionBudget`` (``spec.selector``, ``minAvailable`` /
    ``maxUnavailable``, ``unhealthyPodEvictionPolicy``)."""
    root = Field.root(doc, doc.object_name(namespaced=True))
    spec = root["spec"]
    selector = spec["selector"]
    return build(
        PodDisruptionBudget,
        root,
        {"name": "metadata.name", "namespace": "metadata.namespace",
         "selector": "spec.selector", "min_available": "spec.minAvailable",
         "max_unavailable": "spec.maxUnavailable",
         "unhealthy_pod_eviction_policy": "spec.unhealthyPodEvictionPolicy"},
        name=object_name(root),
        namespace=doc.namespace,
        selector=label_selector(selector, strict=True) if selector.present else None,
        min_available=spec["minAvailable"].value,
        max_unavailable=spec["maxUnavailable"].value,
        unhealthy_pod_eviction_policy=spec["unhealthyPodEvictionPolicy"].text(),
    )


def read_other_scheduler(
    by_kind: dict[tuple[str, str], list[Document]],
    nodes: Sequence[Node],
    known_classes: set[str],
    pods: Sequence[Document],
    warn: Callable[[str], None],
) -> SchedulerPart | None:
    """The Kueue, KAI or Workload API (kube) part of the input.

    Parameters
    ----------
    by_kind
        The input's documents by (API group, kind).
    nodes
        The nodes read.
    known_classes
        Names of the PriorityClasses read.
    pods
        The input's Pod documents.
    warn
        Called with one line per skipped object.

    Returns
    -------
    SchedulerPart or None
        None when the input holds none of these schedulers' kinds.
    """
    jobs = [d for k in JOB_KINDS for d in by_kind.get(k, [])]
    has_kueue = any(by_kind.get(k) for k in KUEUE_KINDS) or any(is_queued(d) for d in jobs)
    has_kai = any(by_kind.get(k) for k in KAI_KINDS)
    has_kube = any(by_kind.get(k) for k in KUBE_KINDS)
    if has_kueue + has_kai + has_kube > 1:
        kinds = KUBE_KINDS if has_kube else KAI_KINDS
        first = next(d for k in kinds for d in by_kind.get(k, []))
        raise Field.root(first, first.object_name(namespaced=False)).fail(
            "the input mixes Kueue, KAI and Workload API objects: give one scheduler's objects "
            "per instance"
        )
    if has_kueue:
        return read_kueue_part(by_kind, nodes, known_classes, pods, warn)
    for doc in jobs:  # batch Jobs, JobSets, PyTorchJobs of other schedulers: not used
        name = doc.object_name(namespaced=doc.declares_namespace)
        warn(f"{doc.file}: {name}: skipped (kind not used by toposolve)")
    if has_kai:
        return read_kai_part(by_kind, nodes, known_classes, pods, warn)
    if has_kube:
        return read_kube_part(by_kind, nodes, pods, warn)
    return None
