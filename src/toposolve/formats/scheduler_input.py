"""Objects of another scheduler than Volcano (Kueue, KAI) → parts of the :class:`Instance`.

:func:`read_other_scheduler` is called by the manifest reader when the input holds Kueue or KAI
kinds. It returns the HyperNodes (from the scheduler's ``Topology``), queues, priority classes and
jobs, and the keys of the pods it accounted for (a Kueue workload's pods, a KAI PodGroup's pods),
which the Volcano reader then leaves alone. In a Kueue input, a pending pod of no Workload is
skipped (warning): Kueue admits Workloads only; bound pods of no Workload hold their node's
capacity (Kueue's TAS subtracts the usage of such non-TAS pods). Jobs are ranked by ``metadata.creationTimestamp``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from toposolve.core.instance import HyperNode, Job, Node, PriorityClass, Queue
from toposolve.formats.k8s.fields import Document, Field
from toposolve.formats.k8s.specs import creation_time

WORKLOAD_ANNOTATION = "kueue.x-k8s.io/workload"
LITERAL_PRIORITY_PREFIX = "priority-"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass
class SchedulerPart:
    scheduler: str
    hypernodes: list[HyperNode] = field(default_factory=list)
    queues: list[Queue] = field(default_factory=list)
    classes: list[PriorityClass] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)
    consumed_pods: set[tuple[str, str]] = field(default_factory=set)


def rank_jobs(jobs: list[tuple[Job, Document]]) -> None:
    """creation_index = rank by creationTimestamp (missing last), then order of appearance."""
    def key(item: tuple[Job, Document]):
        created = creation_time(Field.root(item[1], item[0].key))
        return (created is None, created or _EPOCH, item[1].position)

    for rank, (job, _) in enumerate(sorted(jobs, key=key)):
        job.creation_index = rank


def read_kueue_part(
    by_kind: dict[tuple[str, str], list[Document]],
    nodes: Sequence[Node],
    known_classes: set[str],
    pods: Sequence[Document],
    warn: Callable[[str], None],
) -> SchedulerPart:
    from toposolve.formats.kueue.jobs import JOB_KINDS, QUEUE_LABEL, as_workload, is_queued, owners
    from toposolve.formats.kueue.reader import WORKLOAD, read_cluster
    from toposolve.formats.kueue.workload import read_workload

    cluster, hypernodes, queues, classes = read_cluster(by_kind, nodes, warn)
    part = SchedulerPart("kueue", hypernodes, queues, classes)
    names = known_classes | {c.name for c in classes}
    read: list[tuple[Job, Document]] = []
    literal_values: set[int] = set()
    workloads = list(by_kind.get(WORKLOAD, []))
    owned = owners(workloads)
    for kind in JOB_KINDS:
        for doc in by_kind.get(kind, []):
            if not is_queued(doc):
                warn(f"{doc.file}: {doc.object_name(namespaced=True)}: skipped (no {QUEUE_LABEL} label: not Kueue's)")
            elif (doc.namespace, doc.kind, doc.name) not in owned:
                workloads.append(as_workload(doc))
    for doc in workloads:
        got = read_workload(doc, cluster, list(nodes), names, warn)
        if got is None:
            continue
        job, literal = got
        if literal is not None:
            job.priority_class = f"{LITERAL_PRIORITY_PREFIX}{literal}"
            literal_values.add(literal)
        read.append((job, doc))
    part.classes += [PriorityClass(name=f"{LITERAL_PRIORITY_PREFIX}{v}", value=v) for v in sorted(literal_values)]
    workloads = {(j.namespace, j.name) for j, _ in read}
    for doc in pods:
        key = (doc.namespace, doc.annotations.get(WORKLOAD_ANNOTATION, ""))
        if key in workloads:
            part.consumed_pods.add((doc.namespace, doc.name))
        elif _pending(doc):  # Kueue admits Workloads only; a bound pod holds capacity whoever placed it
            part.consumed_pods.add((doc.namespace, doc.name))
            warn(f"{doc.file}: {doc.object_name(namespaced=True)}: skipped (pending pod of no Workload in the input: not Kueue's to place)")
    rank_jobs(read)
    part.jobs = [j for j, _ in read]
    return part


def _pending(pod: Document) -> bool:
    """Not bound to a node and not finished."""
    spec, status = pod.body.get("spec") or {}, pod.body.get("status") or {}
    return not spec.get("nodeName") and status.get("phase") not in ("Succeeded", "Failed")


def read_other_scheduler(
    by_kind: dict[tuple[str, str], list[Document]],
    nodes: Sequence[Node],
    known_classes: set[str],
    pods: Sequence[Document],
    warn: Callable[[str], None],
) -> SchedulerPart | None:
    """The Kueue or KAI part of the input, or None when it holds neither's kinds."""
    from toposolve.formats.kai.reader import KAI_KINDS, read_kai_part
    from toposolve.formats.kueue.jobs import JOB_KINDS, is_queued
    from toposolve.formats.kueue.reader import KUEUE_KINDS

    jobs = [d for k in JOB_KINDS for d in by_kind.get(k, [])]
    has_kueue = any(by_kind.get(k) for k in KUEUE_KINDS) or any(is_queued(d) for d in jobs)
    has_kai = any(by_kind.get(k) for k in KAI_KINDS)
    if has_kueue and has_kai:
        first = next(d for k in KAI_KINDS for d in by_kind.get(k, []))
        raise Field.root(first, first.object_name(namespaced=False)).fail(
            "the input mixes Kueue and KAI objects: give one scheduler's objects per instance"
        )
    if has_kueue:
        return read_kueue_part(by_kind, nodes, known_classes, pods, warn)
    for doc in jobs:  # batch Jobs, JobSets, PyTorchJobs of other schedulers: not used
        warn(f"{doc.file}: {doc.object_name(namespaced=doc.declares_namespace)}: skipped (kind not used by toposolve)")
    if has_kai:
        return read_kai_part(by_kind, nodes, known_classes, pods, warn)
    return None
