"""Meta-like RoCE training clusters (the 24,576-GPU "RoCE cluster" shape).

Meta's 24k-GPU RoCE clusters (Gangidi et al., "RDMA over Ethernet for Distributed AI Training at
Meta Scale", SIGCOMM 2024) hang two 8-GPU hosts off each rack training switch (RTSW); racks join
in AI zones through cluster training switches (CTSW), and an aggregator layer (ATSW) joins the
zones. toposolve models that as tier 1 = rack (2 nodes), tier 2 = AI zone (``zone_racks`` racks),
tier 3 = the cluster. The default 3,072 nodes make 1,536 racks in 12 zones of 128 racks. Why it
matters for placement: tiny tier-1 domains, so almost every gang spans racks and the zone is
the domain that counts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toposolve.generate.common import gpu_cluster
from toposolve.generate.jobs import SUPERPOD_MIX
from toposolve.generate.superpod import DGX_H100
from toposolve.generate.tree import regular_tree


def meta_roce(rng: np.random.Generator, nodes: int | None, load: float, *, zone_racks: int = 128,
        jobs: int | None = None, occupancy: float = 0.0, cordoned: float = 0.0) -> dict[str, Any]:
    tree = regular_tree(nodes or 3072, 2, (zone_racks,), ("rack", "zone", "cluster"))
    return gpu_cluster(
        rng,
        name="meta-roce",
        description=(
            f"Meta-like RoCE cluster: {tree.n_nodes} nodes in {tree.counts[0]} racks of 2, "
            f"{tree.counts[1]} AI zones"
        ),
        tree=tree,
        shape=DGX_H100,
        mix=SUPERPOD_MIX,
        load=load,
        jobs=jobs,
        occupancy=occupancy,
        cordoned=cordoned,
    )
