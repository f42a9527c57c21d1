"""Running jobs that keep a fraction of the nodes busy, placed as a real cluster leaves them.

Rule ("fill, then churn"): running gangs with sizes drawn from :data:`RUNNING_NODES` are packed
onto consecutive nodes in tree order — a gang never straddles the boundary of the smallest
HyperNode that could hold it (it moves on to the next one, leaving the rest free) — until
``busy_target = occupancy + (1 − occupancy) / 2`` of the nodes are taken; then random gangs
finish (are removed) until at most ``occupancy`` of the nodes are busy. What remains is compact
per domain with job-shaped holes scattered across domains: the fragmentation a busy cluster has.
A share of one-node gangs use only part of their node (1, 2 or 4 accelerators).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from toposolve.formats.native.names import compress_names
from toposolve.generate.tree import Tree

RUNNING_NODES = (1, 2, 4, 8, 16, 32)
RUNNING_WEIGHTS = (0.3, 0.2, 0.18, 0.14, 0.1, 0.08)
PARTIAL_SHARE = 0.3
RUNNING_PRIORITIES = (("normal", 0.7), ("low", 0.3))


def running_jobs(
    rng: np.random.Generator,
    *,
    tree: Tree,
    node_names: Sequence[str],
    occupancy: float,
    full: int,
    pod_requests: Callable[[int], dict[str, Any]],
    prefix: str = "run",
) -> list[dict[str, Any]]:
    """Native job entries (all pods running) keeping about ``occupancy`` of the nodes busy."""
    n = tree.n_nodes
    if occupancy <= 0:
        return []
    fill_to = occupancy + (1 - occupancy) / 2
    placed: list[tuple[int, int]] = []  # (first node, node count)
    cursor = 0
    weights = np.asarray(RUNNING_WEIGHTS) / sum(RUNNING_WEIGHTS)
    while cursor < n and cursor < fill_to * n:
        size = int(rng.choice(RUNNING_NODES, p=weights))
        size = min(size, n)
        domain = tree.domain_size(tree.tightest_tier(size))
        if cursor // domain != (cursor + size - 1) // domain:
            cursor = (cursor // domain + 1) * domain
        if cursor + size > n:
            break
        placed.append((cursor, size))
        cursor += size

    busy = sum(size for _, size in placed)
    order = rng.permutation(len(placed))
    finished: set[int] = set()
    for k in order:
        if busy <= occupancy * n:
            break
        finished.add(int(k))
        busy -= placed[k][1]

    survivors = [p for k, p in enumerate(placed) if k not in finished]
    width = max(3, len(str(len(survivors) - 1)))
    names, probs = zip(*RUNNING_PRIORITIES, strict=True)
    jobs = []
    for k, (first, size) in enumerate(survivors):
        gpus = full
        if size == 1 and rng.random() < PARTIAL_SHARE:
            gpus = int(rng.choice([g for g in (1, 2, 4) if g < full] or [full]))
        jobs.append(
            {
                "name": f"{prefix}-{k:0{width}d}",
                "priorityClass": str(rng.choice(names, p=probs)),
                "tasks": [
                    {
                        "name": "worker",
                        "replicas": size,
                        "requests": pod_requests(gpus),
                        "running": compress_names(node_names[first:first + size]),
                    }
                ],
            }
        )
    return jobs
