"""CP-SAT with evictions: optimal victims where the greedy heuristic is not, and the rules.

Cluster (unless stated): seed 000's Example-1 tree — racks s0..s3 (tier 1) of two 8-GPU nodes
(s0 = node0, node1; s1 = node2, node3; s2 = node4, node5; s3 = node6, node7), s4 = {s0, s1},
s5 = {s2, s3} (tier 2), s6 (tier 3) — every node full. Priorities: high 100, mid 50, low 1.
Objective ``models/preemption.yaml``: placed > broken_gangs > eviction_cost (accelerator units
stopped: evicted pods, and every pod of a broken gang) > evicted_pods > spread. Expected plans
are derived by hand from these rules; every plan goes through the checker in its mode.
"""

from __future__ import annotations

import pytest
from builders import (
    EVICTION_PRIORITIES,
    GPU,
    bound,
    evicted,
    example1,
    gang,
    hard,
    in_queue,
    nodes,
    on,
    partitioned,
)
from freed_room_cases import idle_room_taken_by_a_bystander, leftover_room_of_a_stronger_victim
from reclaim_share_cases import (
    AT_ITS_SHARE,
    OVER_ITS_SHARE,
    mixed_request_sizes,
    queue_growing_in_the_plan,
)
from runs import heuristic_eviction_plan

from toposolve.check.checker import check_plan
from toposolve.core.assignment import Assignment, to_plan
from toposolve.core.deadline import Deadline
from toposolve.core.errors import InputError
from toposolve.core.instance import Instance, Job, Queue, Task
from toposolve.core.problem import compile_problem
from toposolve.engines.contract import SolveOptions
from toposolve.engines.cpsat import solve_cpsat
from toposolve.engines.volcano import run_heuristic
from toposolve.policy.objective import stage_values
from toposolve.policy.profiles import load_profile
from toposolve.solve import solve

PROFILE = load_profile("preemption")


def cpsat(inst: Instance, mode: str = "preempt", **options):
    problem = compile_problem(inst)
    options.setdefault("time_limit", 10)
    # the warm start toposolve.solve gives
    hint = options.pop("hint") if "hint" in options else run_heuristic(problem, PROFILE, evict=mode)
    result = solve_cpsat(problem, PROFILE, SolveOptions(evict=mode, **options), hint)
    plan = to_plan(problem, result.assignment, engine="cpsat", status=result.status)
    assert check_plan(inst, plan, eviction_mode=mode) == []
    return result, plan


# ------------------------------------------------------------------ better than the heuristic


def test_first_fit_domain_costs_more_than_a_later_domain():
    """urgent (high, 2 × 8 GPUs, hard tier 1) needs a whole rack. The heuristic tries s0 first:
    `wide` (4 pods on node0, node1, node4, node5) has its WHOLE bundle there, so it breaks wide,
    which destroys 32 GPUs. s1 holds `small` (2 pods): breaking it destroys 16. Both break one
    gang; the optimum evicts small (cost 16 < 32) and nominates urgent on node2, node3."""
    inst = example1(
        [
            gang("wide", 4, priority_class="low", running=on(0, 1, 4, 5)),
            gang("small", 2, priority_class="low", running=on(2, 3)),
            gang("peer", 2, priority_class="high", running=on(6, 7)),
            gang("urgent", 2, priority_class="high", topology=hard(1)),
        ]
    )
    assert evicted(heuristic_eviction_plan(inst)) == ["wide-worker-0", "wide-worker-1"]
    result, plan = cpsat(inst)
    assert result.status == "OPTIMAL"
    assert evicted(plan) == ["small-worker-0", "small-worker-1"]
    assert bound(plan, "urgent") == [("node2", True), ("node3", True)]
    assert plan.job("default/urgent").hypernode == "s1"
    stats = result.stats["eviction"]
    assert stats["volcano"] == {"broken_gangs": 1, "evicted_pods": 2, "eviction_cost": 32}
    assert stats["cpsat"] == {"broken_gangs": 1, "evicted_pods": 2, "eviction_cost": 16}
    assert stats["saved"] == {"broken_gangs": 0, "evicted_pods": 0, "eviction_cost": 16}


