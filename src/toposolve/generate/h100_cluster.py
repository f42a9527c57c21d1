"""The cluster of the ``h100-dump`` preset: 64 DGX H100 nodes and 3 CPU nodes, the network tree
as HyperNodes or as node labels with Volcano's discovery ConfigMap, queues, priority classes.

Layout: 16 racks of 4 nodes (``h100-r<rack>-n<slot>``). Tier 0: NVLink domains of two racks
(``nvl-01`` … ``nvl-08``, 64 GPUs each); tier 1: leaf switches of two domains (16 nodes); tier
2: spines of two leaves; tier 3: one core. HyperNode members use every selector kind: NVLink
domains 1-3 list their nodes by ``exactMatch``, 4-6 by ``regexMatch``, 7-8 by ``labelMatch`` on
``nvidia.com/gpu.clique``; higher tiers list HyperNodes by ``exactMatch``. Every GPU node also
carries the labels ``network.topology.kubernetes.io/{core,spine,leaf}`` that label discovery
reads. Two GPU nodes are cordoned, one is NotReady (unreachable taints).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import yaml

from toposolve.generate.kubeobjects import ObjectFactory

RACKS = 16
NODES_PER_RACK = 4
TIER_NAMES = {0: "nvlink", 1: "leaf", 2: "spine", 3: "core"}
LEVEL_LABEL = "network.topology.kubernetes.io/{}"
CLIQUE_LABEL = "nvidia.com/gpu.clique"
GPU_PRODUCT = "NVIDIA-H100-80GB-HBM3"
GPU_TAINT = {"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "present"}
CORDONED = ("h100-r02-n3", "h100-r10-n4")
NOT_READY = ("h100-r13-n1",)
CPU_NODES = ("cpu-01", "cpu-02", "cpu-03")
PROFILE = "dgx-h100"


def gpu_node_names() -> list[str]:
    return [
        f"h100-r{r:02d}-n{s}" for r in range(1, RACKS + 1) for s in range(1, NODES_PER_RACK + 1)
    ]


def domain_of(node_index: int, tier: int) -> int:
    """1-based domain number of tier ``tier`` holding GPU node ``node_index`` (0-based)."""
    rack = node_index // NODES_PER_RACK
    return rack // (2 ** (tier + 1)) + 1


def domain_name(tier: int, number: int) -> str:
    return f"nvl-{number:02d}" if tier == 0 else f"{TIER_NAMES[tier]}-{number:02d}"


def nodes(factory: ObjectFactory, rng: np.random.Generator, clique: str) -> list[dict[str, Any]]:
    """GPU nodes then CPU nodes; ``clique`` is the NVLink fabric's cluster UUID."""
    out = []
    for i, name in enumerate(gpu_node_names()):
        labels = {
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "node.kubernetes.io/instance-type": "dgx-h100",
            "nvidia.com/gpu.count": "8",
            "nvidia.com/gpu.product": GPU_PRODUCT,
            CLIQUE_LABEL: f"{clique}.{domain_of(i, 0)}",
            **{
                LEVEL_LABEL.format(TIER_NAMES[t]): domain_name(t, domain_of(i, t))
                for t in (1, 2, 3)
            },
        }
        out.append(_node(factory, rng, name, labels, gpu=True))
    for name in CPU_NODES:
        labels = {
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "node-role.kubernetes.io/infra": "",
        }
        out.append(_node(factory, rng, name, labels, gpu=False))
    return out


def _node(
    factory: ObjectFactory,
    rng: np.random.Generator,
    name: str,
    labels: dict[str, str],
    *,
    gpu: bool,
) -> dict[str, Any]:
    capacity, allocatable = _capacity_and_allocatable(gpu=gpu)
    taints, ready = _taints_and_ready(name, gpu=gpu)
    spec: dict[str, Any] = {
        "podCIDR": f"10.244.{len(name) * 7 % 250}.0/24",
        **({"taints": taints} if taints else {}),
    }
    if name in CORDONED:
        spec["unschedulable"] = True
    hours = float(rng.uniform(900, 2000))
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": factory.metadata(
            name,
            hours_before=hours,
            labels=labels,
            annotations={
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            managers=(("kubelet", "Update"), ("kube-controller-manager", "Update")),
            status_manager="kubelet",
        ),
        "spec": spec,
        "status": _node_status(capacity, allocatable, ready),
    }


