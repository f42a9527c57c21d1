"""Volcano Jobs, PodGroups and Pods of the input → the instance's :class:`Job` list.

A pod belongs to a Volcano Job of the input (by label ``volcano.sh/job-name`` or its PodGroup),
else to the PodGroup its group annotation names, else to a one-pod job. A Volcano Job's own
PodGroup is skipped (the Job is read instead). Finished objects, and pending pods of another
scheduler, are skipped (warning where it matters); a pod with ``spec.nodeName`` uses capacity,
whoever scheduled it. Job names must be unique; ``creation_index`` is the rank by
``metadata.creationTimestamp``. The full rules are in ``docs/formats.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from datetime import datetime

from toposolve.core.instance import Job
from toposolve.formats.k8s.comm import read_job_annotations
from toposolve.formats.k8s.fields import Document, Field
from toposolve.formats.k8s.specs import FINISHED_PHASES, creation_order, creation_time
from toposolve.formats.volcano.job import (
    JOB_NAME_LABEL,
    TERMINAL_JOB_PHASES,
    job_phase,
    mark_running,
    read_volcano_job,
    volcano_owner,
)
from toposolve.formats.volcano.podgroup import (
    GROUP_NAME_ANNOTATION,
    PodGroupRecord,
    PodRecord,
    podgroup_job,
    read_pod,
    read_podgroup,
    shadow_job,
)

VOLCANO_SCHEDULER = "volcano"


@dataclass
class _Gang:
    job: Job
    created: datetime | None
    position: int
    root: Field


def read_workloads(job_docs: Sequence[Document], podgroup_docs: Sequence[Document],
                   pod_docs: Sequence[Document], *, warn: Callable[[str], None]) -> list[Job]:
    """All gangs of the input, in order of appearance, with creation ranks set."""
    joined = _Join(warn)
    for doc in job_docs:
        joined.add_volcano_job(doc)
    for doc in podgroup_docs:
        joined.add_podgroup(doc)
    for doc in pod_docs:
        joined.add_pod(doc)
    return joined.jobs()


class _Join:
    """Objects read so far, keyed by (namespace, name)."""

    def __init__(self, warn: Callable[[str], None]) -> None:
        self.warn = warn
        self.volcano: dict[tuple[str, str], _Gang] = {}
        self.finished_jobs: set[tuple[str, str]] = set()
        self.podgroups: dict[tuple[str, str], PodGroupRecord] = {}
        self.owned_by: dict[tuple[str, str], tuple[str, str]] = {}  # a Job's PodGroup -> Job
        self.skipped_podgroups: set[tuple[str, str]] = set()
        self.pods: set[tuple[str, str]] = set()
        self.shadows: list[PodRecord] = []

    def skip(self, root: Field, why: str) -> None:
        self.warn(f"{root.file}: {root.obj}: skipped ({why})")

    def add_volcano_job(self, doc: Document) -> None:
        root = Field.root(doc, doc.object_name(namespaced=True))
        job = read_volcano_job(root)
        key = (job.namespace, job.name)
        _claim((self.volcano, self.finished_jobs), key, root, "Job")
        if job_phase(root) in TERMINAL_JOB_PHASES:
            self.finished_jobs.add(key)
            self.skip(root, f"job phase {job_phase(root)}")
        else:
            self.volcano[key] = _Gang(job, creation_time(root), doc.position, root)

    def add_podgroup(self, doc: Document) -> None:
        pg = read_podgroup(Field.root(doc, doc.object_name(namespaced=True)), doc.position)
        key = (pg.namespace, pg.name)
        _claim((self.podgroups, self.owned_by, self.skipped_podgroups), key, pg.root, "PodGroup")
        owner = volcano_owner(pg.root, pg.namespace)
        if owner in self.volcano or owner in self.finished_jobs:
            self.owned_by[key] = owner
            self.skip(pg.root, f"created for Job/{owner[0]}/{owner[1]}, which is read instead")
        elif pg.phase == "Completed":
            self.skipped_podgroups.add(key)
            self.skip(pg.root, "PodGroup phase Completed")
        else:
            self.podgroups[key] = pg

    def add_pod(self, doc: Document) -> None:
        pod = read_pod(Field.root(doc, doc.object_name(namespaced=True)), doc.position)
        if pod.key in self.pods:
            raise pod.fail(f"duplicate Pod name {pod.name!r}", "metadata.name")
        self.pods.add(pod.key)
        group = pod.annotations.get(GROUP_NAME_ANNOTATION)
        group_key = (pod.namespace, group or "")
        owner = (pod.namespace, pod.labels.get(JOB_NAME_LABEL, ""))
        if owner not in self.volcano and owner not in self.finished_jobs:
            owner = self.owned_by.get(group_key, owner)
        if pod.phase in FINISHED_PHASES:
            if pod.phase == "Succeeded" and group_key in self.podgroups:
                self.podgroups[group_key].succeeded.append(pod)
            return
        if owner in self.finished_jobs or group_key in self.skipped_podgroups:
            return  # left over from a finished job
        if pod.node is None and pod.scheduler not in (None, VOLCANO_SCHEDULER):
            self.skip(pod.root, f"pending pod of scheduler {pod.scheduler!r}")
        elif owner in self.volcano:
            mark_running(self.volcano[owner].job, pod)
        elif group_key in self.podgroups:
            self.podgroups[group_key].members.append(pod)
        else:
            self.shadows.append(pod)

    def jobs(self) -> list[Job]:
        gangs = list(self.volcano.values())
        for pg in self.podgroups.values():
            if pg.members or pg.min_member <= len(pg.succeeded):
                gangs.append(_Gang(podgroup_job(pg), pg.created, pg.position, pg.root))
            else:  # its pods are not created yet, or the dump left them out
                self.skip(pg.root, f"minMember {pg.min_member} but no live pod in the input")
        gangs += [_Gang(shadow_job(p, self.warn), p.created, p.position, p.root)
                  for p in self.shadows]
        gangs.sort(key=lambda g: g.position)
        owners: dict[tuple[str, str], Field] = {}
        for gang in gangs:
            key = (gang.job.namespace, gang.job.name)
            if key in owners:
                raise gang.root.fail(
                    f"job name {key[0]}/{key[1]} is already used by {owners[key].obj} "
                    f"({owners[key].file})",
                    suffix="metadata.name",
                )
            owners[key] = gang.root
        for gang in gangs:
            read_job_annotations(gang.job, gang.root)
        ranked = sorted(gangs, key=lambda g: creation_order(g.created, g.position))
        for rank, gang in enumerate(ranked):
            gang.job.creation_index = rank
        return [g.job for g in gangs]


def _claim(taken: Sequence[Container[tuple[str, str]]], key: tuple[str, str], root: Field,
           kind: str) -> None:
    """Raise if ``key`` is already in one of the ``taken`` name sets."""
    if any(key in names for names in taken):
        raise root.fail(f"duplicate {kind} name {key[1]!r} in namespace {key[0]!r}",
                        suffix="metadata.name")