def test_heuristic_breaks_two_gangs_where_one_whole_gang_elsewhere_suffices():
    """s0 runs one pod each of `ga` (other pod on node6) and `gb` (other pod on node7); s1 runs
    the whole of `gc`. The heuristic's first domain s0 breaks ga and gb; the optimum empties s1
    and breaks gc alone (s3 would break ga and gb again, s2 is high priority)."""
    inst = example1(
        [
            gang("ga", 2, priority_class="low", running=on(0, 6)),
            gang("gb", 2, priority_class="low", running=on(1, 7)),
            gang("gc", 2, priority_class="low", running=on(2, 3)),
            gang("peer", 2, priority_class="high", running=on(4, 5)),
            gang("urgent", 2, priority_class="high", topology=hard(1)),
        ]
    )
    assert evicted(heuristic_eviction_plan(inst)) == ["ga-worker-0", "gb-worker-0"]
    result, plan = cpsat(inst)
    assert evicted(plan) == ["gc-worker-0", "gc-worker-1"]
    assert result.objective.stages["broken_gangs"] == 1
    assert result.stats["eviction"]["saved"]["broken_gangs"] == 1


# ------------------------------------------------------------------ victims' gangs


def elastic_cluster(urgent_pods: int) -> Instance:
    """`elastic` (4 × 8 GPUs, minAvailable 3) on s0 + s1, `tight` (2 pods, min 2) on s2."""
    return example1(
        [
            gang("elastic", 4, min_available=3, priority_class="low", running=on(0, 1, 2, 3)),
            gang("tight", 2, priority_class="low", running=on(4, 5)),
            gang("peer", 2, priority_class="high", running=on(6, 7)),
            gang("urgent", urgent_pods, priority_class="high", topology=hard(1)),
        ]
    )


def test_surplus_pod_is_evicted_without_breaking_its_gang():
    """One 8-GPU pod: elastic has one pod above minAvailable; evicting it breaks nothing and
    costs 8 units, less than any other choice."""
    result, plan = cpsat(elastic_cluster(1))
    assert len(plan.evictions) == 1 and evicted(plan)[0].startswith("elastic-")
    assert result.objective.stages["broken_gangs"] == 0
    assert result.objective.stages["eviction_cost"] == 8
    assert bound(plan, "urgent") == [(plan.evictions[0].node, True)]


def test_a_victim_below_its_minimum_is_broken_and_costs_all_it_held():
    """A whole rack: two elastic pods leave it 2 < 3 (broken, 32 units lost: all four pods);
    `tight` in s2 is broken too but holds 16. The optimum breaks tight."""
    result, plan = cpsat(elastic_cluster(2))
    assert evicted(plan) == ["tight-worker-0", "tight-worker-1"]
    assert result.objective.stages["broken_gangs"] == 1
    assert result.objective.stages["eviction_cost"] == 16


def test_a_role_minimum_protects_the_driver():
    """Seed 002 Job-B: driver (1, min 1) + worker (4, min 3), minAvailable 4, all running:
    driver on node0, workers on node1..4. urgent needs one node of s0, s1 or s2 (node5..7 run a
    high-priority job). Evicting a worker keeps the gang; evicting the driver breaks it."""
    job_b = Job(
        name="jobb",
        min_available=4,
        priority_class="low",
        tasks=[
            Task(
                name="driver", replicas=1, min_available=1, requests={GPU: 8}, running={0: "node0"}
            ),
            Task(
                name="worker",
                replicas=4,
                min_available=3,
                requests={GPU: 8},
                running={i: f"node{i + 1}" for i in range(4)},
            ),
        ],
    )
    inst = example1(
        [
            job_b,
            gang("peer", 3, priority_class="high", running=on(5, 6, 7)),
            gang("urgent", 1, priority_class="high", topology=hard(1)),
        ]
    )
    result, plan = cpsat(inst)
    assert len(plan.evictions) == 1 and evicted(plan)[0].startswith("jobb-worker-")
    assert result.objective.stages["broken_gangs"] == 0


