"""``defrag(fail=[...])``: re-place the pods of failed nodes inside their jobs' domains, moving
the fewest other jobs (issue 20; Kueue #14244: two failed nodes evict a whole gang).

Racks r0 = node0-3 and r1 = node4-7 of 8-GPU nodes. Gang `g` (3 whole-node pods, hard-limited to
one rack) runs on node0-2; `s` (one whole-node pod) on node3. node2 fails: g's third pod must go
to r0, whose only other node holds s, so the fewest moves is s to r1 (1 job); without that,
moving all of g to r1 (3 pods) is the only repair."""

from __future__ import annotations

import pytest

from tests.builders import GPU, hard, inner, leaf, nodes
from toposolve.check.checker import check_plan
from toposolve.core.errors import InputError
from toposolve.core.instance import Instance, Job, LabelSelector, PodDisruptionBudget, Task
from toposolve.core.plan import Move, Plan
from toposolve.defrag import defrag

ENGINES = ["cpsat", "greedy"]


def one_pod(name: str, node: str, **fields) -> Job:
    return Job(name=name, min_available=1, tasks=[Task(name="w", replicas=1, requests={GPU: 8},
               running={0: node}, labels={"app": name})], **fields)


def cluster(s_fields: dict | None = None, *, r1_busy: bool = False, s_on: str = "node3",
            g_fields: dict | None = None, budgets=()) -> Instance:
    g = Job(name="g", min_available=3, network_topology=hard(1), **(g_fields or {}),
            tasks=[Task(name="w", replicas=3, requests={GPU: 8},
                        running={0: "node0", 1: "node1", 2: "node2"})])
    jobs = [g, one_pod("s", s_on, **(s_fields or {}))]
    if r1_busy:
        jobs += [one_pod(f"f{i}", f"node{i}", movable=False) for i in range(5, 8)]
    return Instance(nodes=nodes(8), hypernodes=[
        leaf("r0", [f"node{i}" for i in range(4)]), leaf("r1", [f"node{i}" for i in range(4, 8)]),
        inner("top", ["r0", "r1"], 2)], jobs=jobs, disruption_budgets=list(budgets))


def repair(inst: Instance, engine: str, fail=("node2",)) -> tuple[Plan, dict]:
    plan = defrag(inst, fail=list(fail), engine=engine)
    assert check_plan(inst, plan, eviction_mode="none") == []
    assert plan.failed == list(fail)
    return plan, plan.stats["defrag"]


def moves(plan: Plan) -> set[tuple[str, str, str]]:
    return {(m.pod, m.source, m.to) for m in plan.moves}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_spare_in_the_domain_takes_the_failed_pod(engine):
    plan, d = repair(cluster(s_on="node4"), engine)
    assert d["repaired"] == ["default/g"] and d["unrepaired"] == {}
    assert moves(plan) == {("default/g-w-2", "node2", "node3")}
    assert (d["moved_jobs"], d["moved_pods"], d["replaced_pods"]) == ([], 0, 1)


@pytest.mark.parametrize("engine", ENGINES)
def test_the_fewest_other_jobs_move_to_make_a_spare(engine):
    plan, d = repair(cluster(), engine)
    assert d["repaired"] == ["default/g"]
    assert (d["moved_jobs"], d["move_cost"], d["moved_pods"]) == (["default/s"], 1, 1)
    assert ("default/g-w-2", "node2", "node3") in moves(plan)
    assert d["proven_minimal"] == (engine == "cpsat")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("blocker", [
    {"s_fields": {"movable": False}},
    {"budgets": [PodDisruptionBudget(name="ps", min_available=1,
                                     selector=LabelSelector(match_labels={"app": "s"}))]},
])
def test_the_whole_gang_moves_when_its_domain_cannot_be_freed(engine, blocker):
    plan, d = repair(cluster(**blocker), engine)
    assert d["repaired"] == ["default/g"] and d["moved_jobs"] == ["default/g"]
    assert (d["move_cost"], d["moved_pods"], d["replaced_pods"]) == (3, 2, 1)
    assert {to for _, _, to in moves(plan)} == {"node4", "node5", "node6"}


