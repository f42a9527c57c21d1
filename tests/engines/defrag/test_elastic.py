"""Targets admitted at their gang minimum (elastic gangs): the minimum decides the moves, the
extra pods are placed only where they fit without another move."""

from __future__ import annotations

import pytest

from tests.builders import GPU, hard, inner, leaf, nodes
from toposolve.check.checker import check_plan
from toposolve.core.instance import Instance, Job, Task
from toposolve.core.problem import compile_problem
from toposolve.defrag import defrag
from toposolve.engines.defrag.common import minimum_counts

TREE = [leaf("r0", ["node0", "node1"]), leaf("r1", ["node2", "node3"]),
        inner("spine", ["r0", "r1"], 2)]


def _one(name: str, node: str, gpus: int = 2) -> Job:
    return Job(name=name, min_available=1, tasks=[Task(name="w", replicas=1,
                                                       requests={GPU: gpus * 1000},
                                                       running={0: node})])


def _cluster(target_min: int, target_pods: int = 4) -> Instance:
    """Two racks of two 4-GPU nodes; 2-GPU pods on node0, node2 and node3 (free: 2, 4, 2, 2
    GPUs); a pending 2-GPU-per-pod gang hard-limited to one rack."""
    target = Job(name="big", min_available=target_min, network_topology=hard(1),
                 tasks=[Task(name="w", replicas=target_pods, requests={GPU: 2000})])
    return Instance(nodes=nodes(4, gpus=4000), hypernodes=TREE,
                    jobs=[_one("x", "node0"), _one("y", "node2"), _one("z", "node3"), target])


@pytest.mark.parametrize("engine", ["cpsat", "greedy"])
def test_a_target_at_its_minimum_needs_no_move_where_the_whole_gang_needs_one(engine):
    # whole (4 pods = 8 GPUs) only after x leaves r0 (1 move); 3 pods fit r0 as it is
    whole = defrag(_cluster(4), ["default/big"], engine=engine).stats["defrag"]
    assert whole["admitted"] == ["default/big"] and whole["moved_jobs"] == ["default/x"]
    inst = _cluster(3)
    plan = defrag(inst, ["default/big"], engine=engine)
    d = plan.stats["defrag"]
    assert d["admitted"] == ["default/big"] and d["moved_jobs"] == [] and not plan.moves
    # the fourth pod finds no room in r0 without a move: it stays pending
    assert sorted(b.node for b in plan.bindings) == ["node0", "node1", "node1"]
    assert check_plan(inst, plan, eviction_mode="none") == []


@pytest.mark.parametrize("engine", ["cpsat", "greedy"])
def test_extra_pods_fill_the_room_the_moves_leave(engine):
    inst = _cluster(2)
    plan = defrag(inst, ["default/big"], engine=engine)
    # the minimum (2 pods) fits node1; the extras then take node0's 2 GPUs, one stays pending
    assert not plan.moves and len(plan.bindings) == 3
    assert {b.node for b in plan.bindings} <= {"node0", "node1"}
    assert check_plan(inst, plan, eviction_mode="none") == []


def test_the_minimum_meets_task_minimums_and_the_job_total():
    job = Job(name="mix", min_available=4, tasks=[
        Task(name="ps", replicas=2, min_available=1, requests={GPU: 1000}),
        Task(name="w", replicas=6, min_available=2, requests={GPU: 1000})])
    problem = compile_problem(Instance(nodes=nodes(2), hypernodes=[], jobs=[job]))
    counts = minimum_counts(problem, 0)
    per_task = {problem.group_task[g]: c for g, c in counts.items()}
    # ps 1 and w 2 from the task minimums, then one more from the first group (ps)
    assert per_task == {"ps": 2, "w": 2}


def test_a_rigid_gang_is_placed_whole():
    job = Job(name="rigid", min_available=3, tasks=[Task(name="w", replicas=3,
                                                         requests={GPU: 1000})])
    problem = compile_problem(Instance(nodes=nodes(1), hypernodes=[], jobs=[job]))
    assert minimum_counts(problem, 0) == {g: 3 for g in problem.jobs[0].groups}


def _subgroup_job(min_available: int, running: dict[int, str] | None = None) -> Job:
    """Three SubJobs (label sg=0,1,2) of two 1-GPU pods each, subGroupSize 2, minSubGroups 2."""
    from toposolve.core.instance import LabelSelector, SubGroupPolicy
    return Job(name="sg", min_available=min_available,
               tasks=[Task(name=f"t{k}", replicas=2, requests={GPU: 1000}, labels={"sg": str(k)})
                      for k in range(3)],
               subgroup_policies=[SubGroupPolicy(
                   name="p", sub_group_size=2, min_sub_groups=2, match_label_keys=["sg"],
                   label_selector=LabelSelector(match_expressions=[
                       {"key": "sg", "operator": "Exists"}]))])


