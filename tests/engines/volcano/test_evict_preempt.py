"""Gang preempt / reclaim end to end; every plan goes through the checker.

Cluster: seed 000's Example-1 tree (s0..s3 tier 1 with two nodes of 8 GPUs each, s4 = {s0, s1},
s5 = {s2, s3} tier 2, s6 tier 3), every node full unless stated. Expected victims are derived by
hand from seed 002's rules (first workable domain, SAFE before WHOLE, ROI, proportion cut-off).
"""

from __future__ import annotations

import pytest
from builders import bound, evicted, example1_tree, gang, hard, in_queue, nodes, on, partitioned
from reclaim_share_cases import AT_ITS_SHARE, OVER_ITS_SHARE, queue_growing_in_the_plan

from toposolve.check.checker import check_plan
from toposolve.core.assignment import to_plan
from toposolve.core.instance import Instance, PriorityClass, Queue
from toposolve.core.problem import compile_problem
from toposolve.engines.volcano import HeuristicEngine, run_heuristic, run_preemption
from toposolve.policy.profiles import Profile

PRIORITIES = [PriorityClass(name="high", value=100), PriorityClass(name="low", value=1)]


def solve(jobs, mode, queues=(), node_list=None):
    inst = Instance(
        nodes=node_list or nodes(8),
        hypernodes=example1_tree(),
        jobs=jobs,
        queues=list(queues),
        priority_classes=PRIORITIES,
    )
    return solve_instance(inst, mode)


def solve_instance(inst: Instance, mode: str):
    """Allocate, then the eviction pass ``mode``; the plan (checked in ``mode``) and what the
    pass did."""
    problem = compile_problem(inst)
    engine = HeuristicEngine(problem, Profile())
    engine.run()
    outcome = run_preemption(engine, mode)
    plan = to_plan(problem, engine.assignment, engine="heuristic", status="FEASIBLE")
    assert check_plan(inst, plan, eviction_mode=mode) == []
    return plan, outcome


def test_preempt_clears_one_rack_of_a_lower_priority_gang():
    """urgent (priority 100, 2 × 8 GPUs, hard tier 1) finds no free rack. Domains s0..s3: s0
    runs an equal-priority job (no candidates); s1 runs `low` (priority 1), whose WHOLE bundle
    frees exactly 16 GPUs, so s1 is cleared and urgent is nominated there."""
    jobs = [
        gang("peer", 2, priority_class="high", running=on(0, 1)),
        gang("low", 2, priority_class="low", running=on(2, 3)),
        gang("mid", 4, priority_class="low", running=on(4, 5, 6, 7)),
        gang("urgent", 2, priority_class="high", topology=hard(1)),
    ]
    plan, outcome = solve(jobs, "preempt")
    assert evicted(plan) == ["low-worker-0", "low-worker-1"]
    assert bound(plan, "urgent") == [("node2", True), ("node3", True)]
    assert plan.job("default/urgent").placed and plan.job("default/urgent").hypernode == "s1"
    assert outcome.placed == {"default/urgent": "s1"}
    record = outcome.victims["default/low"]
    assert record.broken and not record.was_broken
    assert outcome.stats() == {
        "preemptors_placed": 1,
        "evicted_pods": 2,
        "victim_jobs": 1,
        "broken_gangs": 1,
    }


def test_preempt_takes_safe_surplus_before_breaking_a_gang():
    """urgent: 2 × 4 GPUs, hard tier 2 → first domain s4 (node0..3). There lowA (2 × 8, min 2)
    is all core; lowB (4 × 4 GPUs, min 2, pods 0-1 on node2, 2-3 on node3) has 2 surplus pods.
    The SAFE bundle {lowB-3, lowB-2} alone covers the 8 GPUs needed and frees node3."""
    jobs = [
        gang("lowA", 2, priority_class="low", running=on(0, 1)),
        gang("lowB", 4, gpus=4, min_available=2, priority_class="low", running=on(2, 2, 3, 3)),
        gang("peer", 4, priority_class="high", running=on(4, 5, 6, 7)),
        gang("urgent", 2, gpus=4, priority_class="high", topology=hard(2)),
    ]
    plan, outcome = solve(jobs, "preempt")
    assert evicted(plan) == ["lowB-worker-2", "lowB-worker-3"]
    assert bound(plan, "urgent") == [("node3", True), ("node3", True)]
    assert outcome.victims["default/lowB"].broken is False
    assert "default/lowA" not in outcome.victims
    assert outcome.stats()["broken_gangs"] == 0


