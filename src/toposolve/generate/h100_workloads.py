"""The workloads of the ``h100-dump`` preset, as their operators leave them in the API server.

* DaemonSet pods on every node (``node-exporter``; ``nvidia-device-plugin`` on GPU nodes),
  placed by the default scheduler with ``matchFields``.
* A running Kubeflow PyTorchJob (its PodGroup, owned by the PyTorchJob, and four pods) and a
  pending one whose PodGroup asks for a hard leaf.
* Two running inference pods of a Deployment (default scheduler, one GPU each).
* Volcano Jobs: one running (partitions, hard spine), one Completed, six pending with partitions
  and ``highestTierName`` limits; each with the PodGroup Volcano's controller creates for it.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any

import numpy as np

from toposolve.generate.h100_cluster import CPU_NODES, gpu_node_names
from toposolve.generate.kubeobjects import ObjectFactory, timestamp

GPU = "nvidia.com/gpu"
IMAGE = "nvcr.io/nvidia/pytorch:24.10-py3"
GPU_TOLERATION = {"effect": "NoSchedule", "key": GPU, "operator": "Exists"}
# DefaultTolerationSeconds adds these to every pod
DEFAULT_TOLERATIONS = [
    {
        "effect": "NoExecute",
        "key": f"node.kubernetes.io/{k}",
        "operator": "Exists",
        "tolerationSeconds": 300,
    }
    for k in ("not-ready", "unreachable")
]


def _suffix(rng: np.random.Generator, n: int = 5) -> str:
    alphabet = string.ascii_lowercase + string.digits
    return "".join(alphabet[i] for i in rng.integers(0, len(alphabet), n).tolist())


def _requests(gpus: int) -> dict[str, str]:
    return {GPU: str(gpus), "cpu": str(12 * gpus), "memory": f"{120 * gpus}Gi"} if gpus else {}


def _container(name: str, image: str, requests: dict[str, str]) -> dict[str, Any]:
    limits = {k: v for k, v in requests.items() if k == GPU}
    resources = {"requests": requests, **({"limits": limits} if limits else {})}
    return {"image": image, "imagePullPolicy": "IfNotPresent", "name": name, "resources": resources}


def _pod(
    factory: ObjectFactory,
    name: str,
    namespace: str,
    *,
    spec: dict[str, Any],
    node: str | None,
    hours: float,
    labels: dict[str, str],
    annotations: dict[str, str] | None = None,
    owner: dict[str, Any] | None = None,
    phase: str | None = None,
) -> dict[str, Any]:
    spec = {
        "enableServiceLinks": True,
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        **spec,
    }
    spec["tolerations"] = [*spec.get("tolerations", []), *DEFAULT_TOLERATIONS]
    if node is not None:
        spec["nodeName"] = node
    phase = phase or ("Running" if node else "Pending")
    status: dict[str, Any] = {"phase": phase, "qosClass": "Burstable"}
    if node is not None:
        status["startTime"] = timestamp(hours - 0.005)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": factory.metadata(
            name,
            namespace=namespace,
            hours_before=hours,
            labels=labels,
            annotations=annotations,
            owner=owner,
            managers=(("kube-controller-manager", "Update"),),
            status_manager="kubelet" if node else None,
        ),
        "spec": spec,
        "status": status,
    }


def daemonset_pods(factory: ObjectFactory, rng: np.random.Generator) -> list[dict[str, Any]]:
    sets = [
        (
            "monitoring",
            "node-exporter",
            "quay.io/prometheus/node-exporter:v1.8.2",
            "100m",
            "180Mi",
            False,
        ),
        (
            "gpu-operator",
            "nvidia-device-plugin-daemonset",
            "nvcr.io/nvidia/k8s-device-plugin:v0.16.2",
            "50m",
            "64Mi",
            True,
        ),
    ]
    pods = []
    for namespace, app, image, cpu, memory, gpu_only in sets:
        owner = factory.owner("DaemonSet", app, "apps/v1")
        hosts = gpu_node_names() if gpu_only else [*gpu_node_names(), *CPU_NODES]
        for node in hosts:
            affinity = {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": [node]}
                                ]
                            }
                        ]
                    }
                }
            }
            spec = {
                "affinity": affinity,
                "containers": [_container(app, image, {"cpu": cpu, "memory": memory})],
                "priorityClassName": "system-node-critical",
                "schedulerName": "default-scheduler",
                "tolerations": [{"operator": "Exists"}],
            }
            labels = {
                "app": app,
                "controller-revision-hash": "6d9f7c8b5d",
                "pod-template-generation": "3",
            }
            pods.append(
                _pod(
                    factory,
                    f"{app}-{_suffix(rng)}",
                    namespace,
                    spec=spec,
                    node=node,
                    hours=float(rng.uniform(200, 600)),
                    labels=labels,
                    owner=owner,
                )
            )
    return pods


def pytorch_job(
    factory: ObjectFactory,
    name: str,
    namespace: str,
    *,
    workers: int,
    nodes: list[str] | None,
    hours: float,
    network_topology: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """A Kubeflow PyTorchJob's PodGroup (created by the training operator) and its pods."""
    owner = factory.owner("PyTorchJob", name, "kubeflow.org/v1")
    members = 1 + workers
    spec: dict[str, Any] = {
        "minMember": members,
        "queue": "research",
        "priorityClassName": "normal",
        "minResources": {
            GPU: str(8 * members),
            "cpu": str(96 * members),
            "memory": f"{960 * members}Gi",
        },
    }
    if network_topology:
        spec["networkTopology"] = network_topology
    running = nodes is not None
    group = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": factory.metadata(
            name,
            namespace=namespace,
            hours_before=hours,
            owner=owner,
            api_version="scheduling.volcano.sh/v1beta1",
            managers=(("training-operator", "Update"),),
            status_manager="vc-scheduler",
        ),
        "spec": spec,
        "status": {"phase": "Running", "running": members} if running else {"phase": "Pending"},
    }
    pods = [group]
    for i, (replica, index) in enumerate([("master", 0), *(("worker", w) for w in range(workers))]):
        labels = {
            "training.kubeflow.org/job-name": name,
            "training.kubeflow.org/operator-name": "pytorchjob-controller",
            "training.kubeflow.org/replica-index": str(index),
            "training.kubeflow.org/replica-type": replica,
        }
        spec = {
            "containers": [_container("pytorch", IMAGE, _requests(8))],
            "schedulerName": "volcano",
            "priorityClassName": "normal",
            "tolerations": [GPU_TOLERATION],
        }
        pods.append(
            _pod(
                factory,
                f"{name}-{replica}-{index}",
                namespace,
                spec=spec,
                node=nodes[i] if running else None,
                hours=hours - 0.01,
                labels=labels,
                annotations={"scheduling.k8s.io/group-name": name},
                owner=owner,
            )
        )
    return pods


