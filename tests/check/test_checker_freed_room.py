"""The checker's justified-eviction rule (``docs/eviction.md``): room freed by evicting a job's
pods goes only to jobs allowed to evict it; room idle before the plan is anyone's; a victim
receives no bindings. Instances: :mod:`freed_room_cases`; expectations derived by hand."""

from __future__ import annotations

from builders import gang, hand_plan, on
from freed_room_cases import (
    freed_room_cluster,
    half_gang,
    idle_room_taken_by_a_bystander,
    leftover_room_of_a_stronger_victim,
)

from toposolve.check.checker import check_plan


def messages(violations) -> list[tuple[str, str]]:
    return [(v.kind, v.obj) for v in violations]


def test_a_bystander_may_use_room_that_was_idle_before_the_plan():
    """x (low, may evict nothing) on node0's idle half while v is evicted there for p."""
    inst = idle_room_taken_by_a_bystander()
    p = hand_plan(
        [("x", 0, "node0"), ("p", 0, "node0"), ("p", 1, "node1")],
        [("v", 0, "node0"), ("w", 0, "node1")],
    )
    assert check_plan(inst, p, "preempt") == []


def test_a_bystander_may_not_take_room_freed_for_the_preemptor():
    """Same evictions, but x sits on node1, whose 8 GPUs were all w's: x (low) may not evict w
    (mid), so it takes room freed for p. Capacity alone is fine (4 + 4 ≤ 8)."""
    inst = idle_room_taken_by_a_bystander()
    p = hand_plan(
        [("x", 0, "node1"), ("p", 0, "node0"), ("p", 1, "node1")],
        [("v", 0, "node0"), ("w", 0, "node1")],
    )
    found = check_plan(inst, p, "preempt")
    assert messages(found) == [("eviction", "Node/node1")]
    assert "Job/default/x" in found[0].message and "room freed for other jobs" in found[0].message


def test_a_later_preemptor_may_not_take_what_is_left_of_a_stronger_victim():
    """p2 (lowmid) puts a pod on node0, where p1 (high) evicted vm (mid): p2 may evict vl (low)
    only. With both p2 pods on node1 (vl's room) the plan is valid."""
    inst = leftover_room_of_a_stronger_victim()
    evictions = [("vm", 0, "node0"), ("vl", 0, "node1")]
    wrong = hand_plan([("p1", 0, "node0"), ("p2", 0, "node0"), ("p2", 1, "node1")], evictions)
    assert messages(check_plan(inst, wrong, "preempt")) == [("eviction", "Node/node0")]
    right = hand_plan([("p1", 0, "node0"), ("p2", 0, "node1"), ("p2", 1, "node1")], evictions)
    assert check_plan(inst, right, "preempt") == []


def test_two_preemptors_share_a_node_each_on_its_own_victims_room():
    """node0 runs one pod each of vm (mid) and vl (low), 4 GPUs each; node7 is idle. p1 (high)
    may take both rooms, p2 (lowmid) only vl's: one pod each on node0 is valid; p1 on node7 and
    both p2 pods on node0 is not (p2 takes vm's room), although node0 has room for them."""
    inst = freed_room_cluster(
        [
            half_gang("vm", 1, "mid", running=on(0)),
            half_gang("vl", 1, "low", running=on(0)),
            gang("wall", 6, priority_class="high", running=on(1, 2, 3, 4, 5, 6)),
            half_gang("p1", 1, "high"),
            half_gang("p2", 2, "lowmid"),
        ]
    )
    evictions = [("vm", 0, "node0"), ("vl", 0, "node0")]
    shared = hand_plan([("p1", 0, "node0"), ("p2", 0, "node7"), ("p2", 1, "node0")], evictions)
    assert check_plan(inst, shared, "preempt") == []
    taken = hand_plan([("p1", 0, "node7"), ("p2", 0, "node0"), ("p2", 1, "node0")], evictions)
    found = check_plan(inst, taken, "preempt")
    assert messages(found) == [("eviction", "Node/node0")]
    assert "Job/default/p2 request 8000m" in found[0].message


def test_an_overcommitted_node_pays_its_deficit_from_freed_room_first():
    """node0 (8 GPUs) runs 12: v (low, 8) and vm (high, 4), e.g. after its allocatable shrank.
    Evicting v frees 8, of which 4 pay the deficit: p's 4-GPU pod fits, big's 8-GPU pod does
    not (reported as capacity, not twice)."""
    inst = freed_room_cluster(
        [
            gang("v", 1, priority_class="low", running=on(0)),
            half_gang("vm", 1, "high", running=on(0)),
            gang("wall", 7, priority_class="high", running=on(1, 2, 3, 4, 5, 6, 7)),
            half_gang("p", 1, "mid"),
            gang("big", 1, priority_class="mid"),
        ]
    )
    assert check_plan(inst, hand_plan([("p", 0, "node0")], [("v", 0, "node0")]), "preempt") == []
    found = check_plan(inst, hand_plan([("big", 0, "node0")], [("v", 0, "node0")]), "preempt")
    assert messages(found) == [("capacity", "Node/node0")]


def test_a_job_that_loses_pods_receives_no_bindings():
    """v (2 half pods, minAvailable 1) loses its running pod on node0 to p and has its pending
    pod bound to the idle node2 in the same plan: started and stopped at once."""
    inst = freed_room_cluster(
        [
            half_gang("v", 2, "low", running={0: "node0"}, min_available=1),
            half_gang("filler", 1, "low", running=on(0)),
            gang("wall", 5, priority_class="high", running=on(1, 3, 4, 5, 6)),
            half_gang("p", 1, "high"),
        ]
    )
    found = check_plan(
        inst, hand_plan([("p", 0, "node0"), ("v", 1, "node2")], [("v", 0, "node0")]), "preempt"
    )
    assert messages(found) == [("eviction", "Job/default/v")]
