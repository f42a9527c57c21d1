"""Overloaded constraint trees (issue 23 §2): is ``placed`` proven when gangs crowd the domains of
a Topology crossing the main tree?

Instance: ``--nodes`` nodes (8 GPUs each) in a main tree of 8-node leaves under 32-node blocks,
and a constraint tree ``cross`` whose 8-node leaves are shifted by 4 nodes (each straddles two
main leaves) under 32-node groups shifted likewise. Pending: gangs of 2 to ``--max-size``
(default 6) whole-node pods until their demand reaches ``--load`` × the GPUs, drawn from
``seed``: half hard at a leaf of
``cross``, a quarter hard at a leaf of the main tree, a quarter unconstrained; two priority
levels. Solved by ``toposolve.solve(..., "cpsat")`` (default profile, one worker, deterministic).
Run it with ``PYTHONPATH`` on two trees (this branch and one before the crossing knapsack rows)
to compare.

    PYTHONPATH=src .venv/bin/python benchmarks/bench_crossing_knapsacks.py [--nodes 128]
        [--load 1.3] [--max-size 6] [--seeds 5] [--time-limit 30]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from placed_stage import placed_stages, proven

import toposolve
from toposolve.core.instance import (
    ConstraintTree,
    HyperNode,
    Instance,
    Job,
    Member,
    MemberSelector,
    NetworkTopology,
    Node,
    PriorityClass,
    Task,
)

GPU = "nvidia.com/gpu"


def _hn(name: str, tier: int, kind: str, members: list[str]) -> HyperNode:
    return HyperNode(name=name, tier=tier, members=[
        Member(type=kind, selector=MemberSelector(exact_match=m)) for m in members])


def _tree(prefix: str, names: list[str], shift: int) -> list[HyperNode]:
    """8-node leaves and 32-node groups over ``names`` rotated by ``shift``."""
    turned = names[shift:] + names[:shift]
    leaves = [_hn(f"{prefix}l{k}", 1, "Node", turned[8 * k: 8 * k + 8])
              for k in range(len(names) // 8)]
    groups = [_hn(f"{prefix}g{k}", 2, "HyperNode", [h.name for h in leaves[4 * k: 4 * k + 4]])
              for k in range((len(leaves) + 3) // 4)]
    return leaves + groups


def instance(nodes: int, load: float, seed: int, max_size: int = 6) -> Instance:
    names = [f"n{i}" for i in range(nodes)]
    rng = np.random.default_rng(seed)
    jobs, demand = [], 0
    while demand < load * nodes:
        size = int(rng.integers(2, max_size + 1))
        kind = rng.choice(["cross", "cross", "main", "none"])
        topology = (NetworkTopology(mode="hard", highest_tier_allowed=1, tree="cross",
                                    within_hypernode="cross") if kind == "cross" else
                    NetworkTopology(mode="hard", highest_tier_allowed=1) if kind == "main"
                    else None)
        jobs.append(Job(name=f"j{len(jobs)}", min_available=size, network_topology=topology,
                        priority_class=str(rng.choice(["low", "high"])),
                        tasks=[Task(name="t", replicas=size, requests={GPU: 8})]))
        demand += size
    cross = _tree("c", names, 4)
    cross.append(_hn("cross", 3, "HyperNode", [h.name for h in cross if h.tier == 2]))
    return Instance(nodes=[Node(name=n, allocatable={GPU: 8, "cpu": 64}) for n in names],
                    hypernodes=_tree("m", names, 0),
                    constraint_trees=[ConstraintTree(name="cross", hypernodes=cross)],
                    priority_classes=[PriorityClass(name="low", value=1),
                                      PriorityClass(name="high", value=10)], jobs=jobs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=128)
    parser.add_argument("--load", type=float, default=1.3)
    parser.add_argument("--max-size", type=int, default=6)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--time-limit", type=float, default=30)
    args = parser.parse_args()
    for seed in range(args.seeds):
        inst = instance(args.nodes, args.load, seed, args.max_size)
        start = time.perf_counter()
        plan = toposolve.solve(inst, "cpsat", time_limit=args.time_limit, workers=1)
        wall = time.perf_counter() - start
        placed = placed_stages(plan)
        dtime = sum(s["deterministic_time"] for s in placed)
        at = max((s["ended_s"] for s in placed), default=float("nan"))
        print(f"seed {seed}: {len(inst.jobs)} jobs, {sum(j.placed for j in plan.jobs)} placed, "
              f"placed proven {proven(placed)} at {at:.1f}s (placed dtime {dtime:.3f}), "
              f"solve {wall:.1f}s")


if __name__ == "__main__":
    main()