@pytest.mark.parametrize(("min_partitions", "broken"), [(1, 0), (2, 1)])
def test_a_victim_keeps_its_minimum_of_ready_partitions(min_partitions, broken):
    """Victim: 2 partitions × 2 pods (partition 0 on s0, partition 1 on s1), minAvailable 2.
    urgent takes a rack, so a whole partition goes. With minPartitions 1 the other partition
    keeps the gang ready; with minPartitions 2 the gang is broken."""
    victim = partitioned(
        "parts",
        partitions=2,
        size=2,
        job_topology=None,
        partition_topology=None,
        min_available=2,
        min_partitions=min_partitions,
        requests={GPU: 8},
    )
    task = victim.tasks[0].model_copy(update={"running": on(0, 1, 2, 3)})
    victim = victim.model_copy(update={"tasks": [task], "priority_class": "low"})
    inst = example1(
        [
            victim,
            gang("peer", 4, priority_class="high", running=on(4, 5, 6, 7)),
            gang("urgent", 2, priority_class="high", topology=hard(1)),
        ]
    )
    result, plan = cpsat(inst)
    assert len(plan.evictions) == 2
    assert result.objective.stages["broken_gangs"] == broken


def test_a_gang_already_below_its_minimum_is_free_to_take():
    """`limping` runs 1 of its minimum 2 (already broken: losing it breaks nothing, seed 002);
    `healthy` runs 1 of minimum 1. urgent needs one node: the optimum takes limping's pod."""
    inst = example1(
        [
            gang("limping", 2, priority_class="low", running={0: "node0"}),
            gang("healthy", 1, priority_class="low", running=on(1)),
            gang("peer", 6, priority_class="high", running=on(2, 3, 4, 5, 6, 7)),
            gang("urgent", 1, priority_class="high", topology=hard(1)),
        ]
    )
    result, plan = cpsat(inst)
    assert evicted(plan) == ["limping-worker-0"]
    assert result.objective.stages["broken_gangs"] == 0
    assert not plan.job("default/limping").placed  # a job that loses pods gets no bindings


# ------------------------------------------------------------------ preemptor's constraints


def test_partitioned_preemptor_keeps_each_partition_in_one_rack():
    """urgent: 2 partitions × 2 pods × 8 GPUs, partitions hard tier 1, job hard tier 2. s4 holds
    `low` (4 pods, one gang) and s5 two gangs of 2: the optimum empties s4 (one broken gang)
    and puts one partition in each of s0, s1."""
    urgent = partitioned(
        "urgent",
        partitions=2,
        size=2,
        job_topology=hard(2),
        partition_topology=hard(1),
        min_available=4,
        requests={GPU: 8},
    ).model_copy(update={"priority_class": "high"})
    inst = example1(
        [
            gang("low", 4, priority_class="low", running=on(0, 1, 2, 3)),
            gang("lowa", 2, priority_class="low", running=on(4, 5)),
            gang("lowb", 2, priority_class="low", running=on(6, 7)),
            urgent,
        ]
    )
    result, plan = cpsat(inst)
    assert evicted(plan) == [f"low-worker-{i}" for i in range(4)]
    assert bound(plan, "urgent") == [(f"node{i}", True) for i in range(4)]
    placement = plan.job("default/urgent")
    assert placement.hypernode == "s4"
    assert sorted(s.hypernode for s in placement.subjobs) == ["s0", "s1"]
    assert result.objective.stages["broken_gangs"] == 1


def test_no_eviction_when_no_domain_could_ever_hold_the_gang():
    """3 × 8 GPUs under tier 1: a rack has 16 GPUs, so nothing is evicted."""
    inst = example1(
        [
            gang("low", 8, priority_class="low", running=on(*range(8))),
            gang("urgent", 3, priority_class="high", topology=hard(1)),
        ]
    )
    result, plan = cpsat(inst)
    assert plan.evictions == [] and plan.bindings == []
    assert result.objective.stages["placed"] == 0


