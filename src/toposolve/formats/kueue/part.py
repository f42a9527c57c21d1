"""Kueue objects → the Kueue part of an :class:`Instance` (:func:`read_kueue_part`).

In a Kueue input a pending pod of no Workload is skipped (warning): Kueue admits Workloads only;
bound pods of no Workload hold their node's capacity (Kueue's TAS subtracts the usage of such
non-TAS pods). The gated pods a queued LeaderWorkerSet made already are its groups' pods, read
once through its Workloads: skipped silently. Jobs are ranked by ``metadata.creationTimestamp``.
A bound Pod of a Workload (annotation ``kueue.x-k8s.io/workload``, podset label
``kueue.x-k8s.io/podset``) that is not Ready (:func:`~toposolve.formats.volcano.podgroup.
pod_health`) marks a running pod of its podset on its node not Ready (``Task.unready``; the
assignment, not the Pod, says which pod index runs where: the lowest such index).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from toposolve.core.disruption import READY
from toposolve.core.instance import Job, Node, PriorityClass
from toposolve.formats.k8s.fields import Document, Field, unread_line
from toposolve.formats.k8s.part import SchedulerPart, rank_jobs
from toposolve.formats.k8s.specs import FINISHED_PHASES
from toposolve.formats.kueue.elastic import pair_slices
from toposolve.formats.kueue.jobs import (
    JOB_KINDS,
    LEADER_WORKER_SET,
    LWS_NAME_LABEL,
    QUEUE_LABEL,
    as_workloads,
    ignored_layer_keys,
    is_queued,
    owners,
    unknown_annotations,
)
from toposolve.formats.kueue.reader import WORKLOAD, read_cluster
from toposolve.formats.kueue.workload import read_workload
from toposolve.formats.volcano.podgroup import pod_health

WORKLOAD_ANNOTATION = "kueue.x-k8s.io/workload"
PODSET_LABEL = "kueue.x-k8s.io/podset"  # Kueue's constants.PodSetLabel
LITERAL_PRIORITY_PREFIX = "priority-"


def read_kueue_part(
    by_kind: dict[tuple[str, str], list[Document]],
    nodes: Sequence[Node],
    known_classes: set[str],
    pods: Sequence[Document],
    warn: Callable[[str], None],
) -> SchedulerPart:
    """The Kueue objects of the input: Topology, queues, priority classes and Workloads.

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
    SchedulerPart
        Jobs are ranked by creationTimestamp; a Workload's literal priority becomes a class
        ``priority-<value>``.
    """
    cluster, hypernodes, queues, classes = read_cluster(by_kind, nodes, warn)
    part = SchedulerPart("kueue", hypernodes, queues, classes)
    part.constraint_trees = cluster.trees
    names = known_classes | {c.name for c in classes}
    read: list[tuple[Job, Document]] = []
    literal_values: set[int] = set()
    workload_docs, queued_lws = _workloads(by_kind, warn)
    pairs = pair_slices(workload_docs, warn)
    replaced = {(old.namespace, old.name) for old in pairs.values()}
    for doc in workload_docs:
        if (doc.namespace, doc.name) in replaced:
            continue  # its pods are the replacing slice's now
        got = read_workload(doc, cluster, list(nodes), names, warn,
                            pairs.get((doc.namespace, doc.name)))
        if got is None:
            continue
        job, literal = got
        if literal is not None:
            job.priority_class = f"{LITERAL_PRIORITY_PREFIX}{literal}"
            literal_values.add(literal)
        read.append((job, doc))
    part.classes += [
        PriorityClass(name=f"{LITERAL_PRIORITY_PREFIX}{v}", value=v) for v in sorted(literal_values)
    ]
    workloads = {(j.namespace, j.name) for j, _ in read} | replaced
    owner = {(j.namespace, j.name): j for j, _ in read}
    owner |= {(old.namespace, old.name): owner[new] for new, old in pairs.items() if new in owner}
    for doc in pods:
        key = (doc.namespace, doc.annotations.get(WORKLOAD_ANNOTATION, ""))
        lws = (doc.namespace, doc.labels.get(LWS_NAME_LABEL, ""))
        if key in workloads or (lws in queued_lws and _pending(doc)):
            part.consumed_pods.add((doc.namespace, doc.name))
            if key in owner:
                _read_health(owner[key], doc, warn)
        elif _pending(doc):  # Kueue admits Workloads only; a bound pod holds capacity anyway
            part.consumed_pods.add((doc.namespace, doc.name))
            warn(
                f"{doc.file}: {doc.object_name(namespaced=True)}: skipped (pending pod of no "
                "Workload in the input: not Kueue's to place)"
            )
    rank_jobs(read)
    part.jobs = [j for j, _ in read]
    return part


def _workloads(by_kind: dict[tuple[str, str], list[Document]], warn: Callable[[str], None]
               ) -> tuple[list[Document], set[tuple[str, str]]]:
    """The Workloads, plus those of each queued job object that no Workload owns; and the
    (namespace, name) of the queued LeaderWorkerSets among those objects."""
    workloads = list(by_kind.get(WORKLOAD, []))
    queued_lws: set[tuple[str, str]] = set()
    owned = owners(workloads)
    for kind in JOB_KINDS:
        for doc in by_kind.get(kind, []):
            if not is_queued(doc):
                name = doc.object_name(namespaced=True)
                warn(f"{doc.file}: {name}: skipped (no {QUEUE_LABEL} label: not Kueue's)")
            elif (doc.namespace, doc.kind, doc.name) not in owned:
                workloads.extend(as_workloads(doc))
                if (doc.api_group, doc.kind) == LEADER_WORKER_SET:
                    queued_lws.add((doc.namespace, doc.name))
                root = Field.root(doc, doc.object_name(namespaced=True))
                for key in unknown_annotations(doc, root):
                    warn(unread_line(doc, key, "pod template annotation"))
                for line in ignored_layer_keys(doc, root):
                    warn(f"{doc.file}: {root.obj}: {line}")
    return workloads, queued_lws


def _pending(pod: Document) -> bool:
    """Not bound to a node and not finished."""
    spec, status = pod.body.get("spec") or {}, pod.body.get("status") or {}
    return not spec.get("nodeName") and status.get("phase") not in FINISHED_PHASES


def _read_health(job: Job, pod: Document, warn: Callable[[str], None]) -> None:
    """Mark the running pod of ``job`` that bound Pod ``pod`` stands for not Ready where the Pod
    is not (``Task.unready``): the lowest running index of its podset on its node not marked
    yet; none there: one warning line, readiness not read."""
    node = (pod.body.get("spec") or {}).get("nodeName")
    health = pod_health(Field.root(pod, pod.object_name(namespaced=True)))
    if not node or health == READY:
        return
    name = pod.labels.get(PODSET_LABEL)
    # no podset label: only a one-podset Workload says which podset the Pod is of
    tasks = [t for t in job.tasks if t.name == name] if name else job.tasks[:len(job.tasks) == 1]
    free = [(t, i) for t in tasks
            for i, n in sorted(t.running.items()) if n == node and i not in t.unready]
    if not free:
        warn(f"{pod.file}: {pod.object_name(namespaced=True)}: readiness not read (its "
             f"Workload's assignment has no pod of podset {name or '?'!r} left on {node!r})")
        return
    task, index = free[0]
    task.unready[index] = health