def _capacity_and_allocatable(*, gpu: bool) -> tuple[dict[str, str], dict[str, str]]:
    """A DGX H100's (or a CPU node's) capacity, and its allocatable after system reservations."""
    capacity = (
        {
            "cpu": "224",
            "ephemeral-storage": "1843217116Ki",
            "hugepages-1Gi": "0",
            "hugepages-2Mi": "0",
            "memory": "2113470464Ki",
            "nvidia.com/gpu": "8",
            "pods": "110",
        }
        if gpu
        else {
            "cpu": "64",
            "ephemeral-storage": "479596204Ki",
            "memory": "263921036Ki",
            "pods": "110",
        }
    )
    allocatable = dict(
        capacity, cpu="222" if gpu else "62", memory="2111263104Ki" if gpu else "261721996Ki"
    )
    return capacity, allocatable


def _node_status(
    capacity: dict[str, str], allocatable: dict[str, str], ready: dict[str, str]
) -> dict[str, Any]:
    """The Node's ``status``: amounts, the Ready condition (fields ``ready``), node info."""
    return {
        "allocatable": allocatable,
        "capacity": capacity,
        "conditions": [
            {
                "lastHeartbeatTime": "2026-11-02T09:29:12Z",
                "lastTransitionTime": "2026-10-20T11:02:45Z",
                "type": "Ready",
                **ready,
            },
            {
                "lastHeartbeatTime": "2026-11-02T09:29:12Z",
                "lastTransitionTime": "2026-10-20T11:02:45Z",
                "message": "kubelet has sufficient memory available",
                "reason": "KubeletHasSufficientMemory",
                "status": "False",
                "type": "MemoryPressure",
            },
        ],
        "nodeInfo": {
            "architecture": "amd64",
            "containerRuntimeVersion": "containerd://1.7.22",
            "kernelVersion": "5.15.0-1063-nvidia",
            "kubeletVersion": "v1.31.4",
            "operatingSystem": "linux",
            "osImage": "Ubuntu 22.04.5 LTS",
        },
    }


def _taints_and_ready(name: str, *, gpu: bool) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The node's taints (GPU, cordoned, unreachable) and the fields of its Ready condition."""
    taints = [GPU_TAINT] if gpu else []
    ready = {
        "status": "True",
        "reason": "KubeletReady",
        "message": "kubelet is posting ready status",
    }
    if name in CORDONED:
        taints.append(
            {
                "effect": "NoSchedule",
                "key": "node.kubernetes.io/unschedulable",
                "timeAdded": "2026-11-02T06:12:40Z",
            }
        )
    if name in NOT_READY:
        ready = {
            "status": "Unknown",
            "reason": "NodeStatusUnknown",
            "message": "Kubelet stopped posting node status.",
        }
        taints += [
            {
                "effect": "NoSchedule",
                "key": "node.kubernetes.io/unreachable",
                "timeAdded": "2026-11-02T08:55:03Z",
            },
            {
                "effect": "NoExecute",
                "key": "node.kubernetes.io/unreachable",
                "timeAdded": "2026-11-02T08:55:09Z",
            },
        ]
    return taints, ready


def _member_selector(tier0: int, clique: str) -> list[dict[str, Any]]:
    """Node members of NVLink domain ``tier0`` (1-based): exact, regex or label selectors."""
    racks = (2 * tier0 - 1, 2 * tier0)
    if tier0 <= 3:
        names = [n for i, n in enumerate(gpu_node_names()) if domain_of(i, 0) == tier0]
        return [{"selector": {"exactMatch": {"name": n}}, "type": "Node"} for n in names]
    if tier0 <= 6:
        pattern = f"^h100-r({racks[0]:02d}|{racks[1]:02d})-n[1-4]$"
        return [{"selector": {"regexMatch": {"pattern": pattern}}, "type": "Node"}]
    return [
        {
            "selector": {"labelMatch": {"matchLabels": {CLIQUE_LABEL: f"{clique}.{tier0}"}}},
            "type": "Node",
        }
    ]