def test_freed_room_goes_to_the_preemptor_only():
    """`mid` runs 8 pods with minAvailable 1 (7 surplus). urgent (high) and `late` (low) each
    want one node. late may not evict mid (lower priority), so it may not use what urgent's
    evictions free either: one pod is evicted, urgent is placed, late waits."""
    inst = example1(
        [
            gang("mid", 8, min_available=1, priority_class="mid", running=on(*range(8))),
            gang("urgent", 1, priority_class="high"),
            gang("late", 1, priority_class="low"),
        ]
    )
    result, plan = cpsat(inst)
    assert len(plan.evictions) == 1
    assert [n for n, _ in bound(plan, "urgent")] == [plan.evictions[0].node]
    assert not plan.job("default/late").placed


def test_equal_priority_is_never_preempted():
    inst = example1(
        [
            gang("peer", 8, priority_class="high", running=on(*range(8))),
            gang("urgent", 2, priority_class="high", topology=hard(1)),
        ]
    )
    _, plan = cpsat(inst)
    assert plan.evictions == [] and plan.bindings == []


def _group_of(problem, job: str) -> int:
    return next(
        g for g, j in enumerate(problem.group_job) if problem.jobs[int(j)].key == f"default/{job}"
    )


@pytest.mark.parametrize(
    "case", [idle_room_taken_by_a_bystander, leftover_room_of_a_stronger_victim]
)
@pytest.mark.parametrize("mode", ["preempt", "both"])
def test_every_heuristic_plan_is_a_feasible_hint(case, mode):
    """The model enforces the checker's freed-room rule, not a stricter one: a bystander bound
    into idle room on a node with evictions (the audit's superpod/alibaba/scale-6k pattern) and
    a preemptor kept off another's leftover room are both accepted as they are."""
    result, _ = cpsat(case(), mode, time_limit=5)
    assert result.stats["hint_feasible"] is True


@pytest.mark.parametrize("deserved_a", [AT_ITS_SHARE, OVER_ITS_SHARE])
@pytest.mark.parametrize("mode", ["reclaim", "both"])
def test_heuristic_reclaim_plan_is_a_feasible_hint(deserved_a, mode):
    """Queue a's share is judged before the plan by the heuristic and the model alike (issue 19
    §2): at its share, a's new pods (grow) do not let claim reclaim, and the model places grow
    without evictions instead of falling back to a plan it forbids; over its share, both
    reclaim s0 for claim. The model's plan is the heuristic's."""
    inst = queue_growing_in_the_plan(deserved_a)
    result, plan = cpsat(inst, mode, time_limit=5)
    assert result.stats["hint_feasible"] is True and result.status != "FALLBACK"
    assert plan.job("default/grow").placed
    if deserved_a == AT_ITS_SHARE:
        assert plan.evictions == [] and not plan.job("default/claim").placed
    else:
        assert evicted(plan) == ["elastic-worker-0", "elastic-worker-1"]
        assert bound(plan, "claim") == [("node0", True), ("node1", True)]
    assert evicted(plan) == evicted(heuristic_eviction_plan(inst, mode))


def test_issue_alibaba_heuristic_plan_is_a_feasible_hint():
    """The audit's `alibaba --option occupancy=0.4 --load 1.0` shrunk to 64 nodes (seed 8):
    before the rule the heuristic's plan bound bystanders on nodes with evictions and CP-SAT
    refused it as a hint."""
    from toposolve.generate import generate

    inst = generate("alibaba", nodes=64, load=1.0, seed=8, occupancy=0.4)
    # the hint is judged while the model is seeded: a wall-clock deadline far out keeps a loaded
    # machine from cutting the run before that (the deterministic budget still ends the search)
    result, plan = cpsat(inst, time_limit=3, deadline=Deadline(3, deterministic=True, wall_cap=63))
    assert result.stats["hint_feasible"] is True
    assert plan.evictions


