"""DGX SuperPOD-like clusters (and the ``scale-6k`` stress shape).

Nodes are DGX H100-like: 8 ``nvidia.com/gpu``, 224 cores, 2 TiB. The default tree follows the
SuperPOD reference design: 32-node scalable units (tier 1, ``su``), 4 SUs per spine group (tier 2,
``spine``), 4 spine groups per core group (tier 3, ``core``) and one ``top`` (tier 4). Pods ask
for 24 cores and 200 GiB per GPU.

Option ``leaders=K``: the first K pending jobs of at least two pods with a network topology (and
no partitions) are LeaderWorkerSet-style, a one-pod leader beside the workers
(:func:`~toposolve.generate.jobs.with_leaders`); written as Kueue objects they are a podset group.

``scale-6k``: 6,144 nodes with 200 pending jobs and a deep tree reaching Volcano's reported
HyperNode density (about 9,600 HyperNodes for 6,000 nodes): tier 1 = one HyperNode per node (its
NVSwitch domain — per-node HyperNodes are what automatic discovery produces), tier 2 = node
pairs, tier 3 = 32-node SUs, tier 4 = spine groups of 4 SUs, tier 5 = top: 6,144 + 3,072 + 192 +
48 + 1 = 9,457 HyperNodes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toposolve.generate.common import NodeShape, gpu_cluster
from toposolve.generate.jobs import SUPERPOD_MIX
from toposolve.generate.tree import regular_tree

DGX_H100 = NodeShape(
    prefix="dgx",
    accelerator="nvidia.com/gpu",
    per_node=8,
    cpu=224,
    memory_gi=2048,
    labels={"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
    cpu_per_accelerator=24,
    memory_gi_per_accelerator=200,
)
SUPERPOD_TIER_NAMES = ("su", "spine", "core")
SCALE_TIER_NAMES = ("node", "pair", "su", "spine", "top")


def tier_names_for(tiers: int, names: tuple[str, ...] = SUPERPOD_TIER_NAMES) -> tuple[str, ...]:
    """``su``, ``spine``, ``core``, ``tier4``… for the tiers below the top, then ``top``."""
    below = [names[t] if t < len(names) else f"tier{t + 1}" for t in range(tiers - 1)]
    return (*below, "top")


def superpod(
    rng: np.random.Generator,
    nodes: int | None,
    load: float,
    *,
    leaf_size: int = 32,
    fanout: tuple[int, ...] = (4, 4),
    tier_names: tuple[str, ...] = (),
    jobs: int | None = None,
    occupancy: float = 0.0,
    cordoned: float = 0.0,
    leaders: int = 0,
    name: str = "superpod",
) -> dict[str, Any]:
    tiers = len(fanout) + 2
    tree = regular_tree(nodes or 1024, leaf_size, fanout, tier_names or tier_names_for(tiers))
    return gpu_cluster(
        rng,
        name=name,
        description=f"DGX SuperPOD-like: {tree.n_nodes} nodes, {tree.hypernode_count} HyperNodes "
                    f"in {tiers} tiers",
        tree=tree,
        shape=DGX_H100,
        mix=SUPERPOD_MIX,
        load=load,
        jobs=jobs,
        occupancy=occupancy,
        cordoned=cordoned,
        leaders=leaders,
    )


def scale_6k(rng: np.random.Generator, nodes: int | None, load: float, *, jobs: int | None = 200,
             occupancy: float = 0.0) -> dict[str, Any]:
    return superpod(rng, nodes or 6144, load, leaf_size=1, fanout=(2, 16, 4),
                    tier_names=SCALE_TIER_NAMES, jobs=jobs, occupancy=occupancy, name="scale-6k")