def test_preempt_breaks_the_gang_that_lives_inside_the_domain():
    """Two WHOLE bundles in s0 for a 1 × 8 GPU preemptor: `b-local` (2 × 4 GPUs, both on node0)
    has ROI (8/8)/(8/8) = 1; `a-wide` (4 × 8 GPUs on node1..4, one pod in s0) has ROI
    (8/8)/(32/8) = 0.25. ROI outranks the name order, so b-local goes."""
    jobs = [
        gang("a-wide", 4, priority_class="low", running=on(1, 2, 3, 4)),
        gang("b-local", 2, gpus=4, priority_class="low", running=on(0, 0)),
        gang("peer", 3, priority_class="high", running=on(5, 6, 7)),
        gang("urgent", 1, priority_class="high", topology=hard(1)),
    ]
    plan, outcome = solve(jobs, "preempt")
    assert evicted(plan) == ["b-local-worker-0", "b-local-worker-1"]
    assert bound(plan, "urgent") == [("node0", True)]
    assert set(outcome.victims) == {"default/b-local"}


def test_preempt_never_evicts_equal_priority_and_explains_why():
    jobs = [
        gang("peer", 8, priority_class="high", running=on(*range(8))),
        gang("urgent", 2, priority_class="high", topology=hard(1)),
    ]
    plan, outcome = solve(jobs, "preempt")
    assert plan.evictions == [] and plan.bindings == []
    reason = plan.job("default/urgent").reason
    assert "eviction (preempt): no evictable pods" in reason and "4 candidate HyperNodes" in reason
    assert outcome.placed == {}


def test_no_eviction_when_no_domain_could_ever_hold_the_gang():
    """3 × 8 GPUs under tier 1: a rack has 16 GPUs, so evicting helps nowhere."""
    jobs = [
        gang("low", 8, priority_class="low", running=on(*range(8))),
        gang("urgent", 3, priority_class="high", topology=hard(1)),
    ]
    plan, _ = solve(jobs, "preempt")
    assert plan.evictions == [] and plan.bindings == []
    assert "tier ≤ 1 could hold the gang even if emptied" in plan.job("default/urgent").reason


def test_no_eviction_when_victims_do_not_make_room():
    """Victims exist but the only lower-priority pods in each rack free 4 of the 16 GPUs."""
    jobs = [
        gang("peer", 8, gpus=4, priority_class="high", running=on(*range(8))),
        gang("low", 8, gpus=4, min_available=1, priority_class="low", running=on(*range(8))),
        gang("urgent", 2, priority_class="high", topology=hard(1)),
    ]
    plan, _ = solve(jobs, "preempt")
    assert plan.evictions == [] and plan.bindings == []
    assert "does not make room" in plan.job("default/urgent").reason


def reclaim_jobs():
    """Queue a runs a1, a2, a3 (2 × 8 GPUs each) on node0..5; queue b's `claim` wants
    4 × 8 GPUs under tier 2, and s5 has only node6, node7 free."""
    return [
        in_queue(gang("a1", 2, running=on(0, 1)), "a"),
        in_queue(gang("a2", 2, running=on(2, 3)), "a"),
        in_queue(gang("a3", 2, running=on(4, 5)), "a"),
        in_queue(gang("claim", 4, topology=hard(2)), "b"),
    ]


def test_reclaim_takes_back_only_what_the_queue_holds_beyond_its_share():
    """Equal weights: a requests 48, b 32 → deserved 32 each. a may lose 16 GPUs (proportion's
    cut-off: 48 → 40 → 32). In s4 that is a1 alone (a2 cut): 16 < 32, no fit. In s5, a3 plus
    the two idle nodes give 32: a3 is evicted and claim nominated on node4..7."""
    plan, outcome = solve(reclaim_jobs(), "reclaim", queues=[Queue(name="a"), Queue(name="b")])
    assert evicted(plan) == ["a3-worker-0", "a3-worker-1"]
    assert bound(plan, "claim") == [(f"node{i}", True) for i in range(4, 8)]
    assert plan.job("default/claim").hypernode == "s5"
    assert outcome.modes == {"default/claim": "reclaim"}


def test_reclaim_respects_non_reclaimable_queues():
    queues = [Queue(name="a", reclaimable=False), Queue(name="b")]
    plan, _ = solve(reclaim_jobs(), "reclaim", queues=queues)
    assert plan.evictions == [] and plan.bindings == []
    assert "eviction (reclaim): no evictable pods" in plan.job("default/claim").reason


def test_reclaim_stops_at_the_reclaimers_deserved_share():
    """Weights 3:1: a deserves 48 (all it holds), b 16; claim needs 32 → b may not reclaim."""
    queues = [Queue(name="a", weight=3), Queue(name="b", weight=1)]
    plan, _ = solve(reclaim_jobs(), "reclaim", queues=queues)
    assert plan.evictions == []
    assert "queue 'b' would exceed its deserved share" in plan.job("default/claim").reason


def test_both_runs_preempt_then_reclaim():
    """No lower-priority job in queue b, so preempt finds nothing; reclaim then succeeds."""
    plan, outcome = solve(reclaim_jobs(), "both", queues=[Queue(name="a"), Queue(name="b")])
    assert evicted(plan) == ["a3-worker-0", "a3-worker-1"]
    assert outcome.modes == {"default/claim": "reclaim"} and outcome.failures == {}
    assert plan.job("default/claim").reason is None