def hypernodes(factory: ObjectFactory, clique: str) -> list[dict[str, Any]]:
    """The tree as HyperNodes, tier 0 to 3 (see the module docstring)."""
    counts = {0: RACKS // 2, 1: RACKS // 4, 2: RACKS // 8, 3: 1}
    out = []
    for tier in (3, 2, 1, 0):
        for number in range(1, counts[tier] + 1):
            if tier == 0:
                members = _member_selector(number, clique)
            else:
                children = (2 * number - 1, 2 * number)
                members = [
                    {
                        "selector": {"exactMatch": {"name": domain_name(tier - 1, c)}},
                        "type": "HyperNode",
                    }
                    for c in children
                ]
            name = domain_name(tier, number)
            out.append(
                {
                    "apiVersion": "topology.volcano.sh/v1alpha1",
                    "kind": "HyperNode",
                    "metadata": factory.metadata(
                        name,
                        hours_before=700 + tier,
                        api_version="topology.volcano.sh/v1alpha1",
                        status_manager="vc-controller-manager",
                    ),
                    "spec": {"members": members, "tier": tier, "tierName": TIER_NAMES[tier]},
                    "status": {"nodeCount": NODES_PER_RACK * 2 ** (tier + 1)},
                }
            )
    return out


def discovery_config() -> str:
    """``volcano-controller.conf``: UFM disabled, label discovery in the profile form."""
    levels = [
        {"nodeLabel": LEVEL_LABEL.format(TIER_NAMES[t]), "tierName": TIER_NAMES[t]}
        for t in (3, 2, 1)
    ]
    conf = {
        "networkTopologyDiscovery": [
            {
                "source": "ufm",
                "enabled": False,
                "interval": "10m",
                "credentials": {
                    "secretRef": {"name": "ufm-credentials", "namespace": "volcano-system"}
                },
                "config": {
                    "endpoint": "https://ufm.mgmt.example.internal",
                    "insecureSkipVerify": False,
                },
            },
            {
                "source": "label",
                "enabled": True,
                "interval": "1h",
                "config": {
                    "networkTopologyTypes": {
                        PROFILE: {
                            "nodeSelector": {
                                "matchLabels": {"nvidia.com/gpu.product": GPU_PRODUCT}
                            },
                            "levels": [*levels, {"nodeLabel": "kubernetes.io/hostname"}],
                        }
                    }
                },
            },
        ]
    }
    return yaml.safe_dump(conf, sort_keys=False)


def discovery_configmap(factory: ObjectFactory) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "data": {"volcano-controller.conf": discovery_config()},
        "kind": "ConfigMap",
        "metadata": factory.metadata(
            "volcano-controller-configmap",
            namespace="volcano-system",
            hours_before=800,
            labels={"app.kubernetes.io/managed-by": "Helm"},
            annotations={
                "meta.helm.sh/release-name": "volcano",
                "meta.helm.sh/release-namespace": "volcano-system",
            },
            managers=(("helm", "Update"),),
        ),
    }


def queues(factory: ObjectFactory) -> list[dict[str, Any]]:
    specs = [
        ("default", 1, True, {}),
        ("prod", 4, False, {"nvidia.com/gpu": "256"}),
        ("research", 2, True, {}),
    ]
    return [
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": factory.metadata(
                name,
                hours_before=850,
                api_version="scheduling.volcano.sh/v1beta1",
                status_manager="vc-controller-manager",
            ),
            "spec": {
                "reclaimable": reclaimable,
                "weight": weight,
                **({"guarantee": {"resource": guarantee}} if guarantee else {}),
            },
            "status": {"state": "Open"},
        }
        for name, weight, reclaimable, guarantee in specs
    ]


def priority_classes(factory: ObjectFactory) -> list[dict[str, Any]]:
    specs = [
        ("high-priority", 1000, False),
        ("normal", 100, True),
        ("system-cluster-critical", 2000000000, False),
        ("system-node-critical", 2000001000, False),
    ]
    return [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": factory.metadata(
                name, hours_before=900, api_version="scheduling.k8s.io/v1"
            ),
            "preemptionPolicy": "PreemptLowerPriority",
            "value": value,
            **({"globalDefault": True} if default else {}),
        }
        for name, value, default in specs
    ]
