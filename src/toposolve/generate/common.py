"""Pieces every preset shares: the document skeleton, GPU node groups, pod request shapes."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from toposolve.formats.native.reader import API_VERSION, KIND
from toposolve.generate.jobs import (
    DEFAULT_CONSTRAINTS,
    PRIORITY_CLASSES,
    ConstraintMix,
    JobMix,
    draw_sizes,
    pending_jobs,
    with_leaders,
)
from toposolve.generate.occupancy import running_jobs
from toposolve.generate.tree import Tree


@dataclass(frozen=True)
class NodeShape:
    """An accelerator node: its allocatable amounts and what one accelerator's pod share is."""

    prefix: str  # node names are ``<prefix>-<i:04d>``
    accelerator: str  # resource name, e.g. nvidia.com/gpu
    per_node: int  # accelerators per node
    cpu: int  # cores
    memory_gi: int
    labels: dict[str, str]
    cpu_per_accelerator: int  # a pod's cores per accelerator it asks for
    memory_gi_per_accelerator: int

    def allocatable(self) -> dict[str, Any]:
        return {"cpu": str(self.cpu), "memory": f"{self.memory_gi}Gi",
                self.accelerator: self.per_node, "pods": 110}

    def pod_requests(self, accelerators: int) -> dict[str, Any]:
        return {
            self.accelerator: accelerators,
            "cpu": str(self.cpu_per_accelerator * accelerators),
            "memory": f"{self.memory_gi_per_accelerator * accelerators}Gi",
        }

    def pattern(self, count: int) -> str:
        return f"{self.prefix}-{{i:0{max(4, len(str(count - 1)))}d}}"


def document(name: str, description: str) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": name, "description": description},
    }


def node_group(shape: NodeShape, count: int, cordoned: list[int]) -> dict[str, Any]:
    group: dict[str, Any] = {"name": shape.pattern(count), "count": count,
                             "allocatable": shape.allocatable()}
    if shape.labels:
        group["labels"] = dict(shape.labels)
    if cordoned:
        group["unschedulable"] = cordoned
    return group


def cordon(rng: np.random.Generator, count: int, fraction: float) -> list[int]:
    """Positions of ``round(fraction × count)`` random nodes, sorted."""
    k = round(fraction * count)
    return sorted(int(x) for x in rng.choice(count, size=k, replace=False)) if k else []


def gpu_cluster(
    rng: np.random.Generator,
    *,
    name: str,
    description: str,
    tree: Tree,
    shape: NodeShape,
    mix: JobMix,
    load: float,
    jobs: int | None,
    occupancy: float,
    cordoned: float,
    constraints: ConstraintMix = DEFAULT_CONSTRAINTS,
    leaders: int = 0,
) -> dict[str, Any]:
    """A homogeneous accelerator cluster on ``tree`` with running and pending gangs
    (``leaders`` of the pending ones LeaderWorkerSet-style: :func:`~.jobs.with_leaders`).

    Pending demand (accelerators asked for by pending pods) ≈ ``load`` × the cluster's
    accelerators, whatever is already running.
    """
    n = tree.n_nodes
    doc = document(name, description)
    pattern = shape.pattern(n)
    doc["nodeGroups"] = [node_group(shape, n, cordon(rng, n, cordoned))]
    doc["topology"] = tree.topology()
    doc["queues"] = [{"name": "default", "weight": 1}]
    doc["priorityClasses"] = [dict(pc) for pc in PRIORITY_CLASSES]
    node_names = [pattern.format(i=i) for i in range(n)]
    running = running_jobs(rng, tree=tree, node_names=node_names, occupancy=occupancy,
                           full=shape.per_node, pod_requests=shape.pod_requests)
    draws = draw_sizes(rng, mix, full=shape.per_node, target=load * n * shape.per_node,
                       max_pods=max(1, math.ceil(n / 2)), n_jobs=jobs)
    pending = pending_jobs(rng, draws, tree=tree, full=shape.per_node,
                           pod_requests=shape.pod_requests, mix=mix, constraints=constraints)
    doc["jobs"] = running + with_leaders(pending, leaders)
    return doc
