"""Small Kueue and KAI inputs for reader tests: four nodes (``n0``…``n3``, two per ``block`` /
``rack``), a Topology, queues and one Workload or PodGroup; a queued LeaderWorkerSet."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml


def four_nodes(level: str, prefix: str, allocatable: dict) -> list[dict]:
    """Nodes ``n0``…``n3``, two per ``level`` domain (``<prefix>0``, ``<prefix>1``)."""
    return [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": f"n{i}",
                "labels": {level: f"{prefix}{i // 2}", "kubernetes.io/hostname": f"n{i}"},
            },
            "status": {"allocatable": allocatable},
        }
        for i in range(4)
    ]


def kueue_docs(levels, workload):
    """Nodes, a Topology ``t`` of ``levels``, flavor ``f``, ClusterQueue ``cq`` (12 CPUs),
    LocalQueue ``lq`` and ``workload``."""
    nodes = four_nodes("block", "b", {"cpu": "4", "pods": "10"})
    return [
        *nodes,
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "Topology",
            "metadata": {"name": "t"},
            "spec": {"levels": [{"nodeLabel": k} for k in levels]},
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "ResourceFlavor",
            "metadata": {"name": "f"},
            "spec": {"topologyName": "t"},
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "ClusterQueue",
            "metadata": {"name": "cq"},
            "spec": {
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {"name": "f", "resources": [{"name": "cpu", "nominalQuota": "12"}]}
                        ],
                    }
                ]
            },
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": "default"},
            "spec": {"clusterQueue": "cq"},
        },
        workload,
    ]


def workload(podsets, status=None):
    """Workload ``default/w`` in LocalQueue ``lq`` with ``podsets`` (and ``status``)."""
    wl = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {"queueName": "lq", "podSets": podsets},
    }
    if status:
        wl["status"] = status
    return wl


def podset(name, count, request=None, cpu="1"):
    """A podset of ``count`` pods requesting ``cpu`` (and a ``topologyRequest``)."""
    ps = {
        "name": name,
        "count": count,
        "template": {
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
        },
    }
    if request:
        ps["topologyRequest"] = request
    return ps


def kai_docs(subgroups, pod_groups):
    """Nodes, Topology ``t`` (rack, hostname), PodGroup ``default/pg`` required at ``rack``
    with ``subgroups``, and one 4-GPU pod per entry of ``pod_groups`` (its SubGroup)."""
    docs = four_nodes("rack", "r", {"nvidia.com/gpu": "8"})
    docs.append(
        {
            "apiVersion": "kai.scheduler/v1alpha1",
            "kind": "Topology",
            "metadata": {"name": "t"},
            "spec": {"levels": [{"nodeLabel": "rack"}, {"nodeLabel": "kubernetes.io/hostname"}]},
        }
    )
    docs.append(
        {
            "apiVersion": "scheduling.run.ai/v2alpha2",
            "kind": "PodGroup",
            "metadata": {"name": "pg", "namespace": "default"},
            "spec": {
                "minMember": 0,
                "queue": "q",
                "subGroups": subgroups,
                "topologyConstraint": {"topology": "t", "requiredTopologyLevel": "rack"},
            },
        }
    )
    for i, sg in enumerate(pod_groups):
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"p{i}",
                    "namespace": "default",
                    "annotations": {"pod-group-name": "pg"},
                    "labels": {"kai.scheduler/subgroup-name": sg},
                },
                "spec": {
                    "schedulerName": "kai-scheduler",
                    "containers": [
                        {"name": "c", "resources": {"requests": {"nvidia.com/gpu": "4"}}}
                    ],
                },
            }
        )
    return docs


def write_docs(tmp_path: Path, docs: list[dict], name: str = "in.yaml") -> Path:
    """The documents as one YAML file under ``tmp_path``."""
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs), encoding="utf-8")
    return path


LWS_GROUP = {"kueue.x-k8s.io/podset-required-topology": "block",
             "kueue.x-k8s.io/podset-group-name": "g"}


def lws_template(cpu: str, annotations: dict[str, str] = LWS_GROUP) -> dict:
    """A pod template of one container asking for ``cpu`` CPUs, with ``annotations``."""
    return {"metadata": {"annotations": dict(annotations)},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}


def lws(replicas: int = 2, size: int = 2, leader: bool = True, cpu: str = "3") -> dict:
    """LeaderWorkerSet ``default/infer`` in LocalQueue ``lq``: ``replicas`` groups of ``size``
    pods of ``cpu`` CPUs, leader and workers asking for one ``block`` together (without a
    leader: the workers, as one podset)."""
    worker = LWS_GROUP if leader else {"kueue.x-k8s.io/podset-required-topology": "block"}
    template = {"size": size, "workerTemplate": lws_template(cpu, worker)}
    if leader:
        template["leaderTemplate"] = lws_template(cpu)
    return {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
            "metadata": {"name": "infer", "namespace": "default",
                         "creationTimestamp": "2025-01-01T00:00:00Z",
                         "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
            "spec": {"replicas": replicas, "leaderWorkerTemplate": template}}


def gated_lws_pod(group: int, worker: int) -> dict:
    """A pod LWS made for the group before Kueue admitted it (gated, pending)."""
    name = f"infer-{group}" + (f"-{worker}" if worker else "")
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {
                "leaderworkerset.sigs.k8s.io/name": "infer",
                "leaderworkerset.sigs.k8s.io/group-index": str(group),
                "leaderworkerset.sigs.k8s.io/worker-index": str(worker)}},
            "spec": {"schedulingGates": [{"name": "kueue.x-k8s.io/admission"}],
                     "containers": [{"name": "c", "resources": {"requests": {"cpu": "3"}}}]},
            "status": {"phase": "Pending"}}


def inactive_queue_docs(missing: str | None = "gone", listed: bool = True) -> list[dict]:
    """:func:`kueue_docs` (block level, workload ``w`` of 4 pods in ``lq`` → ``cq``) plus a
    ClusterQueue ``cq2`` (LocalQueue ``lq2``, workload ``w2`` of 2 pods, both required at
    ``block``) whose flavor ``g`` names Topology ``missing`` (None: ``t``, the input's);
    ``listed``: ``cq2`` lists ``g`` (else ``f``)."""
    required = {"required": "block"}
    docs = kueue_docs(["block", "kubernetes.io/hostname"],
                      workload([podset("main", 4, required)]))
    by_name = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    flavor = {**by_name["ResourceFlavor", "f"], "metadata": {"name": "g"},
              "spec": {"topologyName": missing or "t"}}
    queue = copy.deepcopy(by_name["ClusterQueue", "cq"])
    queue["metadata"]["name"] = "cq2"
    queue["spec"]["resourceGroups"][0]["flavors"][0]["name"] = "g" if listed else "f"
    local = {**by_name["LocalQueue", "lq"], "metadata": {"name": "lq2", "namespace": "default"},
             "spec": {"clusterQueue": "cq2"}}
    other = workload([podset("main", 2, required)])
    other["metadata"]["name"], other["spec"]["queueName"] = "w2", "lq2"
    return [*docs, flavor, queue, local, other]
