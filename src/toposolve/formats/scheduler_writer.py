"""Any instance → Kueue or KAI objects (``generate --format kueue|kai``).

The HyperNode tree becomes node labels, one label key per tier (``level_keys``), value = the
node's HyperNode of that tier; ``kubernetes.io/hostname`` is the lowest level (tier-1 HyperNodes
holding one node each are that level). Kueue keys are GKE's
(``cloud.google.com/gce-topology-block``, ``-subblock``, ``-host``), KAI keys EKS's
(``topology.k8s.aws/network-node-layer-1`` … ``-3``), top first; deeper trees get
``toposolve.formats/level-<tier>`` for the extra top tiers.

Jobs: hard topology → required level, soft → preferred level, partitions → slices (Kueue) or
SubGroups with a required level (KAI). Jobs with running pods are admitted Workloads (Kueue, with
a v1beta2 ``topologyAssignment``) or PodGroups whose pods carry ``nodeName`` (KAI). What a form
cannot say (other subGroupPolicies, minTaskMember) is left out and reported by ``warn``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toposolve.core.instance import Instance, Job, Node, Task
from toposolve.core.quantity import format_quantities
from toposolve.core.topology import build_topology
from toposolve.formats.kai.reader import PODGROUP_ANNOTATION, SUBGROUP_LABEL
from toposolve.formats.kueue.reader import HOSTNAME_LABEL, KUEUE_GROUP
from toposolve.formats.kueue.request import is_group
from toposolve.formats.volcano.writer import _metadata, _timestamp, node_manifest, pod_spec_manifest

GKE_KEYS = ("cloud.google.com/gce-topology-block", "cloud.google.com/gce-topology-subblock", "cloud.google.com/gce-topology-host")
EKS_KEYS = tuple(f"topology.k8s.aws/network-node-layer-{i}" for i in (1, 2, 3))
KUEUE_VERSION = f"{KUEUE_GROUP}/v1beta2"
KAI_SCHEDULER = "kai-scheduler"
TOPOLOGY_NAME = "default"


@dataclass
class Levels:
    """Level keys, top first (hostname last), and the key of each tier of the written tree."""

    keys: list[str]
    tier_keys: dict[int, str]

    def key_of(self, tier: int | None) -> str | None:
        """Level key of a tier; None for "no limit" (the root's tier or above)."""
        return None if tier is None else self.tier_keys.get(tier)


def level_labels(instance: Instance, style: tuple[str, ...]) -> tuple[Levels, list[Node]]:
    """The levels and the nodes relabelled with their level values."""
    topo = build_topology(instance.nodes, instance.hypernodes, source=instance.source)
    real = range(len(topo.names) - 1)
    top = topo.max_tier - 1  # real tiers bottom..top
    bottom = min((int(topo.tier[h]) for h in real), default=top + 1)
    per_node_leaves = top >= bottom and all(int(topo.node_count[h]) == 1 for h in real if topo.tier[h] == bottom)
    lowest_real = bottom + 1 if per_node_leaves else bottom
    tiers = list(range(top, lowest_real - 1, -1))  # top first
    extra = max(0, len(tiers) - len(style))
    keys = [f"toposolve.formats/level-{t}" for t in tiers[:extra]] + list(style[: len(tiers) - extra])
    at_tier = topo.node_at_tier
    nodes = []
    for i, node in enumerate(instance.nodes):
        labels = {k: v for k, v in node.labels.items() if k not in keys}
        for key, tier in zip(keys, tiers, strict=True):
            h = int(at_tier[i, tier])
            if h >= 0:
                labels[key] = topo.names[h]
        labels[HOSTNAME_LABEL] = node.name
        nodes.append(node.model_copy(update={"labels": labels}))
    tier_keys = dict(zip(tiers, keys, strict=True))
    if per_node_leaves:
        tier_keys[bottom] = HOSTNAME_LABEL
    return Levels([*keys, HOSTNAME_LABEL], tier_keys), nodes


def _template(job: Job, task: Task) -> dict[str, Any]:
    template: dict[str, Any] = {"spec": pod_spec_manifest(task.requests, task.constraints)}
    if task.labels:
        template["metadata"] = {"labels": dict(task.labels)}
    return template


def _unsupported(job: Job, warn: Callable[[str], None]) -> None:
    partitions = {t.name for t in job.tasks if t.partition is not None}
    if any(p.name not in partitions for p in job.subgroup_policies) or job.min_task_member or job.gang_groups:
        warn(f"Job/{job.key}: subGroupPolicies other than partitions, GangGroups and minTaskMember are left out")


def _podset_counts(job: Job) -> list[int]:
    """Pods of each written podset (the running ones of an admitted workload)."""
    running = any(t.running for t in job.tasks)
    counts = [len(t.running) if running else t.replicas for t in job.tasks]
    return [c for c in counts if c or not running]


def _kueue_group(job: Job, warn: Callable[[str], None]) -> bool:
    """Whether the job's tasks are written as one podset group (LeaderWorkerSet style); a job-level
    topology over tasks that cannot be one is written per podset, with a warning line."""
    counts = _podset_counts(job)
    if job.network_topology is None or len(counts) < 2:
        return False
    if is_group(counts):
        return True
    warn(f"Job/{job.key}: its network topology is written per podset (a Kueue podset group holds "
         f"exactly two podsets, one of a single pod; this job has {len(counts)} podsets of {counts} pods)")
    return False


def kueue_documents(instance: Instance, warn: Callable[[str], None]) -> list[dict[str, Any]]:
    """Nodes, Topology, ResourceFlavor, ClusterQueues, LocalQueues, priority classes, Workloads."""
    levels, nodes = level_labels(instance, GKE_KEYS)
    docs: list[dict[str, Any]] = [node_manifest(n) for n in nodes]
    docs.append(_kueue_obj("Topology", TOPOLOGY_NAME, {"levels": [{"nodeLabel": k} for k in levels.keys]}))
    flavors = _flavors(instance, warn)
    for pool, name in sorted(flavors.items(), key=lambda item: item[1]):
        docs.append(_kueue_obj("ResourceFlavor", name, {"topologyName": TOPOLOGY_NAME, **({"nodeLabels": dict(pool)} if pool else {})}))
    totals: dict[str, int] = {}
    for n in instance.nodes:
        for r, a in n.allocatable.items():
            totals[r] = totals.get(r, 0) + a
    queues = sorted({j.queue for j in instance.jobs} | {q.name for q in instance.queues})
    capability = {q.name: q.capability for q in instance.queues}
    for q in queues:
        quota = {**totals, **capability.get(q, {})}
        docs.append(_kueue_obj("ClusterQueue", q, {
            "namespaceSelector": {},
            "resourceGroups": [{
                "coveredResources": sorted(quota),
                "flavors": [{"name": flavors.get(_queue_pool(instance, q), "tas-flavor"), "resources": [
                    {"name": r, "nominalQuota": v} for r, v in format_quantities(dict(sorted(quota.items()))).items()
                ]}],
            }],
        }))
    for ns, q in sorted({(j.namespace, j.queue) for j in instance.jobs}):
        docs.append({**_kueue_obj("LocalQueue", q, {"clusterQueue": q}), "metadata": _metadata(q, ns)})
    for pc in instance.priority_classes:
        docs.append({"apiVersion": KUEUE_VERSION, "kind": "WorkloadPriorityClass", "metadata": _metadata(pc.name), "value": pc.value})
    values = {pc.name: pc.value for pc in instance.priority_classes}
    for job in instance.jobs:
        _unsupported(job, warn)
        docs.append(_workload(job, levels, values, _kueue_group(job, warn)))
    return docs


def _queue_pool(instance: Instance, queue: str) -> tuple[tuple[str, str], ...]:
    """The node pool of a queue's first job (a ClusterQueue places with one TAS flavor)."""
    job = next((j for j in instance.jobs if j.queue == queue), None)
    return tuple(sorted(job.node_pool.items())) if job is not None else ()


def _flavors(instance: Instance, warn: Callable[[str], None]) -> dict[tuple[tuple[str, str], ...], str]:
    """A ResourceFlavor per node pool the queues use (``tas-flavor`` for none, ``tas-flavor-<k>``
    with the pool as ``nodeLabels``); a job whose pool differs from its queue's gets a warning
    line (its pods keep the pool's labels as a nodeSelector)."""
    names = {(): "tas-flavor"}
    queues = sorted({j.queue for j in instance.jobs} | {q.name for q in instance.queues})
    for q in queues:
        pool = _queue_pool(instance, q)
        names.setdefault(pool, f"tas-flavor-{len(names)}")
    for job in instance.jobs:
        if tuple(sorted(job.node_pool.items())) != _queue_pool(instance, job.queue):
            warn(f"Job/{job.key}: node pool {job.node_pool} differs from its queue's: kept as a nodeSelector only")
    return names


def _kueue_obj(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": KUEUE_VERSION, "kind": kind, "metadata": _metadata(name), "spec": spec}


def _workload(job: Job, levels: Levels, priorities: dict[str, int], group: bool) -> dict[str, Any]:
    running = any(t.running for t in job.tasks)
    nt = job.network_topology
    podsets = []
    for task in job.tasks:
        count = len(task.running) if running else task.replicas
        if count == 0 and running:
            continue
        request: dict[str, Any] = {}
        if nt is not None:
            tier = nt.highest_tier_allowed if nt.mode == "hard" else (nt.preferred_tier or nt.highest_tier_allowed)
            level = levels.key_of(tier)
            if level is not None:
                request["required" if nt.mode == "hard" else "preferred"] = level
            if request and group:
                request["podSetGroupName"] = "job"
        if task.partition is not None and task.partition.network_topology is not None and not running:
            level = levels.key_of(task.partition.network_topology.highest_tier_allowed)
            if level is not None:
                request["podSetSliceRequiredTopology"] = level
                request["podSetSliceSize"] = task.partition.partition_size
        ps: dict[str, Any] = {"name": task.name, "count": count, "template": _template(job, task)}
        if request:
            ps["topologyRequest"] = request
        podsets.append(ps)
    spec: dict[str, Any] = {"queueName": job.queue, "podSets": podsets}
    if job.priority_class is not None:
        spec["priorityClassRef"] = {"group": KUEUE_GROUP, "kind": "WorkloadPriorityClass", "name": job.priority_class}
        spec["priority"] = priorities.get(job.priority_class, 0)
    doc: dict[str, Any] = {
        "apiVersion": KUEUE_VERSION,
        "kind": "Workload",
        "metadata": _metadata(job.name, job.namespace, creationTimestamp=_timestamp(job.creation_index)),
        "spec": spec,
    }
    if running:
        doc["status"] = {"admission": {"clusterQueue": job.queue, "podSetAssignments": [
            {"name": t.name, "flavors": {r: "tas-flavor" for r in t.requests}, "count": len(t.running),
             "topologyAssignment": _assignment(t)}
            for t in job.tasks if t.running
        ]}, "conditions": [{"type": "Admitted", "status": "True"}]}
    return doc


def _assignment(task: Task) -> dict[str, Any]:
    per_node: dict[str, int] = {}
    for node in task.running.values():
        per_node[node] = per_node.get(node, 0) + 1
    names = sorted(per_node)
    return {"levels": [HOSTNAME_LABEL], "slices": [{
        "domainCount": len(names),
        "valuesPerLevel": [{"individual": {"roots": names}}],
        "podCounts": {"individual": [per_node[n] for n in names]},
    }]}


def kai_documents(instance: Instance, warn: Callable[[str], None]) -> list[dict[str, Any]]:
    """Nodes, Topology, Queues, PriorityClasses, PodGroups (v2alpha2) and their Pods."""
    from toposolve.formats.volcano.writer import priority_class_manifest

    levels, nodes = level_labels(instance, EKS_KEYS)
    docs: list[dict[str, Any]] = [node_manifest(n) for n in nodes]
    docs.append({"apiVersion": "kai.scheduler/v1alpha1", "kind": "Topology", "metadata": _metadata(TOPOLOGY_NAME),
                 "spec": {"levels": [{"nodeLabel": k} for k in levels.keys]}})
    capability = {q.name: q.capability.get("nvidia.com/gpu") for q in instance.queues}
    for q in sorted({j.queue for j in instance.jobs} | set(capability)):
        limit = capability.get(q)
        gpu = {"quota": -1, "limit": -1 if limit is None else limit // 1000, "overQuotaWeight": 1}
        docs.append({"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": _metadata(q),
                     "spec": {"resources": {"gpu": gpu}}})
    docs += [priority_class_manifest(pc) for pc in instance.priority_classes]
    for job in instance.jobs:
        _unsupported(job, warn)
        docs += _podgroup(job, levels)
    return docs


def _kai_constraint(nt, levels: Levels) -> dict[str, Any] | None:
    c: dict[str, Any] = {"topology": TOPOLOGY_NAME}
    required = levels.key_of(nt.highest_tier_allowed) if nt.mode == "hard" else None
    preferred = levels.key_of(nt.preferred_tier or (nt.highest_tier_allowed if nt.mode == "soft" else None))
    if required is not None:
        c["requiredTopologyLevel"] = required
    if preferred is not None:
        c["preferredTopologyLevel"] = preferred
    return c if len(c) > 1 else None


def _podgroup(job: Job, levels: Levels) -> list[dict[str, Any]]:
    spec: dict[str, Any] = {"minMember": job.min_available, "queue": job.queue}
    if job.priority_class is not None:
        spec["priorityClassName"] = job.priority_class
    constraint = _kai_constraint(job.network_topology, levels) if job.network_topology else None
    if constraint is not None:
        spec["topologyConstraint"] = constraint
    subgroups = []
    docs: list[dict[str, Any]] = []
    for task in job.tasks:
        p = task.partition
        for i in range(task.replicas):
            labels = dict(task.labels_of(i))
            if p is not None:
                sg = f"{task.name}-{i // p.partition_size}"
                labels[SUBGROUP_LABEL] = sg
                if i % p.partition_size == 0:
                    entry: dict[str, Any] = {"name": sg, "minMember": p.partition_size}
                    sub = _kai_constraint(p.network_topology, levels) if p.network_topology else None
                    if sub is not None:
                        entry["topologyConstraint"] = sub
                    subgroups.append(entry)
            pod_spec: dict[str, Any] = {"schedulerName": KAI_SCHEDULER}
            if task.running.get(i) is not None:
                pod_spec["nodeName"] = task.running[i]
            pod_spec.update(pod_spec_manifest(task.requests, task.constraints))
            docs.append({"apiVersion": "v1", "kind": "Pod",
                         "metadata": _metadata(task.pod_name(job.name, i), job.namespace, labels=labels,
                                               annotations={PODGROUP_ANNOTATION: job.name}),
                         "spec": pod_spec, "status": {"phase": "Running" if i in task.running else "Pending"}})
    if subgroups:
        spec["subGroups"] = subgroups
    pg = {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
          "metadata": _metadata(job.name, job.namespace, creationTimestamp=_timestamp(job.creation_index)), "spec": spec}
    return [pg, *docs]


def write_scheduler_form(instance: Instance, form: str, path: str, *, warn: Callable[[str], None]) -> None:
    """Write the instance as Kueue (``form="kueue"``) or KAI objects, one multi-document YAML."""
    import yaml

    docs = kueue_documents(instance, warn) if form == "kueue" else kai_documents(instance, warn)
    header = f"# {form} objects written by toposolve from {instance.source}\n"
    body = yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=False)
    with open(path, "w", encoding="utf-8") as out:
        out.write(header + body)