def test_the_minimum_takes_the_first_min_sub_groups_subjobs_at_their_size():
    problem = compile_problem(Instance(nodes=nodes(2), hypernodes=[], jobs=[_subgroup_job(4)]))
    counts = minimum_counts(problem, 0)
    per_subjob: dict[str, int] = {}
    for g, c in counts.items():
        sid = problem.subjobs[problem.group_subjob[g]].id
        per_subjob[sid] = per_subjob.get(sid, 0) + c
    assert sorted(per_subjob.values()) == [2, 2] and sum(counts.values()) == 4
    # the third SubJob is not part of the minimum: its pods are extra, never half a SubJob
    assert len(per_subjob) == 2


@pytest.mark.parametrize("engine", ["cpsat", "greedy"])
def test_a_subjob_left_out_of_the_minimum_stays_pending_whole(engine):
    # 5 free GPUs (node0; node1 full): the minimum (2 SubJobs, 4 pods) fits, and one pod of the
    # third SubJob would too, but half a SubJob breaks its gang: it is not started, even in part
    busy = Job(name="busy", min_available=1, movable=False, tasks=[Task(
        name="w", replicas=1, requests={GPU: 5000}, running={0: "node1"})])
    inst = Instance(nodes=nodes(2, gpus=5000), hypernodes=[], jobs=[busy, _subgroup_job(4)])
    plan = defrag(inst, ["default/sg"], engine=engine)
    assert plan.stats["defrag"]["admitted"] == ["default/sg"] and len(plan.bindings) == 4
    assert check_plan(inst, plan, eviction_mode="none") == []


def _two_tasks() -> Instance:
    """Four 8-GPU nodes, each half held by a 4-GPU job; a pending gang of 2 pods of task `a`
    (8 GPUs each) and 2 of task `b` (4 GPUs each), minAvailable 2, no task minimum, hard-limited
    to one rack. The fixed rule makes the minimum of `a` (two 8-GPU nodes in a rack: two moves);
    `b` fits as the cluster is."""
    jobs = [_one(f"x{i}", f"node{i}", gpus=4) for i in range(4)]
    target = Job(name="elastic", min_available=2, network_topology=hard(1), tasks=[
        Task(name="a", replicas=2, requests={GPU: 8000}),
        Task(name="b", replicas=2, requests={GPU: 4000})])
    return Instance(nodes=nodes(4, gpus=8000), hypernodes=TREE, jobs=[*jobs, target])


@pytest.mark.parametrize("engine", ["cpsat", "greedy"])
def test_both_engines_search_which_pods_make_the_minimum(engine):
    inst = _two_tasks()
    p = compile_problem(inst)
    rule = minimum_counts(p, 4)
    assert {p.group_task[g]: c for g, c in rule.items()} == {"a": 2}  # the fixed rule's choice
    plan = defrag(inst, ["default/elastic"], engine=engine)
    d = plan.stats["defrag"]
    assert d["admitted"] == ["default/elastic"] and d["moved_jobs"] == []
    assert d["proven_minimal"] == (engine == "cpsat")  # the greedy finds it, with no proof
    assert sorted(b.pod.split("-")[-2] for b in plan.bindings) == ["b", "b"]  # a's find no room
    assert check_plan(inst, plan, eviction_mode="none") == []


@pytest.mark.parametrize("engine", ["cpsat", "greedy"])
def test_both_engines_search_which_subjobs_make_the_minimum(engine):
    # SubJob sg=0's pods want 3 GPUs each, the other two 1 GPU; two 4-GPU nodes each half held
    # by an immovable job: the rule's minimum (sg=0 and sg=1) cannot be placed, sg=1 and sg=2 can
    target = _subgroup_job(4)
    target.tasks[0].requests = {GPU: 3000}
    held = [Job(name=f"x{i}", min_available=1, movable=False, tasks=[Task(
        name="w", replicas=1, requests={GPU: 2000}, running={0: f"node{i}"})]) for i in range(2)]
    inst = Instance(nodes=nodes(2, gpus=4000), hypernodes=[], jobs=[*held, target])
    plan = defrag(inst, ["default/sg"], engine=engine)
    assert plan.stats["defrag"]["admitted"] == ["default/sg"] and not plan.moves
    assert sorted(b.pod.split("-")[1] for b in plan.bindings) == ["t1", "t1", "t2", "t2"]
    assert check_plan(inst, plan, eviction_mode="none") == []

