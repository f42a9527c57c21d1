"""The shared scheduling rules: gang readiness and validity, task minimums, job minimum request."""

from __future__ import annotations

from builders import GPU, example1_tree, gang, instance, nodes, partitioned

from toposolve.core.instance import Job, LabelSelector, SubGroupPolicy, Task
from toposolve.core.problem import compile_problem
from toposolve.policy.rules import (
    gang_invalid,
    gang_ready,
    held_by,
    job_minimum_request,
    subjob_ready,
    task_minimums,
)


def roles(min_available: int, *, min_task_member: dict[str, int] | None = None) -> Job:
    """A launcher (1 pod, minAvailable 1) and four workers (minAvailable 3)."""
    return Job(
        name="mpi",
        min_available=min_available,
        min_task_member=min_task_member or {},
        tasks=[
            Task(name="launcher", replicas=1, requests={"cpu": 1}, min_available=1),
            Task(name="worker", replicas=4, requests={GPU: 8}, min_available=3),
        ],
    )


def compiled(*jobs):
    return compile_problem(instance(nodes(8), example1_tree(), list(jobs)))


def test_task_minimums_are_enforced_only_when_min_available_covers_them():
    assert task_minimums(compiled(roles(4)).jobs[0]) == {"launcher": 1, "worker": 3}
    assert task_minimums(compiled(roles(3)).jobs[0]) == {}  # 3 < 1 + 3: job total only (Volcano)


def test_min_task_member_entries_win_over_summed_task_minimums():
    problem = compiled(roles(5, min_task_member={"worker": 4, "launcher": 0}))
    assert task_minimums(problem.jobs[0]) == {"worker": 4}


def test_gang_ready_counts_the_job_then_each_task():
    problem = compiled(roles(4))
    launcher, worker = problem.jobs[0].groups
    assert gang_ready(problem, 0, {launcher: 1, worker: 3})
    assert not gang_ready(problem, 0, {launcher: 0, worker: 4})  # launcher minimum missed
    assert not gang_ready(problem, 0, {launcher: 1, worker: 2})  # total below minAvailable
    relaxed = compiled(roles(3))
    assert gang_ready(relaxed, 0, {relaxed.jobs[0].groups[1]: 3})  # task minimums not enforced


def test_gang_ready_needs_min_sub_groups_full_subjobs():
    job = partitioned(
        "p",
        partitions=3,
        size=2,
        job_topology=None,
        partition_topology=None,
        min_available=4,
        min_partitions=2,
    )
    problem = compiled(job)
    g0, g1, g2 = (problem.subjobs[s].groups[0] for s in problem.jobs[0].subjobs)
    assert gang_ready(problem, 0, {g0: 2, g1: 2})
    assert not gang_ready(problem, 0, {g0: 2, g1: 1, g2: 1})  # 4 pods, one full partition
    assert subjob_ready(problem, problem.jobs[0].subjobs[0], {g0: 2})
    assert not subjob_ready(problem, problem.jobs[0].subjobs[1], {g1: 1})


def test_subjob_of_a_job_without_policies_is_ready_with_its_job():
    problem = compiled(gang("g", 4, min_available=3))
    (s,), (g,) = problem.jobs[0].subjobs, problem.jobs[0].groups
    assert subjob_ready(problem, s, {g: 3}) and not subjob_ready(problem, s, {g: 2})


def test_gang_invalid_names_what_can_never_be_met():
    one_subjob = SubGroupPolicy(
        name="w",
        match_label_keys=["volcano.sh/task-spec"],
        min_sub_groups=2,
        label_selector=LabelSelector(match_labels={"volcano.sh/task-spec": "w"}),
    )
    job = Job(
        name="p",
        min_available=2,
        tasks=[Task(name="w", replicas=2)],
        subgroup_policies=[one_subjob],
    )
    assert gang_invalid(compiled(job), 0) == "gang invalid: 1 SubJobs exist but minSubGroups is 2"
    assert gang_invalid(compiled(gang("ok", 2)), 0) is None


def test_job_minimum_request_counts_running_pods_or_takes_min_resources():
    running = gang("r", 4, min_available=3, running={0: "node0"})
    problem = compiled(running)
    gpu = problem.resource_index[GPU]
    assert job_minimum_request(problem, 0)[gpu] == 2 * 8000  # 3 needed, 1 already running
    assert job_minimum_request(problem, 0, held=3)[gpu] == 0
    assert job_minimum_request(problem, 0, pending_of=lambda g: 1)[gpu] == 8000  # only one pending
    given = compiled(Job(**{**running.model_dump(), "min_resources": {GPU: 4}}))
    assert job_minimum_request(given, 0)[gpu] == 4000  # PodGroup spec.minResources
    assert job_minimum_request(given, 0, use_min_resources=False)[gpu] == 2 * 8000


def test_both_engines_skip_task_minimums_when_min_available_is_below_their_sum():
    """minAvailable 3 < 1 + 3: a gang of three workers is ready without its launcher, which fits
    nowhere (Volcano checks the job total only) — in the heuristic, CP-SAT and the checker alike."""
    from toposolve.check.checker import check_plan
    from toposolve.solve import solve

    job = roles(3)
    job.tasks[0] = Task(name="launcher", replicas=1, requests={"cpu": 1000}, min_available=1)
    inst = instance(nodes(8), example1_tree(), [job])
    for engine in ("heuristic", "cpsat"):
        plan = solve(inst, engine, time_limit=5, deterministic=True)
        assert plan.job("default/mpi").placed and plan.status != "FALLBACK", engine
        assert {b.pod.rsplit("-", 2)[1] for b in plan.bindings} == {"worker"}
        assert check_plan(inst, plan) == []


def test_what_a_victim_holds_is_its_running_pods_requests_or_their_weights():
    """`v`: 3 running 8-GPU pods of 4; live counts (an engine that evicts as it goes) and a
    per-pod weight (CP-SAT's eviction weights) are summed the same way."""
    problem = compiled(gang("v", 4, min_available=2, running={0: "node0", 1: "node1", 2: "node2"}))
    (g,) = problem.jobs[0].groups
    pod = problem.group_request[g]
    assert pod[problem.resources.index(GPU)] > 0
    assert held_by(problem, 0).tolist() == (3 * pod).tolist()
    assert held_by(problem, 0, {g: 1}).tolist() == pod.tolist()
    assert not held_by(problem, 0, {}).any()
    assert held_by(problem, 0, per_pod=[5]) == 15
