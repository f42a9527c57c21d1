"""Jobs with nested gang groups (GangGroups over SubJobs) move and are admitted with every
level's hard tier holding in their new place."""

from __future__ import annotations

import pytest

from tests.builders import GPU, hard, inner, leaf, nodes
from toposolve.check.checker import check_plan
from toposolve.core.instance import GangGroup, Instance, Job, LabelSelector, SubGroupPolicy, Task
from toposolve.defrag import defrag

RACKS = {"node0": "r0", "node1": "r0", "node2": "r1", "node3": "r1", "node4": "r2",
         "node5": "r2"}
TREE = [leaf("r0", ["node0", "node1"]), leaf("r1", ["node2", "node3"]),
        leaf("r2", ["node4", "node5"]), inner("spine", ["r0", "r1", "r2"], 2)]


def _tree_job(name: str, gpus: dict[str, int], running: dict[str, str] | None = None) -> Job:
    """GangGroup ``pair`` (hard to one rack) over leaves a and b, leaf c under the job; one pod
    of ``gpus[leaf]`` GPUs per leaf; ``running``: leaf -> node."""
    parents = {"a": "pair", "b": "pair", "c": None}
    return Job(
        name=name, min_available=3,
        tasks=[Task(name=sg, replicas=1, requests={GPU: gpus[sg] * 1000}, labels={"sg": sg},
                    running={0: running[sg]} if running else {})
               for sg in parents],
        subgroup_policies=[SubGroupPolicy(
            name=f"p{sg}", sub_group_size=1, parent=parent, match_label_keys=["sg"],
            label_selector=LabelSelector(match_labels={"sg": sg}))
            for sg, parent in parents.items()],
        gang_groups=[GangGroup(name="pair", network_topology=hard(1))],
    )


def _small(name: str, node: str, gpus: int, movable: bool = True) -> Job:
    return Job(name=name, min_available=1, movable=movable, tasks=[Task(
        name="w", replicas=1, requests={GPU: gpus * 1000}, running={0: node})])


def _placed(plan, inst: Instance, job: str) -> dict[str, str]:
    """Pod name -> node after the plan, for ``job``'s pods."""
    where = {}
    for j in inst.jobs:
        if j.name == job:
            for task in j.tasks:
                for i, node in task.running.items():
                    where[f"default/{job}-{task.name}-{i}"] = node
    where.update({m.pod: m.to for m in plan.moves if m.pod in where})
    return where


@pytest.mark.parametrize("engine", ["cpsat", "greedy"])
def test_a_gang_tree_job_moves_with_its_group_kept_in_one_rack(engine):
    # r0: the tree's pair on node0/node1 (2 GPUs each); its c and a pod that may not move on
    # node4 (r2); r1 holds a 3-GPU pod that may not move on node2 and node3. The target (two
    # 4-GPU pods in one rack) fits only r0, once the pair leaves, and the pair must land in one
    # rack together: node5 (r2), not one pod in each of r1's 1-GPU gaps and r2.
    tree = _tree_job("tree", {"a": 2, "b": 2, "c": 2}, {"a": "node0", "b": "node1", "c": "node4"})
    target = Job(name="big", min_available=2, network_topology=hard(1),
                 tasks=[Task(name="w", replicas=2, requests={GPU: 4000})])
    fixed = [_small("s2", "node2", 3, movable=False), _small("s3", "node3", 3, movable=False),
             _small("s4", "node4", 1, movable=False)]
    inst = Instance(nodes=nodes(6, gpus=4000), hypernodes=TREE, jobs=[tree, *fixed, target])
    plan = defrag(inst, ["default/big"], engine=engine)
    d = plan.stats["defrag"]
    assert d["admitted"] == ["default/big"] and d["moved_jobs"] == ["default/tree"]
    where = _placed(plan, inst, "tree")
    pair = {RACKS[n] for pod, n in where.items() if pod.rsplit("-", 2)[1] in "ab"}
    assert pair == {"r2"}
    assert check_plan(inst, plan, eviction_mode="none") == []


@pytest.mark.parametrize("engine", ["cpsat", "greedy"])
def test_a_gang_tree_target_is_admitted_with_its_group_in_one_rack(engine):
    # free GPUs 2, 3 | 2, 2: the pair (3 GPUs a pod) needs two such nodes in one rack; moving
    # the 2-GPU pod off node0 (into r1) makes r0's, moving both of r1's costs two; c takes 1 GPU
    two_racks = [*TREE[:2], inner("spine", ["r0", "r1"], 2)]
    running = [_small("s0", "node0", 2), _small("s1", "node1", 1), _small("s2", "node2", 2),
               _small("s3", "node3", 2)]
    inst = Instance(nodes=nodes(4, gpus=4000), hypernodes=two_racks,
                    jobs=[*running, _tree_job("t", {"a": 3, "b": 3, "c": 1})])
    plan = defrag(inst, ["default/t"], engine=engine)
    d = plan.stats["defrag"]
    assert d["admitted"] == ["default/t"] and d["moved_jobs"] == ["default/s0"]
    nodes_of = {b.pod.rsplit("-", 2)[1]: b.node for b in plan.bindings}
    assert RACKS[nodes_of["a"]] == RACKS[nodes_of["b"]]
    assert check_plan(inst, plan, eviction_mode="none") == []