@pytest.mark.parametrize("engine", ENGINES)
def test_an_immovable_gang_keeps_its_pods_and_is_not_repaired_without_a_spare(engine):
    plan, d = repair(cluster({"movable": False}, g_fields={"movable": False}), engine)
    assert d["repaired"] == [] and not plan.moves
    why = d["unrepaired"]["default/g"]
    assert why.startswith("no spare in r0 (tier 1): room for 0 of its 1 failed pod(s)")
    assert "may not move" in why


@pytest.mark.parametrize("engine", ENGINES)
def test_no_repair_when_nothing_can_give_way(engine):
    plan, d = repair(cluster({"movable": False}, r1_busy=True), engine)
    assert d["repaired"] == [] and not plan.moves
    assert "no spare in r0" in d["unrepaired"]["default/g"]


@pytest.mark.parametrize("engine", ENGINES)
def test_two_failures_one_repair_each(engine):
    # node2 (g) and node4 (s moved there first) fail: g fills node3 once s is gone, and s
    # finds node5
    plan, d = repair(cluster(s_on="node4"), engine, fail=("node2", "node4"))
    assert sorted(d["repaired"]) == ["default/g", "default/s"] and d["moved_jobs"] == []
    assert d["replaced_pods"] == 2 and d["moved_pods"] == 0


def test_an_unknown_node_is_a_one_line_error():
    with pytest.raises(InputError, match="no node 'node99'") as info:
        defrag(cluster(), fail=["node99"])
    assert info.value.field == "fail" and "\n" not in str(info.value)


def test_the_checker_refuses_pods_put_on_failed_nodes_and_half_repairs():
    inst = Instance(**{**cluster().model_dump(), "jobs": [Job(
        name="g", min_available=2, tasks=[Task(name="w", replicas=2, requests={GPU: 8},
                                               running={0: "node1", 1: "node2"})])]})
    onto = Plan(engine="hand", status="FEASIBLE", failed=["node3"],
                moves=[Move("default/g-w-1", "node2", "node3")])
    half = Plan(engine="hand", status="FEASIBLE", failed=["node1", "node2"],
                moves=[Move("default/g-w-1", "node2", "node3")])
    assert [(v.kind, v.obj) for v in check_plan(inst, onto, "none")] == [
        ("repair", "Pod/default/g-w-1")]
    assert [(v.kind, v.obj) for v in check_plan(inst, half, "none")] == [
        ("repair", "Job/default/g")]


@pytest.mark.parametrize("seed", range(4))
def test_random_nvl72_repairs_are_valid_and_cpsat_never_worse(seed):
    # 4 NVL72 racks, 0-2 idle trays each, 5 % of trays failed, three random budgets over the jobs
    from toposolve.generate.repair import nvl72_repair

    case = nvl72_repair(4, spares=(0, 1, 2), fail_rate=0.05, seed=seed)
    inst = case.instance
    for k, job in enumerate(inst.jobs):
        job.tasks[0].labels = {"grp": str(k % 3)}
    inst.disruption_budgets = [PodDisruptionBudget(
        name=f"b{g}", selector=LabelSelector(match_labels={"grp": str(g)}),
        max_unavailable=[0, 1, "10%"][(g + seed) % 3]) for g in range(3)]
    got = {}
    for engine in ENGINES:
        plan, d = repair(inst, engine, fail=case.failed)
        gangs = sum(key.startswith("default/gang") for key in d["repaired"])
        got[engine] = ((gangs, len(d["repaired"]) - gangs), d["move_cost"])
        assert set(d["repaired"]) | set(d["unrepaired"]) >= set(case.hit)
    (cp_done, cp_cost), (gr_done, gr_cost) = got["cpsat"], got["greedy"]
    assert cp_done >= gr_done
    if cp_done == gr_done:
        assert cp_cost <= gr_cost
