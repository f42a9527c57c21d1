"""The heuristic's eviction pass gives freed room only to jobs allowed to take it
(:mod:`toposolve.engines.volcano.evict.room`, ``docs/eviction.md``); cases in
:mod:`freed_room_cases`, every plan checked."""

from __future__ import annotations

from builders import nodes_of
from freed_room_cases import idle_room_taken_by_a_bystander, leftover_room_of_a_stronger_victim
from runs import heuristic_eviction_plan


def test_a_later_preemptor_does_not_take_the_room_left_by_a_stronger_victim():
    """p1 leaves 4 GPUs of vm's room on node0; p2 may not evict vm, so both its pods go to
    node1 after evicting vl (before the rule it took node0's leftover: binpacking prefers it)."""
    plan = heuristic_eviction_plan(leftover_room_of_a_stronger_victim())
    assert nodes_of(plan, "p1") == ["node0"]
    assert nodes_of(plan, "p2") == ["node1", "node1"]
    assert sorted(e.pod for e in plan.evictions) == ["default/vl-worker-0", "default/vm-worker-0"]


def test_a_bystander_keeps_the_idle_room_it_was_given_before_the_evictions():
    """The allocate pass binds x into node0's idle half; p then evicts v (and w) in rack s0."""
    plan = heuristic_eviction_plan(idle_room_taken_by_a_bystander())
    assert nodes_of(plan, "x") == ["node0"]
    assert nodes_of(plan, "p") == ["node0", "node1"]
    assert {e.node for e in plan.evictions} == {"node0", "node1"}


def test_reclaim_after_preempt_sees_only_room_it_may_take():
    """Mode both runs preempt, then reclaim with the same freed-room ledger: still valid."""
    for inst in (idle_room_taken_by_a_bystander(), leftover_room_of_a_stronger_victim()):
        heuristic_eviction_plan(inst, "both")
