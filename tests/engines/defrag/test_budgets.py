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
from toposolve.engines.defrag.budgets import BudgetUse, compile_uses
from toposolve.engines.defrag.common import Unit, build_input, pod_changes

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


def test_pods_two_budgets_cover_keep_their_node_before_charged_ones():
    # cell (3, 7) holds 2 charged pods and 1 pod two budgets cover, which stays first
    use = BudgetUse(allowed=1, charged={0: {(3, 7): 2}})
    assert use.leaving(0, {3: {7: 1}}, ahead={(3, 7): 1}) == 2
    assert use.leaving(0, {3: {7: 2}}, ahead={(3, 7): 1}) == 1
    assert use.leaving(0, {3: {7: 3}}, ahead={(3, 7): 1}) == 0


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


def pinned_pod_cluster() -> Instance:
    """:func:`spread_cluster` with `a`'s pod on node0 covered by two budgets (`pa` for all of
    `a`, `lead` for that pod alone): the eviction API refuses it, the rest of `a` may move."""
    lead = PodDisruptionBudget(name="lead", selector=LabelSelector(match_labels={"role": "lead"}),
                               max_unavailable=2)  # each budget alone lets the pod go
    inst = spread_cluster(budget("pa", "a", max_unavailable=2), lead)
    inst.jobs[0].tasks[0].pod_labels = {0: {"role": "lead"}}
    return inst


def test_two_budgets_cover_exactly_the_pinned_pod():
    inst = pinned_pod_cluster()
    p = compile_problem(inst)
    uses = compile_uses(p, None)
    assert uses.refused_pods == {"default/a-w-0"}
    g, node0 = p.pod_group["default/a-w-0"], p.node_index["node0"]
    assert uses.refused == {0: {(g, node0): 1}}
    # the pinned pod is charged to neither budget: it never leaves
    assert all((g, node0) not in cells for use in uses.uses for cells in use.charged.values())


@pytest.mark.parametrize("engine", ["cpsat", "greedy"])
def test_the_rest_of_a_job_with_a_pinned_pod_moves(engine):
    inst = pinned_pod_cluster()
    plan = defrag(inst, [TARGET], engine=engine)
    d = plan.stats["defrag"]
    assert d["admitted"] == [TARGET]
    assert (d["moved_jobs"], d["move_cost"], d["moved_pods"]) == (["default/a"], 2, 1)
    assert [m.pod for m in plan.moves] == ["default/a-w-1"]  # a-w-0 keeps node0
    assert engine == "greedy" or plan.stats["path"] == "master"
    assert check_plan(inst, plan, eviction_mode="none") == []


def test_the_checker_accepts_the_partial_move_and_refuses_the_pinned_pod():
    inst = pinned_pod_cluster()
    partial = Plan(engine="hand", status="FEASIBLE",
                   moves=[Move("default/a-w-1", "node4", "node1")])
    assert check_plan(inst, partial, eviction_mode="none") == []
    pinned = Plan(engine="hand", status="FEASIBLE",
                  moves=[Move("default/a-w-0", "node0", "node5")])
    assert [(v.kind, v.obj) for v in check_plan(inst, pinned, eviction_mode="none")] == [
        ("pdb", "Pod/default/a-w-0")]


@pytest.mark.parametrize("engine", ["cpsat", "greedy"])
def test_a_pinned_pod_holds_its_job_in_its_rack(engine):
    """Racks r0 = node0..2, r1 = node3..5; rack-hard `a` runs on node0 (its pod two budgets
    cover) and node1, `b` and `c` (cost 5 each) on node3 and node4. Moving `a`'s free pod to
    node5 (cost 2) would free r0 but split `a` over two racks: moving `b` or `c` to node2 (cost
    5) is the answer. CP-SAT's master moves `a` (its free pod just leaves there), whose pod
    finds no room in r0 then: the full model decides."""

    def job(name: str, where: list[str], **fields) -> Job:
        return Job(name=name, min_available=1, tasks=[Task(
            name="w", replicas=len(where), requests={GPU: 8}, labels={"app": name},
            running=dict(enumerate(where)), pod_labels={0: {"role": "lead"}})], **fields)

    lead = PodDisruptionBudget(name="lead", selector=LabelSelector(match_labels={"role": "lead"}),
                               max_unavailable=9)
    inst = Instance(
        nodes=nodes(6), hypernodes=[leaf("r0", ["node0", "node1", "node2"]),
                                    leaf("r1", ["node3", "node4", "node5"]),
                                    inner("top", ["r0", "r1"], 2)],
        jobs=[job("a", ["node0", "node1"], network_topology=hard(1)),
              job("b", ["node3"], move_cost=5), job("c", ["node4"], move_cost=5),
              Job(name="target", min_available=2, network_topology=hard(1),
                  tasks=[Task(name="w", replicas=2, requests={GPU: 8})])],
        disruption_budgets=[budget("pa", "a", max_unavailable=2), lead])
    plan = defrag(inst, [TARGET], engine=engine)
    d = plan.stats["defrag"]
    assert d["admitted"] == [TARGET] and d["move_cost"] == 5
    assert "default/a" not in d["moved_jobs"]
    assert engine == "greedy" or plan.stats["path"] == "full model"
    assert check_plan(inst, plan, eviction_mode="none") == []


@pytest.mark.parametrize("engine", ["cpsat", "greedy"])
def test_a_pinned_pod_on_a_node_its_job_may_not_use_pins_the_job(engine):
    # node0 cordoned: a moved `a` could not keep its pinned pod there, so `a` stays whole and
    # b and c move (cost 10), as before pods two budgets cover could stay alone
    inst = pinned_pod_cluster()
    inst.nodes[0].unschedulable = True
    p = compile_problem(inst)
    movable = {u.job for u in build_input(p, [3]).movable}
    assert movable == {1, 2}  # b and c; `a` (job 0) pinned whole
    plan = defrag(inst, [TARGET], engine=engine)
    d = plan.stats["defrag"]
    assert d["admitted"] == [TARGET]
    assert d["moved_jobs"] == ["default/b", "default/c"] and d["move_cost"] == 10
    assert check_plan(inst, plan, eviction_mode="none") == []