def test_a_plan_the_rule_forbids_is_an_infeasible_hint():
    """p2 on the room vm left on node0 (the checker rejects it too): CP-SAT's model has no such
    solution, so the plan given as the warm start is reported infeasible."""
    inst = leftover_room_of_a_stronger_victim()
    problem = compile_problem(inst)
    node = {n.name: i for i, n in enumerate(inst.nodes)}
    forbidden = Assignment(evicted=["default/vm-worker-0", "default/vl-worker-0"])
    forbidden.add(_group_of(problem, "p1"), node["node0"], 1)
    forbidden.add(_group_of(problem, "p2"), node["node0"], 1)
    forbidden.add(_group_of(problem, "p2"), node["node1"], 1)
    plan = to_plan(problem, forbidden, engine="hand", status="FEASIBLE")
    assert [v.obj for v in check_plan(inst, plan, eviction_mode="preempt")] == ["Node/node0"]
    result = solve_cpsat(problem, PROFILE, SolveOptions(evict="preempt", time_limit=3), forbidden)
    assert result.stats["hint_feasible"] is False


# ------------------------------------------------------------------ reclaim and both


def reclaim_instance(deserved_a: int, deserved_b: int = 16) -> Instance:
    """Queue a: `elastic` (3 pods, min 1: node0, node1, node6) and `x` (1 pod, node5); queue c
    (not reclaimable) fills node2, node3, node7; node4 is idle. b's `claim` wants a rack."""
    return example1(
        [
            in_queue(gang("elastic", 3, min_available=1, running=on(0, 1, 6)), "a"),
            in_queue(gang("x", 1, running=on(5)), "a"),
            in_queue(gang("fixed", 3, running=on(2, 3, 7)), "c"),
            in_queue(gang("claim", 2, topology=hard(1)), "b"),
        ],
        [
            Queue(name="a", deserved={GPU: deserved_a}),
            Queue(name="b", deserved={GPU: deserved_b}),
            Queue(name="c", reclaimable=False),
        ],
    )


def test_reclaim_takes_surplus_when_the_queue_is_far_enough_over_its_share():
    """a holds 32 GPUs and deserves 16: two pods may go. Emptying s0 takes two SAFE elastic
    pods (no gang broken) — better than breaking x in s2."""
    result, plan = cpsat(reclaim_instance(16), "reclaim")
    assert evicted(plan) == ["elastic-worker-0", "elastic-worker-1"]
    assert result.objective.stages["broken_gangs"] == 0


def test_reclaim_stops_at_the_deserved_share():
    """a deserves 24: after one 8-GPU pod it is at its share, so only one pod may go. s0 would
    need two; s2 needs only x's pod next to idle node4, which breaks x."""
    result, plan = cpsat(reclaim_instance(24), "reclaim")
    assert evicted(plan) == ["x-worker-0"]
    assert bound(plan, "claim") == [("node4", True), ("node5", True)]
    assert result.objective.stages["broken_gangs"] == 1


def test_reclaim_never_touches_a_queue_at_its_share():
    result, plan = cpsat(reclaim_instance(32), "reclaim")
    assert plan.evictions == [] and not plan.job("default/claim").placed


def test_a_reclaimer_may_not_grow_beyond_its_own_share():
    """b deserves 8 GPUs; claim needs 16: b would exceed its share, so it reclaims nothing."""
    result, plan = cpsat(reclaim_instance(16, deserved_b=8), "reclaim")
    assert plan.evictions == [] and not plan.job("default/claim").placed


@pytest.mark.parametrize("mode", ["reclaim", "both"])
def test_the_last_pod_reclaimed_may_be_the_largest(mode):
    """a holds 20 GPUs and deserves 16. The cut-off takes big (8 GPUs) while a still exceeds
    its share (20 > 16): Σ reclaimed − the largest reclaimed (0) < the excess (4). The budget
    used to subtract the smallest candidate request (4) instead and refused big, so the model
    broke `small` (12 GPUs) and fell back to the heuristic's plan; now both evict big."""
    inst = mixed_request_sizes()
    result, plan = cpsat(inst, mode, time_limit=5)
    assert result.stats["hint_feasible"] is True and result.status == "OPTIMAL"
    assert evicted(plan) == ["big-worker-0"] == evicted(heuristic_eviction_plan(inst, mode))
    assert bound(plan, "claim") == [("node6", True)]


