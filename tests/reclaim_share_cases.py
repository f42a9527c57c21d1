"""A victim queue's share is judged before the plan (``docs/eviction.md``, "Over its deserved
share"): the case shared by the checker, heuristic and CP-SAT tests (issue 19 §2).

Cluster: seed 000's Example-1 tree (racks s0 = node0, node1; s1 = node2, node3; s2 = node4,
node5; s3 = node6, node7; tier 1) of 8-GPU nodes. Queue a runs `elastic` (3 pods, minAvailable 1)
on node0, node1, node6: 24 GPUs; its `grow` (2 pods, no topology) is pending. Queue c (not
reclaimable) fills node2, node3, node5. node4 and node7 are idle: no rack is free, so queue b's
`claim` (2 pods, hard tier 1, b deserves 16) cannot be placed by allocate, while `grow` is, on
node4 and node7 — a then holds 40 GPUs.
"""

from __future__ import annotations

from builders import GPU, example1, gang, hand_plan, hard, in_queue, on

from toposolve.core.instance import Instance, Queue
from toposolve.core.plan import Plan

AT_ITS_SHARE = 24  # a deserves exactly what it holds before the plan
OVER_ITS_SHARE = 8  # a holds 16 GPUs above its share before the plan: two pods may go


def queue_growing_in_the_plan(deserved_a: int) -> Instance:
    """The module's cluster with queue a deserving ``deserved_a`` GPUs."""
    return example1(
        [
            in_queue(gang("elastic", 3, min_available=1, running=on(0, 1, 6)), "a"),
            in_queue(gang("grow", 2), "a"),
            in_queue(gang("fixed", 3, running=on(2, 3, 5)), "c"),
            in_queue(gang("claim", 2, topology=hard(1)), "b"),
        ],
        [
            Queue(name="a", deserved={GPU: deserved_a}),
            Queue(name="b", deserved={GPU: 16}),
            Queue(name="c", reclaimable=False),
        ],
    )


def reclaim_for_claim() -> Plan:
    """grow on node4, node7; claim reclaims rack s0 from elastic (the plan the heuristic made
    before: a's 16 new GPUs put it "over" its share of 24)."""
    return hand_plan(
        [("grow", 0, "node4"), ("grow", 1, "node7"), ("claim", 0, "node0"),
         ("claim", 1, "node1")],
        [("elastic", 0, "node0"), ("elastic", 1, "node1")],
    )


def mixed_request_sizes(deserved_a: int = 16) -> Instance:
    """Queue a runs `small` (3 × 4 GPUs, a whole gang) on node0, node1, node2 and `big` (1 × 8
    GPUs) on node6: 20 GPUs. Queue c (not reclaimable) fills node3, node4, node5, node7. b's
    `claim` wants one 8-GPU pod; no node has 8 idle. Deserving 16, a is 4 above its share, and
    proportion's cut-off takes big (8 GPUs) while a still exceeds it: the last pod taken may be
    larger than the excess, and larger than the smallest candidate."""
    return example1(
        [
            in_queue(gang("small", 3, gpus=4, running=on(0, 1, 2)), "a"),
            in_queue(gang("big", 1, running=on(6)), "a"),
            in_queue(gang("fixed", 4, running=on(3, 4, 5, 7)), "c"),
            in_queue(gang("claim", 1), "b"),
        ],
        [
            Queue(name="a", deserved={GPU: deserved_a}),
            Queue(name="b", deserved={GPU: 16}),
            Queue(name="c", reclaimable=False),
        ],
    )
