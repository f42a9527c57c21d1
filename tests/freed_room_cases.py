"""Instances for the freed-room rule (``docs/eviction.md``), shared by the checker, heuristic and
CP-SAT tests so that all three are held to the same cases.

Cluster: seed 000's Example-1 tree (racks s0 = node0, node1; s1 = node2, node3; s2; s3; tier 1)
of 8-GPU nodes. Priorities: high 100, mid 50, lowmid 20, low 1; one queue.
"""

from __future__ import annotations

from builders import GPU, example1, gang, hard, on

from toposolve.core.instance import Instance, Job, PriorityClass, Task

PRIORITIES = [
    PriorityClass(name="high", value=100),
    PriorityClass(name="mid", value=50),
    PriorityClass(name="lowmid", value=20),
    PriorityClass(name="low", value=1),
]


def freed_room_cluster(jobs: list[Job]) -> Instance:
    """Seed 000 Example 1 running ``jobs``, with this module's four priority classes."""
    return example1(jobs, priority_classes=PRIORITIES)


def half_gang(
    name: str, pods: int, priority: str, *, running=None, topology=None, min_available=None
) -> Job:
    """``pods`` pods of 4 GPUs (half a node)."""
    return Job(
        name=name,
        min_available=pods if min_available is None else min_available,
        priority_class=priority,
        network_topology=topology,
        tasks=[Task(name="worker", replicas=pods, requests={GPU: 4}, running=running or {})],
    )


def idle_room_taken_by_a_bystander() -> Instance:
    """node0 runs `v` (low, 4 GPUs) and has 4 GPUs idle; node1 runs `w` (mid, 8 GPUs); node2..7
    run `wall` (high). `x` (low, one 4-GPU pod, no topology) fits the idle half of node0, so the
    allocate pass binds it there. `p` (high, 2 × 4 GPUs, hard tier 1) then needs rack s0 and
    evicts `v` (lowest priority first) and `w`: a node where a victim is evicted also receives
    the bystander `x` — in room that was idle before the plan, which the rule allows."""
    return freed_room_cluster(
        [
            half_gang("v", 1, "low", running=on(0)),
            gang("w", 1, priority_class="mid", running=on(1)),
            gang("wall", 6, priority_class="high", running=on(2, 3, 4, 5, 6, 7)),
            half_gang("x", 1, "low"),
            half_gang("p", 2, "high", topology=hard(1)),
        ]
    )


def leftover_room_of_a_stronger_victim() -> Instance:
    """node0 runs one pod of `vm` (mid, 2 × 8 GPUs, minAvailable 1; the other pod on node2),
    node1 runs `vl` (low, 8 GPUs), node3..7 run `wall` (high). `p1` (high, one 4-GPU pod, hard
    tier 1) evicts vm's SAFE pod on node0 and leaves 4 GPUs of it free. `p2` (lowmid, 2 × 4
    GPUs, hard tier 1) may evict `vl` but not `vm` (priority 50 > 20): the 4 GPUs left on node0
    are not its to take, so it must go to node1 (both pods) after evicting vl."""
    return freed_room_cluster(
        [
            Job(
                name="vm",
                min_available=1,
                priority_class="mid",
                tasks=[Task(name="worker", replicas=2, requests={GPU: 8}, running=on(0, 2))],
            ),
            gang("vl", 1, priority_class="low", running=on(1)),
            gang("wall", 5, priority_class="high", running=on(3, 4, 5, 6, 7)),
            half_gang("p1", 1, "high", topology=hard(1)),
            half_gang("p2", 2, "lowmid", topology=hard(1)),
        ]
    )
