"""Defragmentation honours PodDisruptionBudgets (issue 20).

Racks r0 = {node0, node1} and r1 = {node2, node3} of 8-GPU nodes; `a` runs on node0, `b` (move
cost 5) on node2. The target wants two 8-GPU pods in one rack: unconstrained, moving `a` (cost
1) is the optimum; a budget that lets no pod of `a` go makes `b` (cost 5) the answer."""

from __future__ import annotations

import pytest

from tests.builders import GPU, hard, inner, leaf, nodes
from toposolve.check.checker import check_plan
from toposolve.core.instance import Instance, Job, LabelSelector, PodDisruptionBudget, Task
from toposolve.core.plan import Move, Plan
from toposolve.core.problem import compile_problem
from toposolve.defrag import defrag
from toposolve.engines.defrag.budgets import BudgetUse
from toposolve.engines.defrag.common import Unit, pod_changes

TARGET = "default/target"


def budget(name: str, app: str, **spec) -> PodDisruptionBudget:
    return PodDisruptionBudget(name=name, selector=LabelSelector(match_labels={"app": app}),
                               **spec)


def cluster(*budgets: PodDisruptionBudget) -> Instance:
    def running(name: str, node: str, **fields) -> Job:
        return Job(name=name, min_available=1, tasks=[Task(
            name="w", replicas=1, requests={GPU: 8}, running={0: node},
            labels={"app": name, "tier": "batch"})], **fields)

    target = Job(name="target", min_available=2, network_topology=hard(1),
                 tasks=[Task(name="w", replicas=2, requests={GPU: 8})])
    return Instance(nodes=nodes(4), hypernodes=[leaf("r0", ["node0", "node1"]),
                                                leaf("r1", ["node2", "node3"]),
                                                inner("top", ["r0", "r1"], 2)],
                    jobs=[running("a", "node0"), running("b", "node2", move_cost=5), target],
                    disruption_budgets=list(budgets))


@pytest.mark.parametrize("engine", ["cpsat", "greedy"])
@pytest.mark.parametrize(("budgets", "moved", "cost"), [
    ((), ["default/a"], 1),
    ((budget("pa", "a", min_available=1),), ["default/b"], 5),       # a may not go
    ((budget("pa", "a", max_unavailable=0),), ["default/b"], 5),
    ((budget("pa", "a", max_unavailable="50%"),), ["default/a"], 1),  # ceil(0.5) = 1 may go
    ((budget("pa", "a", min_available="50%"),), ["default/b"], 5),    # ceil(0.5) = 1 must stay
])
def test_a_budget_changes_who_moves(engine, budgets, moved, cost):
    inst = cluster(*budgets)
    plan = defrag(inst, [TARGET], engine=engine)
    d = plan.stats["defrag"]
    assert d["admitted"] == [TARGET]
    assert (d["moved_jobs"], d["move_cost"]) == (moved, cost)
    assert check_plan(inst, plan, eviction_mode="none") == []


@pytest.mark.parametrize("engine", ["cpsat", "greedy"])
def test_budgets_on_both_jobs_admit_nothing(engine):
    inst = cluster(budget("pa", "a", min_available=1), budget("pb", "b", min_available=1))
    plan = defrag(inst, [TARGET], engine=engine)
    assert plan.stats["defrag"]["admitted"] == [] and not plan.moves


@pytest.mark.parametrize("engine", ["cpsat", "greedy"])
def test_a_pod_two_budgets_cover_never_moves(engine):
    # each budget lets `a` go, but the eviction API refuses a pod two budgets cover: b moves
    both = PodDisruptionBudget(name="batch", selector=LabelSelector(match_labels={"tier": "batch"}),
                               max_unavailable=2)
    inst = cluster(budget("pa", "a", max_unavailable=1), both)
    plan = defrag(inst, [TARGET], engine=engine)
    assert plan.stats["defrag"]["moved_jobs"] == ["default/b"]


def test_the_checker_refuses_moves_beyond_a_budget():
    inst = cluster(budget("pa", "a", min_available=1))
    plan = Plan(engine="hand", status="FEASIBLE",
                moves=[Move("default/a-w-0", "node0", "node3")])
    violations = check_plan(inst, plan, eviction_mode="none")
    assert [(v.kind, v.obj) for v in violations] == [("pdb", "PodDisruptionBudget/default/pa")]
    assert "moves 1 of its pods, more than the 0" in violations[0].message