def deployment_pods(
    factory: ObjectFactory, rng: np.random.Generator, nodes: list[str]
) -> list[dict[str, Any]]:
    owner = factory.owner("ReplicaSet", "triton-llm-7c9d5f6b48", "apps/v1")
    spec = {
        "containers": [_container("triton", "nvcr.io/nvidia/tritonserver:24.10-py3", _requests(1))],
        "schedulerName": "default-scheduler",
        "tolerations": [GPU_TOLERATION],
    }
    return [
        _pod(
            factory,
            f"triton-llm-7c9d5f6b48-{_suffix(rng)}",
            "ml-serving",
            spec=spec,
            node=node,
            hours=50.0,
            labels={"app": "triton-llm", "pod-template-hash": "7c9d5f6b48"},
            owner=owner,
        )
        for node in nodes
    ]


@dataclass(frozen=True)
class VcTask:
    name: str
    replicas: int
    gpus: int
    partitions: int = 0  # totalPartitions (0: no partition policy)
    partition_tier: str = "leaf"


@dataclass(frozen=True)
class VcJob:
    namespace: str
    name: str
    tasks: tuple[VcTask, ...]
    queue: str
    priority: str
    hours: float
    topology: dict[str, Any] | None = None
    phase: str = "Pending"
    nodes: tuple[str, ...] = ()  # running pods' nodes, in task order


def volcano_job(factory: ObjectFactory, job: VcJob) -> list[dict[str, Any]]:
    """The Job, the PodGroup Volcano's job controller made for it, and the pods of a started job."""
    api = "batch.volcano.sh/v1alpha1"
    replicas = sum(t.replicas for t in job.tasks)
    spec: dict[str, Any] = {
        "maxRetry": 3,
        "minAvailable": replicas,
        "plugins": {"pytorch": ["--master=master", "--port=23456"], "svc": []},
        "priorityClassName": job.priority,
        "queue": job.queue,
        "schedulerName": "volcano",
        "tasks": [_task(job.name, t) for t in job.tasks],
    }
    if job.topology:
        spec["networkTopology"] = job.topology
    running = job.phase == "Running"
    manifest = {
        "apiVersion": api,
        "kind": "Job",
        "metadata": factory.metadata(
            job.name,
            namespace=job.namespace,
            hours_before=job.hours,
            api_version=api,
            status_manager="vc-controller-manager",
        ),
        "spec": spec,
        "status": {
            "minAvailable": replicas,
            "running": replicas if running else 0,
            "state": {"phase": job.phase, "lastTransitionTime": timestamp(job.hours - 0.02)},
        },
    }
    owner = {
        "apiVersion": api,
        "blockOwnerDeletion": True,
        "controller": True,
        "kind": "Job",
        "name": job.name,
        "uid": manifest["metadata"]["uid"],
    }
    group = _job_podgroup(factory, job, owner, f"{job.name}-{manifest['metadata']['uid']}")
    out = [manifest, group]
    if job.phase in ("Running", "Completed"):
        out += _job_pods(factory, job, group["metadata"]["name"], owner)
    return out


