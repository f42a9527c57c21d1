"""The two use cases of Volcano's network-topology-aware scheduling design.

``usecase-gpu`` (use case 1): one training job of ``pods`` (3,000) pods × 8 GPUs that must stay
within one tier-2 domain (``mode`` hard, ``tier`` 2 by default), on a two-level spine-leaf
cluster (the design's scope): 32-node leaf groups (tier 1, ``leaf``) under one spine (tier 2),
4,096 DGX-like nodes by default. ``occupancy`` adds running gangs as in the other presets.

``usecase-npu`` (use case 2): one job of ``pods`` (3,000) pods × 16 ``huawei.com/ascend-1980``
NPUs split into HCCS partitions of ``partition_size`` (24) pods, each partition hard within one
HCCS domain (tier 1); the job is ``job_mode`` (hard) within tier 3. Three network planes as in
the design: HCCS domains of ``hccs_size`` (48) nodes (tier 1, ``hccs``), RoCE groups of
``roce_size`` (16) HCCS domains (tier 2, ``roce``), one VPC (tier 3, ``vpc``). By default the
cluster has one HCCS domain more than the partitions need.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from toposolve.generate.common import NodeShape, document, node_group
from toposolve.generate.jobs import PRIORITY_CLASSES
from toposolve.generate.occupancy import running_jobs
from toposolve.generate.superpod import DGX_H100
from toposolve.generate.tree import regular_tree

ASCEND_NODE = NodeShape(
    prefix="npu",
    accelerator="huawei.com/ascend-1980",
    per_node=16,
    cpu=192,
    memory_gi=1536,
    labels={"accelerator": "huawei-Ascend910"},
    cpu_per_accelerator=10,
    memory_gi_per_accelerator=80,
)


def usecase_gpu(
    rng: np.random.Generator,
    nodes: int | None,
    load: float,
    *,
    pods: int = 3000,
    mode: str = "hard",
    tier: int = 2,
    leaf_size: int = 32,
    occupancy: float = 0.0,
) -> dict[str, Any]:
    _check_mode(mode)
    tree = regular_tree(nodes or 4096, leaf_size, (), ("leaf", "spine"))
    job = {
        "name": "llm-train",
        "priorityClass": "high",
        "networkTopology": {"mode": mode, "highestTierAllowed": tier},
        "tasks": [{"name": "worker", "replicas": pods, "requests": DGX_H100.pod_requests(8)}],
    }
    return _single_job_cluster(rng, "usecase-gpu", "seed 000 use case 1", tree, DGX_H100, job,
                               occupancy)


def usecase_npu(
    rng: np.random.Generator,
    nodes: int | None,
    load: float,
    *,
    pods: int = 3000,
    partition_size: int = 24,
    hccs_size: int = 48,
    roce_size: int = 16,
    job_mode: str = "hard",
    occupancy: float = 0.0,
) -> dict[str, Any]:
    _check_mode(job_mode)
    if pods % partition_size:
        raise ValueError(f"partition_size {partition_size} does not divide pods ({pods})")
    if partition_size > hccs_size:
        raise ValueError(
            f"a partition of {partition_size} pods cannot fit an HCCS domain of {hccs_size} nodes")
    if nodes is None:
        domains = math.ceil(pods // partition_size / (hccs_size // partition_size)) + 1
        nodes = domains * hccs_size
    tree = regular_tree(nodes, hccs_size, (roce_size,), ("hccs", "roce", "vpc"))
    job = {
        "name": "llm-train",
        "priorityClass": "high",
        "networkTopology": {"mode": job_mode, "highestTierAllowed": 3},
        "tasks": [
            {
                "name": "worker",
                "replicas": pods,
                "requests": ASCEND_NODE.pod_requests(16),
                "partition": {
                    "partitionSize": partition_size,
                    "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
                },
            }
        ],
    }
    return _single_job_cluster(rng, "usecase-npu", "seed 000 use case 2", tree, ASCEND_NODE, job,
                               occupancy)


def _check_mode(mode: str) -> None:
    if mode not in ("hard", "soft"):
        raise ValueError(f"mode must be hard or soft, not {mode!r}")


def _single_job_cluster(rng, name, description, tree, shape, job, occupancy) -> dict[str, Any]:
    n = tree.n_nodes
    doc = document(name, f"{description}: {job['tasks'][0]['replicas']} pods on {n} nodes")
    doc["nodeGroups"] = [node_group(shape, n, [])]
    doc["topology"] = tree.topology()
    doc["queues"] = [{"name": "default", "weight": 1}]
    doc["priorityClasses"] = [dict(pc) for pc in PRIORITY_CLASSES]
    pattern = shape.pattern(n)
    running = running_jobs(
        rng, tree=tree, node_names=[pattern.format(i=i) for i in range(n)], occupancy=occupancy,
        full=shape.per_node, pod_requests=shape.pod_requests,
    )
    doc["jobs"] = [*running, job]
    return doc
