"""The checker's eviction rules: running victims, preemption by priority, reclaim by deserved
share, capacity after eviction, and the preemptor's own gang and tier rules.

Cluster: the Example-1 tree (racks s0..s3 of two 8-GPU nodes: node0..node7), every
expectation derived by hand from the rules in :mod:`toposolve.check.evictions` and
:mod:`toposolve.check.quotas`.
"""

from __future__ import annotations

import pytest
from builders import GPU, example1, gang, hand_plan, hard, in_queue, on
from reclaim_share_cases import (
    AT_ITS_SHARE,
    OVER_ITS_SHARE,
    queue_growing_in_the_plan,
    reclaim_for_claim,
)

from toposolve.check.checker import check_plan
from toposolve.check.quotas import deserved_shares
from toposolve.core.instance import Queue
from toposolve.core.plan import Binding, Plan


def kinds(violations) -> list[str]:
    return [v.kind for v in violations]


# ------------------------------------------------------------------ the victims ran


def test_evicted_pods_must_be_running_where_the_plan_says():
    inst = example1(
        [
            gang("v", 2, min_available=1, priority_class="low", running={0: "node0"}),
            gang("urgent", 1, priority_class="high"),
        ]
    )
    taker = [("urgent", 0, "node0")]
    assert check_plan(inst, hand_plan(taker, [("v", 0, "node0")]), "preempt") == []
    pending = check_plan(inst, hand_plan(taker, [("v", 1, "node0")]), "preempt")
    wrong_node = check_plan(inst, hand_plan(taker, [("v", 0, "node1")]), "preempt")
    assert "not-running" in kinds(pending) and "not-running" in kinds(wrong_node)
    unknown = Plan(
        engine="hand", status="FEASIBLE", evictions=[Binding(pod="default/ghost", node="node0")]
    )
    assert kinds(check_plan(inst, unknown, "preempt")) == ["unknown-pod"]


# ------------------------------------------------------------------ preempt


@pytest.mark.parametrize(
    ("victim_class", "victim_queue", "valid"),
    [
        ("low", "default", True),  # same queue, strictly lower priority
        ("mid", "default", True),
        ("high", "default", False),  # equal priority
        ("low", "other", False),  # another queue: not preemption
    ],
)
def test_preempt_evicts_only_strictly_lower_priority_in_the_same_queue(
    victim_class, victim_queue, valid
):
    inst = example1(
        [
            in_queue(gang("v", 1, priority_class=victim_class, running=on(0)), victim_queue),
            gang("urgent", 1, priority_class="high"),
        ]
    )
    found = check_plan(inst, hand_plan([("urgent", 0, "node0")], [("v", 0, "node0")]), "preempt")
    assert kinds(found) == ([] if valid else ["eviction"])


def test_preempt_needs_a_higher_priority_job_that_receives_bindings():
    """`mid` is evicted; the only job bound is `late` (low): nothing of higher priority gains."""
    inst = example1(
        [
            gang("mid", 1, priority_class="mid", running=on(0)),
            gang("late", 1, priority_class="low"),
            gang("urgent", 1, priority_class="high"),
        ]
    )
    assert kinds(
        check_plan(inst, hand_plan([("late", 0, "node0")], [("mid", 0, "node0")]), "preempt")
    ) == ["eviction"]
    assert kinds(check_plan(inst, hand_plan((), [("mid", 0, "node0")]), "preempt")) == ["eviction"]
    assert (
        check_plan(inst, hand_plan([("urgent", 0, "node0")], [("mid", 0, "node0")]), "preempt")
        == []
    )


# ------------------------------------------------------------------ reclaim


def reclaim_case(queue_a: Queue, evicted: int, queue_b: Queue | None = None):
    """Queue a runs `a` on node0..5 (48 GPUs); queue b's `claim` (4 × 8 GPUs, 32 requested)
    is bound to node2..5 after `evicted` pods of `a` (a-2, a-3, …) go."""
    inst = example1(
        [
            in_queue(gang("a", 6, min_available=1, running=on(0, 1, 2, 3, 4, 5)), "a"),
            in_queue(gang("claim", 4, min_available=1), "b"),
        ],
        [queue_a, queue_b or Queue(name="b")],
    )
    taken = [("a", 2 + k, f"node{2 + k}") for k in range(evicted)]
    binds = [("claim", k, f"node{2 + k}") for k in range(evicted)]
    return inst, hand_plan(binds, taken)


def test_reclaim_only_from_reclaimable_queues():
    inst, p = reclaim_case(Queue(name="a", reclaimable=False), 1)
    found = check_plan(inst, p, "reclaim")
    assert kinds(found) == ["eviction"] and "not reclaimable" in found[0].message


@pytest.mark.parametrize(
    ("deserved", "evicted", "valid"),
    [
        (40, 1, True),  # 48 > 40: one pod
        (40, 2, False),  # after one pod the queue holds 40 = its share
        (24, 3, True),  # 48 → 40 → 32 → 24: three pods, each taken while above 24
        (24, 4, False),
        (48, 1, False),  # at its share: nothing to give back
    ],
)
def test_reclaim_stops_at_the_listed_deserved_share(deserved, evicted, valid):
    inst, p = reclaim_case(Queue(name="a", deserved={GPU: deserved}), evicted)
    found = check_plan(inst, p, "reclaim")
    assert kinds(found) == ([] if valid else ["eviction"])
    if not valid:
        assert found[0].obj == "Queue/a" and "deserved share" in found[0].message


