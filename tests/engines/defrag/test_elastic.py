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
