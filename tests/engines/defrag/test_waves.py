"""Defragmentation in waves (issue 20): each wave waits for the previous wave's replacements to
be Ready, so a PodDisruptionBudget bounds each wave, not the whole plan.

Racks r0..r2 of two 8-GPU nodes: `b` and `c` fill r0, `d` (r1) and `e` (r2) may not move, node3
and node5 are idle. The target (two 8-GPU pods in one rack) gets in only if `b` and `c` both
leave r0, and one budget covering both lets one pod go at a time."""

from __future__ import annotations

import pytest

from tests.builders import GPU, hard, inner, leaf, nodes
from toposolve.check.checker import check_plan
from toposolve.core.errors import InputError
from toposolve.core.instance import Instance, Job, LabelSelector, PodDisruptionBudget, Task
from toposolve.core.plan import Move, Plan
from toposolve.core.problem import compile_problem
from toposolve.defrag import defrag
from toposolve.engines.defrag.common import build_input
from toposolve.engines.defrag.waves import assign_waves

TARGET = "default/target"
TEAM = PodDisruptionBudget(name="team", selector=LabelSelector(match_labels={"team": "x"}),
                           max_unavailable=1)


def cluster(*budgets: PodDisruptionBudget, unready: dict | None = None) -> Instance:
    def job(name: str, node: str, **fields) -> Job:
        return Job(name=name, min_available=1, tasks=[Task(
            name="w", replicas=1, requests={GPU: 8}, running={0: node},
            labels={"team": "x"} if name in "bc" else {},
            unready=(unready or {}).get(name, {}))], **fields)

    target = Job(name="target", min_available=2, network_topology=hard(1),
                 tasks=[Task(name="w", replicas=2, requests={GPU: 8})])
    racks = [leaf(f"r{k}", [f"node{2 * k}", f"node{2 * k + 1}"]) for k in range(3)]
    return Instance(nodes=nodes(6), hypernodes=[*racks, inner("top", ["r0", "r1", "r2"], 2)],
                    jobs=[job("b", "node0"), job("c", "node1"),
                          job("d", "node2", movable=False), job("e", "node4", movable=False),
                          target],
                    disruption_budgets=list(budgets))


@pytest.mark.parametrize("engine", ["cpsat", "greedy"])
def test_one_wave_keeps_the_whole_plan_within_the_budget(engine):
    plan = defrag(cluster(TEAM), [TARGET], engine=engine)
    assert plan.stats["defrag"]["admitted"] == [] and not plan.moves
    assert "waves" not in plan.stats["defrag"]


@pytest.mark.parametrize("engine", ["cpsat", "greedy"])
def test_two_waves_move_one_pod_each(engine):
    inst = cluster(TEAM)
    plan = defrag(inst, [TARGET], engine=engine, max_waves=2)
    d = plan.stats["defrag"]
    assert d["admitted"] == [TARGET] and d["waves"] == 2
    assert sorted(m.wave for m in plan.moves) == [1, 2]
    assert check_plan(inst, plan, eviction_mode="none") == []
    again = Plan.from_dict(plan.to_dict())
    assert [(m.pod, m.wave) for m in again.moves] == [(m.pod, m.wave) for m in plan.moves]


def test_more_waves_than_needed_use_what_is_needed():
    plan = defrag(cluster(), [TARGET], max_waves=5)  # no budget: everything in wave 1
    assert plan.stats["defrag"]["waves"] == 1 and {m.wave for m in plan.moves} == {1}


def test_max_waves_must_be_positive():
    with pytest.raises(InputError, match="max_waves"):
        defrag(cluster(), [TARGET], max_waves=0)


def _hand(*moves: tuple[str, str, str, int | None]) -> Plan:
    return Plan(engine="hand", status="FEASIBLE",
                moves=[Move(f"default/{pod}-w-0", a, b, wave) for pod, a, b, wave in moves])


def test_the_checker_counts_the_budget_per_wave():
    inst = cluster(TEAM)
    together = _hand(("b", "node0", "node3", 1), ("c", "node1", "node5", 1))
    violations = check_plan(inst, together, eviction_mode="none")
    assert [(v.kind, v.obj) for v in violations] == [("pdb", "PodDisruptionBudget/default/team")]
    assert "wave 1 moves 2 of its pods, more than the 1" in violations[0].message
    apart = _hand(("b", "node0", "node3", 1), ("c", "node1", "node5", 2))
    assert check_plan(inst, apart, eviction_mode="none") == []


def test_a_not_ready_pod_replaced_in_a_wave_counts_healthy_after_it():
    # minAvailable 1 of b, c with c not Ready: 1 healthy - 1 desired = 0 allowed, but
    # `unhealthyPodEvictionPolicy: AlwaysAllow` lets c go in wave 1 without the budget
    pdb = PodDisruptionBudget(name="team", selector=LabelSelector(match_labels={"team": "x"}),
                              min_available=1, unhealthy_pod_eviction_policy="AlwaysAllow")
    inst = cluster(pdb, unready={"c": {0: "not-ready"}})
    # once c's replacement is Ready, 2 healthy - 1 desired: b may go in wave 2, not in wave 1
    ok = _hand(("c", "node1", "node5", 1), ("b", "node0", "node3", 2))
    assert check_plan(inst, ok, eviction_mode="none") == []
    early = _hand(("c", "node1", "node5", 1), ("b", "node0", "node3", 1))
    assert [v.kind for v in check_plan(inst, early, eviction_mode="none")] == ["pdb"]


def test_the_checker_wants_room_between_waves_and_a_wave_on_every_move():
    inst = cluster()
    # wave 1 puts c onto node0, which b leaves only in wave 2
    early = _hand(("c", "node1", "node0", 1), ("b", "node0", "node3", 2))
    kinds = [(v.kind, v.obj) for v in check_plan(inst, early, eviction_mode="none")]
    assert kinds == [("wave", "Node/node0")]
    partly = _hand(("b", "node0", "node3", None), ("c", "node1", "node5", 2))
    assert [(v.kind, v.obj) for v in check_plan(inst, partly, eviction_mode="none")] == [
        ("wave", "Pod/default/b-w-0")]


def test_waves_that_cannot_be_sequenced_fall_back_to_one_wave(monkeypatch):
    import sys

    monkeypatch.setattr(sys.modules["toposolve.defrag"], "assign_waves", lambda *_: None)
    plan = defrag(cluster(TEAM), [TARGET], max_waves=2)
    d = plan.stats["defrag"]
    assert "planned in one wave" in d["waves_note"]
    assert d["admitted"] == [] and d["waves"] == 0  # one wave keeps the budget: no move


@pytest.mark.parametrize(("budgets", "waves"), [((), [1, 1]), ((TEAM,), None)])
def test_a_swap_goes_in_one_wave_or_not_at_all(budgets, waves):
    # b and c trade full nodes: only together in one wave, which a budget of 1 forbids
    p = compile_problem(cluster(*budgets))
    node0, node1 = p.node_index["node0"], p.node_index["node1"]
    moves = [("default/b-w-0", node0, node1), ("default/c-w-0", node1, node0)]
    assert assign_waves(build_input(p, []), moves, max_waves=3) == waves
