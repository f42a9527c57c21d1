"""A defragmentation family whose fewest moves are known by construction (``docs/defrag.md``).

Racks (tier-1 HyperNodes under one tier-2 spine) of ``rack_size`` nodes with 8 GPUs each. In
every rack ``lo``–``hi`` nodes are full, each with one of the fills 8, 4+4, 4+2+2 or 2+2+2+2
GPUs (one running one-pod job per number), at random positions; the other nodes are free. The
pending gang ``default/big`` has ``k`` pods of 8 GPUs, hard-limited to one rack.

No node has room but a free one, so to admit the gang some rack must free ``k - free`` of its
full nodes, each by moving all its jobs (anywhere else: one-pod jobs fit any free node). The
fewest jobs moved (= the move cost: every job has one pod) is therefore, over the racks, the
sum of the smallest job counts of the nodes it must free (:attr:`DefragFamily.minimum`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toposolve.core.instance import (
    HyperNode,
    Instance,
    Job,
    Member,
    MemberSelector,
    NetworkTopology,
    Node,
    Task,
)

GPU = "nvidia.com/gpu"
FILLS = ((8,), (4, 4), (4, 2, 2), (2, 2, 2, 2))
FILL_WEIGHTS = (0.1, 0.4, 0.3, 0.2)
TARGET = "default/big"


@dataclass
class DefragFamily:
    instance: Instance
    minimum: int  # fewest jobs (and pods) moved that admit the target
    running_jobs: int


def _member(name: str, kind: str = "Node") -> Member:
    return Member(type=kind, selector=MemberSelector(exact_match=name))


def defrag_family(racks: int, *, k: int = 8, rack_size: int = 8, lo: int = 1, hi: int = 1,
                  seed: int = 0, weights: tuple[float, ...] = FILL_WEIGHTS) -> DefragFamily:
    """The family's instance with ``racks`` racks and its known minimum.

    Parameters
    ----------
    racks, rack_size
        Racks and nodes per rack.
    k
        Pods (whole nodes) of the pending gang; ``k > rack_size - lo`` so that no rack holds
        it without moves.
    lo, hi
        Full nodes per rack, drawn uniformly.
    seed
        The generator's seed.

    Returns
    -------
    DefragFamily
        The instance, the known fewest moved jobs and the number of running jobs.
    """
    if not 1 <= k <= rack_size or not 1 <= lo <= hi <= rack_size:
        raise ValueError("need 1 <= lo <= hi <= rack_size and 1 <= k <= rack_size")
    rng = np.random.default_rng(seed)
    nodes, hypernodes, jobs, costs = [], [], [], []
    for r in range(racks):
        names = [f"r{r}-n{i}" for i in range(rack_size)]
        nodes += [Node(name=n, allocatable={GPU: 8000, "cpu": 64000}) for n in names]
        hypernodes.append(HyperNode(name=f"rack{r}", tier=1, members=[_member(n) for n in names]))
        full = rng.choice(rack_size, size=int(rng.integers(lo, hi + 1)), replace=False)
        counts = []
        for i in sorted(full.tolist()):
            fill = FILLS[int(rng.choice(len(FILLS), p=weights))]
            counts.append(len(fill))
            for gpus in fill:
                jobs.append(Job(name=f"run-{len(jobs)}", min_available=1, tasks=[Task(
                    name="worker", replicas=1, requests={GPU: gpus * 1000},
                    running={0: names[i]})]))
        need = k - (rack_size - len(counts))
        costs.append(sum(sorted(counts)[:max(need, 0)]))
    hypernodes.append(HyperNode(name="spine", tier=2,
                                members=[_member(f"rack{r}", "HyperNode") for r in range(racks)]))
    big = Job(name="big", min_available=k, creation_index=1,
              network_topology=NetworkTopology(mode="hard", highest_tier_allowed=1),
              tasks=[Task(name="worker", replicas=k, requests={GPU: 8000})])
    instance = Instance(nodes=nodes, hypernodes=hypernodes, jobs=[*jobs, big])
    return DefragFamily(instance, min(costs), len(jobs))
