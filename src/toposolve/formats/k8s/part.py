"""What a Kueue or KAI reader hands the manifest reader (:class:`SchedulerPart`), and the job
ranking both use."""

from __future__ import annotations

from dataclasses import dataclass, field

from toposolve.core.instance import ConstraintTree, HyperNode, Job, PriorityClass, Queue
from toposolve.formats.k8s.comm import read_job_annotations
from toposolve.formats.k8s.fields import Document, Field
from toposolve.formats.k8s.specs import creation_order, creation_time


@dataclass
class SchedulerPart:
    """The objects one scheduler's reader made of the input.

    ``consumed_pods`` holds the (namespace, name) of the pods it accounted for, which the
    Volcano reader then leaves alone.
    """

    scheduler: str
    hypernodes: list[HyperNode] = field(default_factory=list)
    queues: list[Queue] = field(default_factory=list)
    classes: list[PriorityClass] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)
    consumed_pods: set[tuple[str, str]] = field(default_factory=set)
    # Topologies crossing the main tree over the same nodes (KAI), each a tree of its own
    constraint_trees: list[ConstraintTree] = field(default_factory=list)


def rank_jobs(jobs: list[tuple[Job, Document]]) -> None:
    """Set each job's ``creation_index``: rank by creationTimestamp (missing last), then by order
    of appearance; and its toposolve annotations (parallelism, movable, move-cost).

    Parameters
    ----------
    jobs
        The jobs read, each with the document it was read from; updated in place.
    """

    def key(item: tuple[Job, Document]):
        return creation_order(creation_time(Field.root(item[1], item[0].key)), item[1].position)

    for job, doc in jobs:
        read_job_annotations(job, Field.root(doc, doc.object_name(namespaced=True)))
    for rank, (job, _) in enumerate(sorted(jobs, key=key)):
        job.creation_index = rank