def test_reclaim_still_stops_at_the_share_with_mixed_sizes():
    """Deserving 20, a is at its share: nothing goes. Deserving 16, big and one small pod
    (12 GPUs) would leave a at 8: after either one it holds 12 or 16, not above 16, so the
    other may not follow; the model has no such plan."""
    result, plan = cpsat(mixed_request_sizes(20), "reclaim", time_limit=5)
    assert plan.evictions == [] and not plan.job("default/claim").placed
    inst = mixed_request_sizes()
    problem = compile_problem(inst)
    node = {n.name: i for i, n in enumerate(inst.nodes)}
    both = Assignment(evicted=["default/big-worker-0", "default/small-worker-0"])
    both.add(_group_of(problem, "claim"), node["node6"], 1)
    hand = to_plan(problem, both, engine="hand", status="FEASIBLE")
    assert [v.obj for v in check_plan(inst, hand, eviction_mode="reclaim")] == ["Queue/a"]
    result = solve_cpsat(problem, PROFILE, SolveOptions(evict="reclaim", time_limit=3), both)
    assert result.stats["hint_feasible"] is False


def test_both_combines_preemption_and_reclaim_in_one_domain():
    """claim (queue b, high, 4 × 8 GPUs, hard tier 2) needs s4 or s5 emptied. s4 holds a1 (queue
    a) and `peer` (queue c, not reclaimable): impossible. s5 holds a3 (queue a, 32 GPUs held,
    deserves 16: two pods may be reclaimed) and `blow` (queue b, low: preemptible). Neither
    action alone frees four nodes, so the heuristic (preempt pass, then reclaim pass) places
    nothing; the optimum evicts both gangs in one plan."""
    inst = example1(
        [
            in_queue(gang("a1", 2, running=on(0, 1)), "a"),
            in_queue(gang("peer", 2, running=on(2, 3)), "c"),
            in_queue(gang("a3", 2, running=on(4, 5)), "a"),
            in_queue(gang("blow", 2, priority_class="low", running=on(6, 7)), "b"),
            in_queue(gang("claim", 4, priority_class="high", topology=hard(2)), "b"),
        ],
        [
            Queue(name="a", deserved={GPU: 16}),
            Queue(name="b", deserved={GPU: 48}),
            Queue(name="c", reclaimable=False),
        ],
    )
    assert heuristic_eviction_plan(inst, "both").evictions == []
    result, plan = cpsat(inst, "both")
    assert evicted(plan) == ["a3-worker-0", "a3-worker-1", "blow-worker-0", "blow-worker-1"]
    assert bound(plan, "claim") == [(f"node{i}", True) for i in range(4, 8)]
    assert result.objective.stages["broken_gangs"] == 2
    # each half alone is refused by the checker in the single-action modes
    assert any(v.kind == "eviction" for v in check_plan(inst, plan, eviction_mode="preempt"))
    assert any(v.kind == "eviction" for v in check_plan(inst, plan, eviction_mode="reclaim"))


# ------------------------------------------------------------------ objective, modes, fallback


def test_objective_counts_a_fully_evicted_gang_as_broken():
    """seed 002: a gang that loses pods and ends below its minimum is broken even if no pod
    survives; its cost is every pod it held."""
    inst = example1([gang("v", 2, priority_class="low", running=on(0, 1))])
    problem = compile_problem(inst)
    values = stage_values(problem, Assignment(evicted=["default/v-worker-0", "default/v-worker-1"]))
    assert (values["broken_gangs"], values["eviction_cost"], values["evicted_pods"]) == (1, 16, 2)
    one = stage_values(problem, Assignment(evicted=["default/v-worker-0"]))
    assert (one["broken_gangs"], one["eviction_cost"]) == (1, 16)  # the survivor restarts too


