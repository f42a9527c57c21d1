"""Fat trees of configurable ``arity`` and ``depth``.

``depth`` tiers of switches: a tier-1 (``leaf``) HyperNode holds ``arity`` nodes, each tier above
groups ``arity`` HyperNodes of the tier below, and tier ``depth`` is a single ``core`` over all.
Without ``nodes`` the cluster has ``arity ** depth`` nodes. Nodes are generic 8-GPU servers
(128 cores, 1 TiB); the job mix is the SuperPOD one.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from toposolve.core.limits import MAX_NODES
from toposolve.generate.common import NodeShape, gpu_cluster
from toposolve.generate.jobs import SUPERPOD_MIX
from toposolve.generate.tree import regular_tree

GPU_SERVER = NodeShape(prefix="node", accelerator="nvidia.com/gpu", per_node=8, cpu=128,
        memory_gi=1024, labels={}, cpu_per_accelerator=14, memory_gi_per_accelerator=112)


def fattree(
    rng: np.random.Generator,
    nodes: int | None,
    load: float,
    *,
    arity: int = 4,
    depth: int = 3,
    jobs: int | None = None,
    occupancy: float = 0.0,
    cordoned: float = 0.0,
) -> dict[str, Any]:
    if depth < 2:
        raise ValueError("depth must be at least 2")
    if arity < 2:
        raise ValueError("arity must be at least 2")
    if depth * math.log(arity) > math.log(MAX_NODES):  # arity**depth would pass the node limit
        raise ValueError(
            f"arity {arity} and depth {depth} make more than {MAX_NODES:,} nodes, the limit")
    names = tuple(["leaf", "agg", *(f"tier{t}" for t in range(3, depth))][: depth - 1]) + ("core",)
    tree = regular_tree(nodes or arity**depth, arity, (arity,) * (depth - 2), names)
    return gpu_cluster(
        rng,
        name="fattree",
        description=f"fat tree: arity {arity}, depth {depth}, {tree.n_nodes} nodes",
        tree=tree,
        shape=GPU_SERVER,
        mix=SUPERPOD_MIX,
        load=load,
        jobs=jobs,
        occupancy=occupancy,
        cordoned=cordoned,
    )
