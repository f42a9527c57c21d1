"""A defragmentation family whose fewest moves are known by construction (``docs/defrag.md``).

Racks (tier-1 HyperNodes under one tier-2 spine) of ``rack_size`` nodes with 8 GPUs each. In
every rack ``lo``–``hi`` nodes are full, each with one of the fills 8, 4+4, 4+2+2 or 2+2+2+2
GPUs (one running one-pod job per number), at random positions; the other nodes are free. The
pending gang ``default/big`` has ``k`` pods of 8 GPUs, hard-limited to one rack.

No node has room but a free one, so to admit the gang some rack must free ``k - free`` of its
full nodes, each by moving all its jobs (anywhere else: one-pod jobs fit any free node). The
fewest jobs moved (= the move cost: every job has one pod) is therefore, over the racks, the
sum of the smallest job counts of the nodes it must free (:attr:`DefragFamily.minimum`).

:func:`fragmented` builds the realistic cases of ``benchmarks/bench_defrag.py --families``: a
generated cluster filled with small running gangs until a pending hard tier-1 gang fits no leaf
although enough GPUs are idle (its fewest moves are not known: CP-SAT proves them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toposolve.core.instance import (
    HyperNode,
    Instance,
    Job,
    Member,
    NetworkTopology,
    Node,
    Task,
)
from toposolve.core.topology import build_topology

GPU = "nvidia.com/gpu"
FILLS = ((8,), (4, 4), (4, 2, 2), (2, 2, 2, 2))
FILL_WEIGHTS = (0.1, 0.4, 0.3, 0.2)
TARGET = "default/big"


@dataclass
class DefragFamily:
    instance: Instance
    minimum: int  # fewest jobs (and pods) moved that admit the target
    running_jobs: int


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
        hypernodes.append(HyperNode(name=f"rack{r}", tier=1,
                                    members=[Member.exact(n) for n in names]))
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
                                members=[Member.exact(f"rack{r}", "HyperNode")
                                         for r in range(racks)]))
    big = Job(name="big", min_available=k, creation_index=1,
              network_topology=NetworkTopology(mode="hard", highest_tier_allowed=1),
              tasks=[Task(name="worker", replicas=k, requests={GPU: 8000})])
    instance = Instance(nodes=nodes, hypernodes=hypernodes, jobs=[*jobs, big])
    return DefragFamily(instance, min(costs), len(jobs))


@dataclass
class FragmentedCase:
    """A generated cluster filled with small running gangs so a pending hard-topology gang is
    blocked in every leaf although enough GPUs are idle cluster-wide (:func:`fragmented`)."""

    instance: Instance
    target: str  # the pending gang's key
    target_pods: int
    target_gpus: int  # per pod
    running_jobs: int
    running_pods: int
    idle_gpus: int  # cluster-wide, before any move
    leaves: int  # tier-1 domains
    leaves_big_enough: int  # leaves with at least ``target_pods`` nodes


def fragmented(instance: Instance, *, target_pods: int, target_gpus: int, seed: int = 0,
               occupancy: float = 0.4, pod_gpus: tuple[int, ...] = (1, 2, 4),
               pod_weights: tuple[float, ...] = (0.5, 0.3, 0.2),
               gang_sizes: tuple[int, ...] = (1, 2, 4),
               gang_weights: tuple[float, ...] = (0.5, 0.3, 0.2)) -> FragmentedCase:
    """``instance``'s cluster (its pending jobs dropped) fragmented around one pending gang.

    Running gangs (priority class ``low``, no topology constraint) of ``gang_sizes`` pods of
    ``pod_gpus`` GPUs each (one size per gang, at most a node) are placed, each on random
    nodes of one random leaf (the lowest HyperNode holding a node) with room: first until
    ``occupancy`` of the GPUs are busy, then, while some leaf still has ``target_pods`` nodes
    with ``target_gpus`` free, one more in such a leaf (on its nodes with that much free). The
    pending gang ``default/target`` (priority class ``high``) has ``target_pods`` pods of
    ``target_gpus`` GPUs, hard-limited to tier 1, so no leaf holds it without moves while the
    cluster's idle GPUs are enough (raises ValueError if they are not).
    """
    rng = np.random.default_rng(seed)
    topo = build_topology(instance.nodes, instance.hypernodes)
    gpus = np.array([n.allocatable.get(GPU, 0) // 1000 for n in instance.nodes], dtype=int)
    free = gpus.copy()
    home = np.asarray(topo.node_home)
    leaves = [np.flatnonzero(home == h) for h in sorted(set(home.tolist()))]
    big = [leaf for leaf in leaves if len(leaf) >= target_pods]
    if not big:
        raise ValueError(f"no leaf has {target_pods} nodes")
    jobs: list[Job] = []
    pods = 0

    def place(leaf: np.ndarray, need: int | None) -> bool:
        nonlocal pods
        size = int(rng.choice(gang_sizes, p=gang_weights))
        per = int(rng.choice(pod_gpus, p=pod_weights))
        cand = leaf[free[leaf] >= per]
        if need is not None:  # break the leaf: land on nodes the target could use
            cand = leaf[free[leaf] >= need]
            per = min(per, int(free[cand].min())) if len(cand) else per
        if not len(cand):
            return False
        running = {}
        for i in range(size):
            ok = cand[free[cand] >= per]
            if not len(ok):
                break
            n = int(rng.choice(ok))
            free[n] -= per
            running[i] = instance.nodes[n].name
        jobs.append(Job(name=f"run-{len(jobs)}", min_available=len(running),
                        priority_class="low", tasks=[Task(
                            name="worker", replicas=len(running), requests={GPU: str(per)},
                            running=running)]))
        pods += len(running)
        return True

    total = int(gpus.sum())
    while total - free.sum() < occupancy * total:
        place(leaves[int(rng.integers(len(leaves)))], None)
    while True:
        open_ = [leaf for leaf in big if (free[leaf] >= target_gpus).sum() >= target_pods]
        if not open_:
            break
        place(open_[int(rng.integers(len(open_)))], target_gpus)
    if int(free.sum()) < target_pods * target_gpus:
        raise ValueError("the filled cluster has fewer idle GPUs than the target needs")
    target = Job(name="target", min_available=target_pods, priority_class="high",
                 creation_index=1, network_topology=NetworkTopology(mode="hard",
                                                                    highest_tier_allowed=1),
                 tasks=[Task(name="worker", replicas=target_pods,
                             requests={GPU: str(target_gpus)})])
    inst = instance.model_copy(update={"jobs": [*jobs, target]})
    return FragmentedCase(inst, "default/target", target_pods, target_gpus, len(jobs), pods,
                          int(free.sum()), len(leaves), len(big))
