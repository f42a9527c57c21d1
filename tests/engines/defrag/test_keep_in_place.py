"""On CP-SAT's master path a moved job's pods that can stay keep their nodes: only the pods
whose room a target needs move."""

from __future__ import annotations

from tests.builders import GPU, hard, inner, leaf, nodes
from toposolve.check.checker import check_plan
from toposolve.core.instance import Instance, Job, Task
from toposolve.defrag import defrag


def test_a_moved_job_keeps_the_pod_that_is_not_in_the_way():
    # r0 = node0, node1; r1 = node2, node3 (4 GPUs each). A pod that may not move (1 GPU) on
    # node0 blocks r0, so the target (two 4-GPU pods, one rack) takes r1 and m (1-GPU pods on
    # node1 and node3) must move. Only its node3 pod is in the way; its node1 pod stays (a
    # first-fit re-placement would put both on node0: two pods moved).
    tree = [leaf("r0", ["node0", "node1"]), leaf("r1", ["node2", "node3"]),
            inner("spine", ["r0", "r1"], 2)]
    fixed = Job(name="s", min_available=1, movable=False, tasks=[Task(
        name="w", replicas=1, requests={GPU: 1000}, running={0: "node0"})])
    moved = Job(name="m", min_available=2, tasks=[Task(
        name="w", replicas=2, requests={GPU: 1000}, running={0: "node1", 1: "node3"})])
    target = Job(name="big", min_available=2, network_topology=hard(1),
                 tasks=[Task(name="w", replicas=2, requests={GPU: 4000})])
    inst = Instance(nodes=nodes(4, gpus=4000), hypernodes=tree, jobs=[fixed, moved, target])
    plan = defrag(inst, ["default/big"], engine="cpsat")
    d = plan.stats["defrag"]
    assert plan.stats["path"] == "master" and d["proven_minimal"]
    assert d["moved_jobs"] == ["default/m"] and d["moved_pods"] == 1
    assert [(m.pod, m.source) for m in plan.moves] == [("default/m-w-1", "node3")]
    assert check_plan(inst, plan, eviction_mode="none") == []