def test_the_checker_refuses_moving_a_pod_two_budgets_cover():
    both = PodDisruptionBudget(name="batch", selector=LabelSelector(match_labels={"tier": "batch"}),
                               max_unavailable=2)
    inst = cluster(budget("pa", "a", max_unavailable=1), both)
    plan = Plan(engine="hand", status="FEASIBLE",
                moves=[Move("default/a-w-0", "node0", "node3")])
    assert [(v.kind, v.obj) for v in check_plan(inst, plan, eviction_mode="none")] == [
        ("pdb", "Pod/default/a-w-0")]


def spread_cluster(*budgets: PodDisruptionBudget) -> Instance:
    """Racks r0..r2 of two 8-GPU nodes; `a` (2 pods) runs on node0 and node4, `b` and `c` (move
    cost 5 each) fill r1; node1 and node5 are idle. The target (two 8-GPU pods in one rack) fits
    once one pod of `a` leaves r0 or r2 (cost 2), else by moving `b` and `c` (cost 10)."""
    def job(name: str, where: list[str], **fields) -> Job:
        return Job(name=name, min_available=1, tasks=[Task(
            name="w", replicas=len(where), requests={GPU: 8}, labels={"app": name},
            running=dict(enumerate(where)))], **fields)

    target = Job(name="target", min_available=2, network_topology=hard(1),
                 tasks=[Task(name="w", replicas=2, requests={GPU: 8})])
    racks = [leaf(f"r{k}", [f"node{2 * k}", f"node{2 * k + 1}"]) for k in range(3)]
    return Instance(nodes=nodes(6), hypernodes=[*racks, inner("top", ["r0", "r1", "r2"], 2)],
                    jobs=[job("a", ["node0", "node4"]), job("b", ["node2"], move_cost=5),
                          job("c", ["node3"], move_cost=5), target],
                    disruption_budgets=list(budgets))


@pytest.mark.parametrize("engine", ["cpsat", "greedy"])
@pytest.mark.parametrize(("spec", "moved", "pods"), [
    ({"max_unavailable": 1}, ["default/a"], 1),  # 1 of its 2 covered pods may go: enough
    ({"min_available": 1}, ["default/a"], 1),
    ({"min_available": 2}, ["default/b", "default/c"], 2),  # none may go
])
def test_a_budget_counts_the_pods_that_actually_move(engine, spec, moved, pods):
    inst = spread_cluster(budget("pa", "a", **spec))
    plan = defrag(inst, [TARGET], engine=engine)
    d = plan.stats["defrag"]
    assert d["admitted"] == [TARGET]
    assert (d["moved_jobs"], d["moved_pods"]) == (moved, pods)
    assert check_plan(inst, plan, eviction_mode="none") == []
    if moved == ["default/a"]:  # the pod that stays keeps its node
        assert len([m for m in plan.moves if m.pod.startswith("default/a-")]) == 1


@pytest.mark.parametrize(("keep_first", "leaves"), [((), "default/a-w-1"),
                                                      ({"default/a-w-1"}, "default/a-w-0")])
def test_charged_pods_keep_their_node_first(keep_first, leaves):
    inst = spread_cluster()
    inst.jobs[0].tasks[0].running = {0: "node0", 1: "node0"}
    p = compile_problem(inst)
    g, node0, node1 = p.pod_group["default/a-w-0"], p.node_index["node0"], p.node_index["node1"]
    unit = Unit(job=0, counts={g: 2}, current={g: {node0: 2}}, levels=[], cost=2, priority=0)
    moves, _ = pod_changes(p, unit, {g: {node0: 1, node1: 1}}, keep_first)
    assert moves == [(leaves, node0, node1)]


def test_two_budgets_sharing_a_node_count_all_their_pods():
    use = BudgetUse(allowed=1, charged={0: {(3, 7): 2}})
    assert use.leaving(0, {3: {7: 1}}) == 1  # one of its two pods stays
    assert use.leaving(0, {3: {7: 1}}, frozenset({(3, 7)})) == 2  # no order keeps both budgets
    assert use.leaving(0, None) == 0


def test_without_the_full_model_a_master_within_the_budgets_decides(monkeypatch):
    # the relaxed master moves `a` (cost 2), whose budget lets none of its pods go; with the full
    # model too large to build, a master counting all of a moved job's pods moves b and c
    import toposolve.engines.defrag.cpsat as cpsat

    monkeypatch.setattr(cpsat, "FULL_MODEL_LIMIT", 0)
    inst = spread_cluster(budget("pa", "a", min_available=2))
    plan = defrag(inst, [TARGET])
    d = plan.stats["defrag"]
    assert plan.stats["path"].startswith("strict master")
    assert d["moved_jobs"] == ["default/b", "default/c"] and not d["proven_minimal"]
    assert d["bound"] == 2  # the relaxed master's: moving `a` would cost 2
    assert check_plan(inst, plan, eviction_mode="none") == []
