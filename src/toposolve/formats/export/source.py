"""What ``toposolve export`` needs to know about the input besides the plan.

The instance says which job and podset a planned pod belongs to; the documents of the dump say
whether that pod exists and is pending, which object owns a job (the suspended batch Job,
JobSet, PyTorchJob or the LeaderWorkerSet whose pod template is patched), the Workload of a
Kueue job and the topology levels of a Kueue or KAI cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from toposolve.core.instance import Instance, Job, Node, Task
from toposolve.core.label_levels import HOSTNAME_LABEL
from toposolve.formats.k8s.fields import Document
from toposolve.formats.kueue.jobs import JOB_KINDS, LWS_NAME_LABEL, is_queued, workload_names
from toposolve.formats.kueue.reader import KUEUE_GROUP

POD = ("", "Pod")
WORKLOAD = (KUEUE_GROUP, "Workload")
VOLCANO_JOB = ("batch.volcano.sh", "Job")
TOPOLOGY_KINDS = ((KUEUE_GROUP, "Topology"), ("kai.scheduler", "Topology"))
RESOURCE_FLAVOR = (KUEUE_GROUP, "ResourceFlavor")
CLUSTER_QUEUE = (KUEUE_GROUP, "ClusterQueue")


@dataclass(frozen=True)
class Owner:
    """The object whose pod template makes a job's pods (``doc`` None: not in the dump)."""

    api_version: str
    kind: str
    name: str
    namespace: str
    doc: Document | None = None

    @property
    def group(self) -> str:
        return self.api_version.rsplit("/", 1)[0] if "/" in self.api_version else ""