def test_deterministic_mode_returns_the_same_plan():
    inst = elastic_cluster(2)
    _, first = cpsat(inst, deterministic=True, time_limit=5)
    _, second = cpsat(inst, deterministic=True, time_limit=5)
    assert first.evictions == second.evictions and first.bindings == second.bindings


def test_fallback_returns_the_heuristic_plan_with_its_evictions():
    """A search stopped right after presolve has no plan of its own: the heuristic's comes back
    (evictions and nominated bindings included). `waiting` (low, nothing it may evict) keeps
    the hint below the largest possible `placed`, so the first stage has to search."""
    inst = example1(
        [
            gang("wide", 4, priority_class="low", running=on(0, 1, 4, 5)),
            gang("small", 2, priority_class="low", running=on(2, 3)),
            gang("peer", 2, priority_class="high", running=on(6, 7)),
            gang("urgent", 2, priority_class="high", topology=hard(1)),
            gang("waiting", 2, priority_class="low"),
        ]
    )
    result, plan = cpsat(inst, parameters={"stop_after_presolve": True})
    assert result.status == "FALLBACK"
    assert evicted(plan) == evicted(heuristic_eviction_plan(inst))
    assert all(nominated for _, nominated in bound(plan, "urgent"))


def test_solve_entry_point_checks_the_plan_and_reports_disruption():
    inst = elastic_cluster(2)
    plan = solve(inst, "cpsat", profile="preemption", evict="preempt", time_limit=5)
    assert plan.engine == "cpsat" and plan.job("default/urgent").placed
    assert plan.stats["eviction"]["cpsat"]["broken_gangs"] == 1
    assert set(plan.stats["eviction"]["saved"]) == {"broken_gangs", "evicted_pods", "eviction_cost"}


def test_too_large_for_the_exact_model_returns_the_heuristic_plan(monkeypatch):
    """Evictions are decided node by node; when even the model without them would be coarse,
    no model is built and the heuristic's plan (checked) comes back."""
    from toposolve.engines.cpsat.solve import coarse

    monkeypatch.setattr(coarse, "COUNT_BUDGET", 1)
    inst = elastic_cluster(2)
    result, plan = cpsat(inst)
    assert result.status == "FALLBACK" and "not built" in result.stats["eviction_model"]
    assert evicted(plan) == evicted(heuristic_eviction_plan(inst))


def test_unknown_evict_mode_is_an_input_error():
    problem = compile_problem(elastic_cluster(1))
    with pytest.raises(InputError, match="evict"):
        solve_cpsat(problem, PROFILE, SolveOptions(evict="everything"))


def test_a_profile_without_eviction_stages_still_evicts_only_what_it_needs():
    """The default profile (placed > spread > fragmentation) says nothing of evictions; with
    them, disruption comes right after placement, so the single surplus pod is the only one
    taken."""
    problem = compile_problem(elastic_cluster(1))
    result = solve_cpsat(
        problem, load_profile("lexicographic"), SolveOptions(evict="preempt", time_limit=10)
    )
    assert len(result.assignment.evicted) == 1
    assert [s["stage"] for s in result.stats["stages"]] == [
        "placed",
        "broken_gangs",
        "eviction_cost",
        "evicted_pods",
        "spread",
        "fragmentation",
    ]


def test_issue_usecase_gpu_is_never_more_disruptive_than_the_heuristic_at_the_same_placement():
    """The audit's `usecase-gpu --option occupancy=0.3` shrunk to 128 nodes and a 64-pod job
    (seed 3): with the default profile CP-SAT placed the same GPUs as the heuristic (which
    evicts nothing) but evicted 36 pods and broke 10 gangs, for less fragmentation. Now
    disruption follows placement."""
    from toposolve.generate import generate

    inst = generate("usecase-gpu", nodes=128, seed=3, occupancy=0.3, pods=64)
    plan = solve(inst, "cpsat", evict="preempt", time_limit=5)
    stats = plan.stats["eviction"]
    assert stats["placed"]["cpsat"] == stats["placed"]["volcano"]
    assert all(saved >= 0 for saved in stats["saved"].values())
    assert stats["evictable_pods"] == 36 and stats["cpsat"]["evicted_pods"] == 0