@pytest.mark.parametrize("mode", ["reclaim", "both"])
def test_new_pods_of_a_queue_do_not_make_it_reclaimable(mode):
    """Allocate binds `grow` (16 GPUs) to queue a, which held exactly its share of 24: a is
    judged by what it held before the plan, so claim may reclaim nothing and waits."""
    plan, outcome = solve_instance(queue_growing_in_the_plan(AT_ITS_SHARE), mode)
    assert plan.evictions == []
    assert bound(plan, "grow") == [("node4", False), ("node7", False)]
    assert not plan.job("default/claim").placed
    assert "no evictable pods (reclaimable queues over their deserved share)" in (
        outcome.failures["default/claim"])


@pytest.mark.parametrize("mode", ["reclaim", "both"])
def test_a_queue_over_its_share_before_the_plan_gives_back_its_surplus(mode):
    """a deserves 8 and held 24: 16 GPUs may go whatever the plan binds to grow. s0 is the
    first rack with victims: elastic's two SAFE pods there make room for claim."""
    plan, outcome = solve_instance(queue_growing_in_the_plan(OVER_ITS_SHARE), mode)
    assert evicted(plan) == ["elastic-worker-0", "elastic-worker-1"]
    assert bound(plan, "claim") == [("node0", True), ("node1", True)]
    assert bound(plan, "grow") == [("node4", False), ("node7", False)]
    assert outcome.modes == {"default/claim": "reclaim"}


def test_run_heuristic_evict_option_matches_the_engine_pass():
    jobs = [
        gang("low", 2, priority_class="low", running=on(2, 3)),
        gang("peer", 6, priority_class="high", running=on(0, 1, 4, 5, 6, 7)),
        gang("urgent", 2, priority_class="high", topology=hard(1)),
    ]
    inst = Instance(
        nodes=nodes(8), hypernodes=example1_tree(), jobs=jobs, priority_classes=PRIORITIES
    )
    problem = compile_problem(inst)
    without = run_heuristic(problem)
    assert without.evicted == [] and without.counts == {}
    assignment = run_heuristic(problem, evict="preempt")
    plan = to_plan(problem, assignment, engine="heuristic", status="FEASIBLE")
    assert check_plan(inst, plan, eviction_mode="preempt") == []
    assert sorted(assignment.evicted) == ["default/low-worker-0", "default/low-worker-1"]
    assert assignment.nominated_jobs == {2}
    # plans with evictions are rejected when evictions are not allowed
    assert any(v.kind == "eviction" for v in check_plan(inst, plan, eviction_mode="none"))


def test_partitioned_preemptor_keeps_each_partition_in_one_rack():
    """urgent: 2 partitions × 2 pods × 8 GPUs (partitions hard tier 1, job hard tier 2). Racks
    hold 16 GPUs < 32 needed, so the domains are s4 then s5. In s4, `low` (4 pods, all core) is
    one WHOLE bundle freeing node0..3; the partitions land in s0 and s1."""
    urgent = partitioned(
        "urgent",
        partitions=2,
        size=2,
        job_topology=hard(2),
        partition_topology=hard(1),
        min_available=4,
        requests={"nvidia.com/gpu": 8},
    ).model_copy(update={"priority_class": "high"})
    jobs = [
        gang("low", 4, priority_class="low", running=on(0, 1, 2, 3)),
        gang("peer", 4, priority_class="high", running=on(4, 5, 6, 7)),
        urgent,
    ]
    plan, _ = solve(jobs, "preempt")
    assert evicted(plan) == [f"low-worker-{i}" for i in range(4)]
    assert bound(plan, "urgent") == [(f"node{i}", True) for i in range(4)]
    placement = plan.job("default/urgent")
    assert placement.hypernode == "s4"
    assert sorted(s.hypernode for s in placement.subjobs) == ["s0", "s1"]


def test_preemptor_without_topology_searches_the_whole_cluster():
    """No networkTopology: one domain, the root. Bundles sorted SAFE first: `elastic` (4 pods,
    min 1) offers 3 surplus pods (indices 3, 2, 1 on node7, node6, node5); 2 are needed, and the
    gate passes after the single SAFE bundle of 3, so all three go and `elastic` keeps one pod."""
    jobs = [
        gang("core", 4, priority_class="low", running=on(0, 1, 2, 3)),
        gang("elastic", 4, min_available=1, priority_class="low", running=on(4, 5, 6, 7)),
        gang("urgent", 2, priority_class="high"),
    ]
    plan, outcome = solve(jobs, "preempt")
    assert evicted(plan) == ["elastic-worker-1", "elastic-worker-2", "elastic-worker-3"]
    assert len(bound(plan, "urgent")) == 2 and all(
        n in {"node5", "node6", "node7"} for n, _ in bound(plan, "urgent")
    )
    assert outcome.victims["default/elastic"].broken is False