@dataclass
class ExportSource:
    """The instance of a dump and the dump's objects, indexed for the export forms."""

    instance: Instance
    docs: list[Document] = field(default_factory=list)
    native: bool = False  # the compact native format: pods are implied, not listed

    def __post_init__(self) -> None:
        self.by_kind: dict[tuple[str, str], list[Document]] = {}
        for doc in self.docs:
            self.by_kind.setdefault((doc.api_group, doc.kind), []).append(doc)
        self.pods = {f"{d.namespace}/{d.name}": d for d in self.by_kind.get(POD, [])}
        self.nodes = {n.name: n for n in self.instance.nodes}
        self.jobs = {j.key: j for j in self.instance.jobs}
        self._pod_job: dict[str, tuple[Job, Task]] = {}
        for job in self.instance.jobs:
            for task in job.tasks:
                for i in range(task.replicas):
                    self._pod_job[f"{job.namespace}/{task.pod_name(job.name, i)}"] = (job, task)

    @property
    def scheduler(self) -> str:
        return self.instance.scheduler

    def job_of(self, pod: str) -> tuple[Job, Task] | None:
        """The job and task (podset) a planned pod ``namespace/name`` belongs to."""
        return self._pod_job.get(pod)

    def workload(self, job: Job) -> Document | None:
        """The Kueue Workload of ``job`` in the dump (None: a queued job without one yet)."""
        return next((d for d in self.by_kind.get(WORKLOAD, [])
                     if d.namespace == job.namespace and d.name == job.name), None)

    def owner(self, job: Job) -> Owner | None:
        """The object that makes ``job``'s pods: the Workload's owner, or the queued job object
        Kueue has not made a Workload for yet (named ``<kind>-<name>``, an LWS group
        ``<kind>-<name>-<group>``), or the vcjob."""
        workload = self.workload(job)
        if workload is not None:
            return self._workload_owner(workload)
        for kind in (*JOB_KINDS, VOLCANO_JOB):
            for doc in self.by_kind.get(kind, []):
                if doc.namespace != job.namespace:
                    continue
                if kind == VOLCANO_JOB:
                    mine = doc.name == job.name
                else:
                    mine = is_queued(doc) and job.name in workload_names(doc)
                if mine:
                    return Owner(str(doc.body.get("apiVersion")), doc.kind, doc.name,
                                 doc.namespace, doc)
        return None

    def running_owner(self, job: Job) -> Owner | None:
        """The object that makes ``job``'s running pods: :meth:`owner`, else the controller
        ``ownerReference`` of the first of its pods in the dump (a plain batch Job, JobSet…)."""
        owner = self.owner(job)
        if owner is not None:
            return owner
        names = [f"{job.namespace}/{t.pod_name(job.name, i)}" for t in job.tasks
                 for i in sorted(t.running)]
        pod = next((self.pods[n] for n in names if n in self.pods), None)
        refs = [r for r in (pod.metadata.get("ownerReferences") or [] if pod else [])
                if isinstance(r, dict) and r.get("controller")]
        if not refs:
            return None
        api_version, kind, name = (str(refs[0].get(k, "")) for k in ("apiVersion", "kind", "name"))
        group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
        doc = next((d for d in self.by_kind.get((group, kind), [])
                    if d.namespace == job.namespace and d.name == name), None)
        return Owner(api_version, kind, name, job.namespace, doc)

    def _workload_owner(self, workload: Document) -> Owner | None:
        refs = [r for r in workload.metadata.get("ownerReferences") or [] if isinstance(r, dict)]
        ref = next((r for r in refs if r.get("controller")), refs[0] if refs else None)
        if ref is None:
            return None
        api_version, kind, name = (str(ref.get(k, "")) for k in ("apiVersion", "kind", "name"))
        group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
        doc = next((d for d in self.by_kind.get((group, kind), [])
                    if d.namespace == workload.namespace and d.name == name), None)
        return Owner(api_version, kind, name, workload.namespace, doc)

    def lws_pod(self, owner: Owner) -> str | None:
        """A pod (``namespace/name``) of the dump that the LeaderWorkerSet ``owner`` made."""
        return next((key for key, d in self.pods.items() if d.namespace == owner.namespace
                     and d.labels.get(LWS_NAME_LABEL) == owner.name), None)

    def topology_levels(self, job: Job | None = None) -> list[str]:
        """Level label keys of the cluster's Kueue or KAI Topology, top first (empty: none, or
        a Volcano input): the one ``job``'s flavor names (``Job.topology_name``), else the one
        a TAS ResourceFlavor names, else the first."""
        topologies = {d.name: d for k in TOPOLOGY_KINDS for d in self.by_kind.get(k, [])}
        named = [str((d.body.get("spec") or {}).get("topologyName") or "")
                 for d in self.by_kind.get(RESOURCE_FLAVOR, [])]
        if job is not None and job.topology_name is not None:
            named.insert(0, job.topology_name)
        name = next((n for n in named if n in topologies), next(iter(topologies), None))
        if name is None:
            return []
        levels = (topologies[name].body.get("spec") or {}).get("levels") or []
        return [str(level.get("nodeLabel")) for level in levels if isinstance(level, dict)]

    def tas_flavor(self, job: Job) -> str | None:
        """The name of the flavor with a topology of ``job``'s ClusterQueue that the Kueue
        reader chose (the first naming the job's Topology), else its first with a topology."""
        tas = {d.name: (d.body.get("spec") or {}).get("topologyName")
               for d in self.by_kind.get(RESOURCE_FLAVOR, [])
               if (d.body.get("spec") or {}).get("topologyName")}
        names = [str(flavor["name"])
                 for doc in self.by_kind.get(CLUSTER_QUEUE, []) if doc.name == job.queue
                 for group in (doc.body.get("spec") or {}).get("resourceGroups") or []
                 for flavor in group.get("flavors") or [] if flavor.get("name") in tas]
        return next((n for n in names if tas[n] == job.topology_name), names[0] if names else None)


def hostname(node: Node) -> str:
    """The node's ``kubernetes.io/hostname`` label (its name when unlabelled)."""
    return node.labels.get(HOSTNAME_LABEL, node.name)


def pod_problem(doc: Document | None) -> str | None:
    """Why a pod cannot be bound now (missing, bound, finished, gated), or None."""
    if doc is None:
        return "is not in the dump (not created yet)"
    spec: dict[str, Any] = doc.body.get("spec") or {}
    if spec.get("nodeName"):
        return f"is already bound to {spec['nodeName']}"
    phase = (doc.body.get("status") or {}).get("phase") or "Pending"
    if phase != "Pending":
        return f"is {phase}, not Pending"
    gates = [g.get("name") for g in spec.get("schedulingGates") or [] if isinstance(g, dict)]
    if gates:
        return (f"carries scheduling gates ({', '.join(map(str, gates))}): the API server "
                "refuses to bind a gated pod")
    return None


def load_export_source(paths: Sequence[str], warn: Callable[[str], None]) -> ExportSource:
    """Read the instance and the documents of ``paths`` (parsed once)."""
    from toposolve.formats.load import instance_from_bodies, read_documents
    from toposolve.formats.native.reader import is_native

    docs = read_documents(paths)
    instance = instance_from_bodies([(d.body, d.file) for d in docs], ", ".join(paths), warn)
    native = any(is_native(d.body) for d in docs)
    return ExportSource(instance, [] if native else docs, native)
