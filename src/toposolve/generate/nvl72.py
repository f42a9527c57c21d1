"""GB200 NVL72-like clusters.

A node is one compute tray: 4 ``nvidia.com/gpu``, 144 cores, 960 GiB. 18 trays form one NVL72
rack, a single NVLink domain (tier 1, ``nvl72``); 8 racks share a leaf group (tier 2, ``leaf``,
the 576-GPU scalable unit); one spine (tier 3) joins them, or, with
``leaves_per_spine=N``, spine groups of N leaves (tier 3) under one core (tier 4) — the shape of
a 100k-GPU cluster (``--nodes 25002``: 1,389 racks). ``tier0_racks=True`` numbers the tiers
from 0 instead (racks at tier 0, as Volcano's own tests model NVLink domains below the leaf). Pods
ask for 32 cores and 200 GiB per
GPU. Job sizes come in multiples of a rack (:data:`~toposolve.generate.jobs.NVL72_MIX`);
partitions are whole racks (18 pods) or half racks.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toposolve.generate.common import NodeShape, gpu_cluster
from toposolve.generate.jobs import NVL72_MIX
from toposolve.generate.tree import regular_tree

GB200_TRAY = NodeShape(
    prefix="gb200",
    accelerator="nvidia.com/gpu",
    per_node=4,
    cpu=144,
    memory_gi=960,
    labels={"nvidia.com/gpu.product": "NVIDIA-GB200"},
    cpu_per_accelerator=32,
    memory_gi_per_accelerator=200,
)


def nvl72(
    rng: np.random.Generator,
    nodes: int | None,
    load: float,
    *,
    racks_per_leaf: int = 8,
    jobs: int | None = None,
    occupancy: float = 0.0,
    cordoned: float = 0.0,
    tier0_racks: bool = False,
    leaves_per_spine: int = 0,
) -> dict[str, Any]:
    fanout = (racks_per_leaf, leaves_per_spine) if leaves_per_spine else (racks_per_leaf,)
    names = ("nvl72", "leaf", "spine", "core") if leaves_per_spine else ("nvl72", "leaf", "spine")
    tree = regular_tree(nodes or 576, 18, fanout, names, base_tier=0 if tier0_racks else 1)
    return gpu_cluster(
        rng,
        name="nvl72",
        description=f"GB200 NVL72-like: {tree.n_nodes // 18} racks of 18 trays x 4 GPUs",
        tree=tree,
        shape=GB200_TRAY,
        mix=NVL72_MIX,
        load=load,
        jobs=jobs,
        occupancy=occupancy,
        cordoned=cordoned,
    )