@pytest.mark.parametrize(
    ("weights", "evicted", "valid"),
    [
        ((1, 1), 2, True),  # shares 32 / 32: a may give back 16 GPUs
        ((1, 1), 3, False),
        ((3, 1), 1, False),  # shares 48 / 16: a holds exactly its share
    ],
)
def test_reclaim_uses_the_weighted_share_when_none_is_listed(weights, evicted, valid):
    """64 GPUs; a requests 48, b 32. Equal weights: 32 each (b's request is met, nothing is
    left). Weights 3:1: a gets 48 (its whole request), b 16."""
    queue_a, queue_b = Queue(name="a", weight=weights[0]), Queue(name="b", weight=weights[1])
    inst, p = reclaim_case(queue_a, evicted, queue_b)
    assert kinds(check_plan(inst, p, "reclaim")) == ([] if valid else ["eviction"])


def test_weighted_shares_redistribute_what_a_capped_queue_leaves():
    """64 GPUs, equal weights. `small` requests 8 GPUs: it gets 8 of its 32, and `big` (request
    100 × 8) takes the 24 left: 56. With a capability of 40, big stops at 40."""
    jobs = [in_queue(gang("s", 1), "small"), in_queue(gang("b", 100), "big")]
    shares = deserved_shares(example1(jobs, [Queue(name="small"), Queue(name="big")]))
    assert shares["small"][GPU] == pytest.approx(8000) and shares["big"][GPU] == pytest.approx(
        56000
    )
    capped = deserved_shares(
        example1(jobs, [Queue(name="small"), Queue(name="big", capability={GPU: 40})])
    )
    assert capped["big"][GPU] == pytest.approx(40000)


@pytest.mark.parametrize("mode", ["reclaim", "both"])
def test_a_queue_is_judged_by_what_it_held_before_the_plan(mode):
    """a holds 24 GPUs before the plan; the plan binds 16 more to its `grow` and reclaims two
    elastic pods for b's claim. Deserving 24, a was at its share: the 16 new GPUs do not make
    it reclaimable. Deserving 8, it held 16 above its share: two pods may go."""
    found = check_plan(queue_growing_in_the_plan(AT_ITS_SHARE), reclaim_for_claim(), mode)
    assert [v.obj for v in found] == ["Queue/a"]
    assert "not over its deserved share before the plan" in found[0].message
    assert "held 24000m before the plan, deserves 24000m" in found[0].message
    assert check_plan(queue_growing_in_the_plan(OVER_ITS_SHARE), reclaim_for_claim(), mode) == []
    over_by_one_pod = check_plan(queue_growing_in_the_plan(16), reclaim_for_claim(), mode)
    assert [v.obj for v in over_by_one_pod] == ["Queue/a"]
    assert "more than the queue holds above its deserved share" in over_by_one_pod[0].message


def test_both_does_not_charge_preempted_pods_to_a_reclaim_share():
    """Queue b deserves 32 GPUs and holds 16 (`blow`) before the plan (the 16 it binds to
    `urgent` do not count): under its share. Its own urgent may still preempt blow (priority);
    reclaim alone (for queue a's `other`) may not take it."""
    inst = example1(
        [
            in_queue(gang("blow", 2, priority_class="low", running=on(0, 1)), "b"),
            in_queue(gang("urgent", 2, priority_class="high"), "b"),
            in_queue(gang("other", 1), "a"),
        ],
        [Queue(name="a"), Queue(name="b", deserved={GPU: 32})],
    )
    p = hand_plan(
        [("urgent", 0, "node0"), ("urgent", 1, "node1"), ("other", 0, "node2")],
        [("blow", 0, "node0"), ("blow", 1, "node1")],
    )
    assert check_plan(inst, p, "both") == []
    assert check_plan(inst, p, "preempt") == []
    found = check_plan(inst, p, "reclaim")
    assert [v.obj for v in found] == ["Queue/b", "Node/node0", "Node/node1"]
    # and in reclaim mode urgent (queue b) may not take the room freed by evicting blow (b)
    assert all("room freed for other jobs" in v.message for v in found[1:])


# ------------------------------------------------------------------ capacity and the preemptor


def test_capacity_counts_only_the_pods_actually_evicted():
    """node0 runs two 4-GPU pods of `v`; urgent's 8-GPU pod fits only when both go."""
    inst = example1(
        [
            gang("v", 2, gpus=4, min_available=1, priority_class="low", running=on(0, 0)),
            gang("urgent", 1, priority_class="high"),
        ]
    )
    half = check_plan(inst, hand_plan([("urgent", 0, "node0")], [("v", 0, "node0")]), "preempt")
    assert kinds(half) == ["capacity"] and half[0].obj == "Node/node0"
    both = hand_plan([("urgent", 0, "node0")], [("v", 0, "node0"), ("v", 1, "node0")])
    assert check_plan(inst, both, "preempt") == []


def test_the_preemptor_still_obeys_its_gang_and_tier():
    """urgent: 2 pods, hard tier 1. Binding one pod breaks its gang; binding the pods in two
    racks breaks its tier limit, evictions or not."""
    inst = example1(
        [
            gang("v", 8, min_available=1, priority_class="low", running=on(*range(8))),
            gang("urgent", 2, priority_class="high", topology=hard(1)),
        ]
    )
    one = hand_plan([("urgent", 0, "node0")], [("v", 0, "node0")])
    assert kinds(check_plan(inst, one, "preempt")) == ["gang"]
    split = hand_plan(
        [("urgent", 0, "node0"), ("urgent", 1, "node2")], [("v", 0, "node0"), ("v", 2, "node2")]
    )
    assert kinds(check_plan(inst, split, "preempt")) == ["tier"]
    rack = hand_plan(
        [("urgent", 0, "node0"), ("urgent", 1, "node1")], [("v", 0, "node0"), ("v", 1, "node1")]
    )
    assert check_plan(inst, rack, "preempt") == []
