"""Per-role minimums over tasks of one role (``Task.role``): every engine counts the pods of all
the role's tasks, so a role split into tasks of distinct names is placed as the role whole."""

from __future__ import annotations

import pytest

import toposolve
from toposolve.core.instance import Instance, Job, Node, PodConstraints, Task

# one node with room for three of the job's pods
NODE = Node(name="n0", allocatable={"cpu": 3})
ENGINES = ["volcano", "cpsat"]


def role_job(*, split: bool, ps_first: bool = False, second_cpu: int = 1) -> Job:
    """Three pods of role ``w`` needed of three (``split``: two tasks of distinct names, the
    third pod of its own shape) beside two of role ``ps``."""
    workers = [Task(name="w", replicas=2, requests={"cpu": 1})]
    third = {"replicas": 1, "requests": {"cpu": second_cpu, "memory": "0"}}
    if split:
        workers.append(Task(name="w-2", role="w", **third))
    else:
        workers = [Task(name="w", replicas=3, requests={"cpu": 1})]
    ps = [Task(name="ps", replicas=2, requests={"cpu": 1})]
    return Job(name="pg", min_available=3, min_task_member={"w": 3},
               tasks=ps + workers if ps_first else workers + ps)


def placed_roles(engine: str, job: Job) -> list[str]:
    """The role of each pod the engine binds, sorted (the plan is checked)."""
    instance = Instance(nodes=[NODE], jobs=[job])
    plan = toposolve.solve(instance, engine)  # solve() checks the plan
    assert toposolve.check_plan(instance, plan) == []
    role_of = {f"default/{job.name}-{t.name}-{i}": t.role_name
               for t in job.tasks for i in range(t.replicas)}
    return sorted(role_of[b.pod] for b in plan.bindings)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_role_minimum_is_met_across_the_tasks_of_the_role(engine):
    # by task name alone "w" (two pods) could never reach its minimum of 3
    assert placed_roles(engine, role_job(split=True)) == ["w", "w", "w"]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_role_minimum_out_of_reach_keeps_the_job_pending(engine):
    # the third worker no longer fits beside two: ps + w make 3 pods but only 2 of role w
    assert placed_roles(engine, role_job(split=True, second_cpu=2)) == []


@pytest.mark.parametrize("ps_first", [False, True])
@pytest.mark.parametrize("engine", ENGINES)
def test_a_split_role_is_placed_as_the_same_role_in_one_task(engine, ps_first):
    # Volcano's flat loop allocates the ps pods first when they are listed first and then fails
    # the gang, split or not; CP-SAT places the three workers either way
    assert placed_roles(engine, role_job(split=True, ps_first=ps_first)) == placed_roles(
        engine, role_job(split=False, ps_first=ps_first))


@pytest.mark.parametrize("engine", ["kai", "kube"])
def test_mirrors_without_per_task_minimums_leave_such_a_job_pending(engine):
    # KAI's PodGroup and the Workload API have no minTaskMember: their mirrors refuse the job
    # rather than place it in a way that breaks the role minimum
    for split in (True, False):
        instance = Instance(nodes=[NODE], jobs=[role_job(split=split, ps_first=True)])
        (entry,) = toposolve.solve(instance, engine).jobs
        assert not entry.placed and "not expressible" in (entry.reason or "")


@pytest.mark.parametrize("engine", ["volcano", "kai", "kube"])
def test_reasons_find_a_groups_task_by_position_not_by_name(engine):
    # two tasks of one name (a hand-built instance; readers name them apart): the second's
    # nodeSelector matches no node, and each mirror words that task's predicate (a lookup by
    # name found the first task: Volcano's flat loop failed on the pod it did not know, the kube
    # mirror worded no predicate)
    nodes = [Node(name=f"n{i}", allocatable={"cpu": 4}) for i in range(2)]
    job = Job(name="j", min_available=2, tasks=[
        Task(name="a", replicas=1, requests={"cpu": 1}),
        Task(name="a", replicas=1, requests={"cpu": 1}, pod_names=["j-a-x"],
             constraints=PodConstraints(node_selector={"gpu": "true"}))])
    (entry,) = toposolve.solve(Instance(nodes=nodes, jobs=[job]), engine).jobs
    assert not entry.placed
    assert "2 node(s) didn't match Pod's node affinity/selector" in entry.scheduler_reason