@pytest.mark.parametrize("trial", range(12))
def test_optimum_matches_exhaustive_search_on_random_racks(trial):
    """Random whole-node gangs (high or low, random minAvailable) on the 8 nodes and a preemptor
    of 1-4 nodes under tier 1, 2 or 3. Exhaustive search: every subset of low pods evicted, the
    preemptor on the free nodes of any one domain; the best (placed, broken gangs, eviction
    cost, evicted pods) must be CP-SAT's."""
    import itertools
    import random

    rng = random.Random(trial)
    order = list(range(8))
    rng.shuffle(order)
    busy = order[: rng.randint(6, 8)]
    jobs, k = [], 0
    while k < len(busy):
        size = min(rng.choice([1, 2, 3]), len(busy) - k)
        jobs.append(
            gang(
                f"j{k}",
                size,
                min_available=rng.randint(1, size),
                priority_class=rng.choice(["low", "low", "high"]),
                running={i: f"node{n}" for i, n in enumerate(busy[k : k + size])},
            )
        )
        k += size
    need, tier = rng.choice([1, 2, 2, 3, 4]), rng.choice([1, 2, 3])
    inst = example1([*jobs, gang("urgent", need, priority_class="high", topology=hard(tier))])
    result, _ = cpsat(inst)
    problem = compile_problem(inst)
    urgent = next(g for g in range(len(problem.group_job)) if problem.group_pending[g])
    domains = {
        1: [[0, 1], [2, 3], [4, 5], [6, 7]],
        2: [[0, 1, 2, 3], [4, 5, 6, 7]],
        3: [list(range(8))],
    }[tier]
    low = [
        p
        for p in problem.running_pods
        if problem.jobs[int(problem.group_job[problem.pod_group[p]])].priority == 1
    ]
    best = (0, 0, 0, 0)
    for m in range(len(low) + 1):
        for gone in itertools.combinations(low, m):
            held = {n for p, n in problem.running_pods.items() if p not in gone}
            for domain in domains:
                free = [n for n in domain if n not in held]
                if len(free) >= need:
                    plan = Assignment(evicted=list(gone))
                    for n in free[:need]:
                        plan.add(urgent, n, 1)
                    v = stage_values(problem, plan)
                    best = min(
                        best,
                        (-v["placed"], v["broken_gangs"], v["eviction_cost"], v["evicted_pods"]),
                    )
    got = result.objective.stages
    assert (-got["placed"], got["broken_gangs"], got["eviction_cost"], got["evicted_pods"]) == best


def test_an_evicted_pod_no_longer_counts_against_its_queue_capability():
    """Issue 19 §1: the queue's capability is the whole cluster (16 GPUs); `old` (low) holds 8
    of them on node0. Preempting it leaves room, in the nodes and in the queue, for `new`'s two
    8-GPU pods. Counting `old` as still running made `placed` OPTIMAL at 0 and the next stage
    INFEASIBLE."""
    queue = Queue(name="q", capability={GPU: 16})
    inst = Instance(
        nodes=nodes(2),
        jobs=[in_queue(gang("old", 1, priority_class="low", running={0: "node0"}), "q"),
              in_queue(gang("new", 2, priority_class="high"), "q")],
        queues=[queue],
        priority_classes=EVICTION_PRIORITIES,
    )
    result, plan = cpsat(inst)
    assert evicted(plan) == ["old-worker-0"]
    assert sorted(node for node, _ in bound(plan, "new")) == ["node0", "node1"]
    assert [s["status"] for s in result.stats.stages] == ["OPTIMAL"] * len(result.stats.stages)