def _task(job_name: str, t: VcTask) -> dict[str, Any]:
    """One entry of the Job's ``spec.tasks``."""
    task: dict[str, Any] = {
        "name": t.name,
        "replicas": t.replicas,
        "template": {
            "metadata": {"labels": {"app": job_name}},
            "spec": {
                "containers": [_container(t.name, IMAGE, _requests(t.gpus))],
                "restartPolicy": "OnFailure",
                "tolerations": [GPU_TOLERATION],
            },
        },
    }
    if t.partitions:
        task["partitionPolicy"] = {
            "totalPartitions": t.partitions,
            "partitionSize": t.replicas // t.partitions,
            "networkTopology": {"mode": "hard", "highestTierName": t.partition_tier},
        }
    return task


def _job_podgroup(
    factory: ObjectFactory, job: VcJob, owner: dict[str, Any], name: str
) -> dict[str, Any]:
    """The PodGroup Volcano's job controller creates for ``job`` (owned by it)."""
    spec = {
        "minMember": sum(t.replicas for t in job.tasks),
        "minTaskMember": {t.name: t.replicas for t in job.tasks},
        "priorityClassName": job.priority,
        "queue": job.queue,
        **({"networkTopology": job.topology} if job.topology else {}),
    }
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": factory.metadata(
            name,
            namespace=job.namespace,
            hours_before=job.hours - 0.001,
            owner=owner,
            api_version="scheduling.volcano.sh/v1beta1",
            managers=(("vc-controller-manager", "Update"),),
            status_manager="vc-scheduler",
        ),
        "spec": spec,
        "status": {
            "phase": {"Running": "Running", "Completed": "Completed"}.get(job.phase, "Pending")
        },
    }


def _job_pods(
    factory: ObjectFactory, job: VcJob, group: str, owner: dict[str, Any]
) -> list[dict[str, Any]]:
    pods, placed = [], iter(job.nodes)
    for t in job.tasks:
        for i in range(t.replicas):
            labels = {
                "volcano.sh/job-name": job.name,
                "volcano.sh/job-namespace": job.namespace,
                "volcano.sh/queue-name": job.queue,
                "volcano.sh/task-spec": t.name,
            }
            if t.partitions:
                labels["volcano.sh/partition-id"] = str(i // (t.replicas // t.partitions))
            spec = {
                "containers": [_container(t.name, IMAGE, _requests(t.gpus))],
                "schedulerName": "volcano",
                "priorityClassName": job.priority,
                "tolerations": [GPU_TOLERATION],
                "restartPolicy": "OnFailure",
            }
            node = next(placed)
            pods.append(
                _pod(
                    factory,
                    f"{job.name}-{t.name}-{i}",
                    job.namespace,
                    spec=spec,
                    node=node,
                    hours=job.hours - 0.01,
                    labels=labels,
                    owner=owner,
                    annotations={
                        "scheduling.k8s.io/group-name": group,
                        "volcano.sh/task-index": str(i),
                    },
                    phase="Succeeded" if job.phase == "Completed" else None,
                )
            )
    return pods


def hard(tier_name: str) -> dict[str, Any]:
    return {"mode": "hard", "highestTierName": tier_name}


def volcano_jobs() -> list[VcJob]:
    """One running, one Completed and six pending Volcano Jobs (oldest first)."""
    gpu = gpu_node_names()
    return [
        VcJob(
            "ml-train",
            "gpt-pretrain-a",
            (VcTask("worker", 8, 8, partitions=2),),
            "prod",
            "high-priority",
            hours=30.0,
            topology=hard("spine"),
            phase="Running",
            nodes=tuple(gpu[0:8]),
        ),
        VcJob(
            "ml-research",
            "tokenizer-prep",
            (VcTask("worker", 2, 1),),
            "research",
            "normal",
            hours=20.0,
            phase="Completed",
            nodes=(gpu[20], gpu[21]),
        ),
        VcJob(
            "ml-train",
            "gpt-pretrain-b",
            (VcTask("worker", 16, 8, partitions=2),),
            "prod",
            "high-priority",
            hours=6.0,
            topology=hard("spine"),
        ),
        VcJob(
            "ml-train",
            "gpt-pretrain-c",
            (VcTask("worker", 32, 8, partitions=4),),
            "prod",
            "normal",
            hours=5.5,
            topology=hard("spine"),
        ),
        VcJob(
            "ml-research",
            "llm-sft",
            (VcTask("master", 1, 8), VcTask("worker", 7, 8)),
            "research",
            "normal",
            hours=4.0,
            topology=hard("leaf"),
        ),
        VcJob(
            "ml-train",
            "moe-sweep",
            (VcTask("worker", 4, 8),),
            "prod",
            "normal",
            hours=3.0,
            topology=hard("leaf"),
        ),
        VcJob(
            "ml-research",
            "vit-probe",
            (VcTask("worker", 2, 4),),
            "research",
            "normal",
            hours=2.0,
            topology={"mode": "soft", "highestTierName": "leaf"},
        ),
        VcJob("ml-research", "bert-eval", (VcTask("eval", 1, 1),), "default", "normal", hours=1.0),
    ]
