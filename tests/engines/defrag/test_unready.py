"""Defragmentation with pods that are not Ready (issue 20): the Eviction API lets a budget's
not-Ready pod go without touching the budget under ``unhealthyPodEvictionPolicy:
AlwaysAllow``, or under ``IfHealthyBudget`` (the default) while the budget is met; a pod still
starting (phase Pending) goes whatever the budget.

Racks r0..r2 of two 8-GPU nodes: `c` runs on node0, `b` (move cost 5) on node2, `d` and `e`
(not movable) on node3 and node4; node1 and node5 are idle. The target (two 8-GPU pods in one
rack) gets in by moving `c` to node5 (cost 1) or `b` (cost 5). One budget covers `b` and `c`."""

from __future__ import annotations

import pytest

from tests.builders import GPU, hard, inner, leaf, nodes
from toposolve.check.checker import check_plan
from toposolve.core.instance import Instance, Job, LabelSelector, PodDisruptionBudget, Task
from toposolve.defrag import defrag

TARGET = "default/target"


def cluster(c_health: str | None, **spec) -> Instance:
    def job(name: str, node: str, **fields) -> Job:
        unready = {0: c_health} if name == "c" and c_health else {}
        return Job(name=name, min_available=1, tasks=[Task(
            name="w", replicas=1, requests={GPU: 8}, running={0: node}, unready=unready,
            labels={"team": "x"} if name in "bc" else {})], **fields)

    target = Job(name="target", min_available=2, network_topology=hard(1),
                 tasks=[Task(name="w", replicas=2, requests={GPU: 8})])
    racks = [leaf(f"r{k}", [f"node{2 * k}", f"node{2 * k + 1}"]) for k in range(3)]
    team = PodDisruptionBudget(name="team", selector=LabelSelector(match_labels={"team": "x"}),
                               **spec)
    return Instance(nodes=nodes(6), hypernodes=[*racks, inner("top", ["r0", "r1", "r2"], 2)],
                    jobs=[job("c", "node0"), job("b", "node2", move_cost=5),
                          job("d", "node3", movable=False), job("e", "node4", movable=False),
                          target],
                    disruption_budgets=[team])


@pytest.mark.parametrize("engine", ["cpsat", "greedy"])
@pytest.mark.parametrize(("c_health", "spec", "moved"), [
    (None, {"min_available": 2}, []),  # both Ready, 2 desired: nothing may go
    ("not-ready", {"min_available": 1}, ["default/c"]),  # IfHealthyBudget, met: 1 healthy ≥ 1
    ("not-ready", {"min_available": 2}, []),  # IfHealthyBudget, not met: c takes an allowance
    ("not-ready", {"min_available": 2, "unhealthy_pod_eviction_policy": "AlwaysAllow"},
     ["default/c"]),
    ("not-ready", {"min_available": 2, "unhealthy_pod_eviction_policy": "IfHealthyBudget"}, []),
    ("starting", {"min_available": 2}, ["default/c"]),  # phase Pending: budgets not consulted
    ("not-ready", {"max_unavailable": 0}, []),  # 1 healthy < 2 desired
])
def test_unready_pods_and_the_eviction_policy(engine, c_health, spec, moved):
    inst = cluster(c_health, **spec)
    plan = defrag(inst, [TARGET], engine=engine)
    d = plan.stats["defrag"]
    assert d["moved_jobs"] == moved
    assert d["admitted"] == ([TARGET] if moved else [])
    assert check_plan(inst, plan, eviction_mode="none") == []
