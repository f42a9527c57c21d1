"""Compiling an instance to arrays: SubJob ids, pod groups, running pods, predicates."""

from __future__ import annotations

import numpy as np
import pytest
from builders import GPU, example1_tree, gang, hard, instance, nested, nodes, partitioned

from toposolve.core.errors import InputError
from toposolve.core.instance import (
    Job,
    LabelSelector,
    NetworkTopology,
    Node,
    PodConstraints,
    SubGroupPolicy,
    Task,
)
from toposolve.core.problem import compile_problem


def test_seed000_subjob_id_example():
    """Seed 000: policy task0 with matchLabelKeys [partition-id, example.com/role] →
    task0-12-worker."""
    policy = SubGroupPolicy(
        name="task0",
        label_selector=LabelSelector(match_labels={"volcano.sh/task-spec": "task0"}),
        match_label_keys=["volcano.sh/partition-id", "example.com/role"],
    )
    task = Task(
        name="task0",
        replicas=1,
        pod_names=["p"],
        pod_labels={0: {"volcano.sh/partition-id": "12", "example.com/role": "worker"}},
    )
    job = Job(name="job", min_available=1, tasks=[task], subgroup_policies=[policy])
    problem = compile_problem(instance(nodes(1), [], [job]))
    (sj,) = problem.subjobs
    assert sj.id == "default/job/task0-12-worker"
    assert sj.match_index == 12


def test_pods_matching_no_policy_join_the_job_subjob():
    job = Job(name="plain", min_available=2, tasks=[Task(name="w", replicas=2)])
    problem = compile_problem(instance(nodes(1), [], [job]))
    (sj,) = problem.subjobs
    assert sj.id == "default/plain" and sj.min_available == 2


def test_partitions_become_subjobs_with_their_own_limit():
    job = partitioned(
        "pj",
        partitions=2,
        size=3,
        job_topology=hard(2),
        partition_topology=hard(1),
        min_available=3,
    )
    problem = compile_problem(instance(nodes(8), example1_tree(), [job]))
    ids = [s.id for s in problem.subjobs]
    assert ids == ["default/pj/t0-0", "default/pj/t0-1"]
    assert all(s.min_available == 3 and s.limit.tier == 1 and s.limit.hard for s in problem.subjobs)
    assert problem.group_pending[0] == ["default/pj-t0-0", "default/pj-t0-1", "default/pj-t0-2"]
    assert problem.jobs[0].limit.tier == 2


def test_running_pods_use_capacity_and_are_not_pending():
    job = gang("r", 3, running={0: "node1", 2: "node1"})
    problem = compile_problem(instance(nodes(2), [], [job]))
    gpu = problem.resource_index[GPU]
    assert problem.used[1, gpu] == 16000 and problem.used[0, gpu] == 0
    assert problem.group_pending[0] == ["default/r-worker-1"]
    assert problem.group_running[0] == {1: 2}


def test_predicates_and_unschedulable_make_the_feasible_mask():
    node_list = [
        Node(name="a", labels={"zone": "x"}, allocatable={"cpu": 1}),
        Node(name="b", labels={"zone": "y"}, allocatable={"cpu": 1}),
        Node(name="c", labels={"zone": "x"}, allocatable={"cpu": 1}, unschedulable=True),
    ]
    task = Task(name="t", replicas=1, constraints=PodConstraints(node_selector={"zone": "x"}))
    problem = compile_problem(
        instance(node_list, [], [Job(name="j", min_available=1, tasks=[task])])
    )
    assert problem.group_feasible[0].tolist() == [True, False, False]


def test_nodes_without_a_pod_limit_are_not_limited_by_it():
    node_list = [Node(name="a", allocatable={"pods": 2}), Node(name="b", allocatable={"cpu": 1})]
    problem = compile_problem(
        instance(
            node_list, [], [Job(name="j", min_available=1, tasks=[Task(name="t", replicas=1)])]
        )
    )
    pods = problem.resource_index["pods"]
    assert problem.allocatable[0, pods] == 2000 and problem.allocatable[1, pods] > 10**12
    assert problem.group_request[0, pods] == 1000


@pytest.mark.parametrize(
    "jobs, message",
    [
        ([gang("x", 1), gang("x", 1)], "duplicate job"),
        ([gang("x", 1, priority_class="gold")], "PriorityClass 'gold' does not exist"),
    ],
)
def test_dangling_references_are_input_errors(jobs, message):
    with pytest.raises(InputError, match=message):
        compile_problem(instance(nodes(2), example1_tree()[:1], jobs))


def test_pod_groups_share_request_vectors():
    problem = compile_problem(instance(nodes(2), [], [gang("a", 2, gpus=4, cpu=2)]))
    row = problem.group_request[0]
    assert row[problem.resource_index[GPU]] == 4000 and row[problem.resource_index["cpu"]] == 2000
    assert np.all(problem.group_feasible[0])


def test_unknown_highest_tier_name_is_dropped_as_volcano_does():
    tree = example1_tree()  # no tierName at all
    jobs = [
        gang("h", 2, topology=NetworkTopology(mode="hard", highest_tier_name="pod")),
        gang("s", 2, topology=NetworkTopology(mode="soft", highest_tier_name="pod")),
    ]
    problem = compile_problem(instance(nodes(8), tree, jobs))
    hard_job, soft_job = problem.jobs
    assert hard_job.limit is None  # Volcano: highestTierAllowed stays nil, so not hard mode
    assert (
        soft_job.limit is not None
        and not soft_job.limit.hard
        and soft_job.limit.tier == problem.topology.max_tier
    )


def test_running_pod_on_an_absent_node_counts_for_the_gang_but_uses_no_capacity():
    job = gang("x", 3, running={0: "gone", 1: "node0"})
    problem = compile_problem(instance(nodes(2), example1_tree()[:1], [job]))
    assert problem.group_running_absent == [1]
    assert problem.group_running_count(0) == 2 and problem.job_running_count(0) == 2
    assert problem.running_pods == {"default/x-worker-1": 0}
    assert problem.used[:, problem.resource_index[GPU]].tolist() == [8000, 0]


# ---- the vocabulary engines read instead of the Instance ---------------------------------------
def two_task_job(**kwargs) -> Job:
    """A job of a launcher (1 pod, running on node0) and workers (3 pods, one running on node1)."""
    return Job(
        name="mpi",
        tasks=[
            Task(
                name="launcher",
                replicas=1,
                requests={"cpu": 1},
                min_available=1,
                running={0: "node0"},
            ),
            Task(
                name="worker", replicas=3, requests={GPU: 8}, min_available=2, running={1: "node1"}
            ),
        ],
        **kwargs,
    )


def test_running_pods_counts_and_pending_jobs_are_compiled():
    done = gang("done", 1, running={0: "node2"})
    problem = compile_problem(
        instance(nodes(4), example1_tree(), [two_task_job(min_available=3), done])
    )
    assert [(p.name, p.task, p.task_position, p.index, p.node) for p in problem.running] == [
        ("default/mpi-launcher-0", "launcher", 0, 0, 0),
        ("default/mpi-worker-1", "worker", 1, 1, 1),
        ("default/done-worker-0", "worker", 0, 0, 2),
    ]
    assert [problem.group_running_count(g) for g in range(problem.n_groups)] == [1, 1, 1]
    assert [problem.group_size(g) for g in range(problem.n_groups)] == [1, 3, 1]
    assert problem.job_running_count(0) == 2 and problem.running_per_group([0, 1]) == {0: 1, 1: 1}
    assert problem.pending_jobs == [0] and problem.has_pending(0) and not problem.has_pending(1)


def test_queues_min_resources_and_policies_are_compiled():
    from toposolve.core.instance import Queue

    job = two_task_job(
        min_available=3, queue="research", min_resources={"cpu": 2, "example.com/unknown": 5}
    )
    inst = instance(nodes(4), example1_tree(), [job])
    inst.queues = [Queue(name="research", weight=3)]
    problem = compile_problem(inst)
    cj = problem.jobs[0]
    assert cj.min_resources == {"cpu": 2000, "example.com/unknown": 5000}
    assert problem.resource_vector(cj.min_resources).tolist() == [2000.0, 0.0]  # unknown dropped
    assert not cj.has_subgroup_policies
    assert problem.queue("research").weight == 3 and problem.queue("other").weight == 1


def test_nodes_in_a_hypernode_are_its_nodes_ascending():
    problem = compile_problem(instance(nodes(8), example1_tree(), []))
    index = problem.topology.index
    assert problem.nodes_in(index["s1"]).tolist() == [2, 3]
    assert problem.nodes_in(index["s5"]).tolist() == [4, 5, 6, 7]


def test_a_depth_3_gang_compiles_to_a_flat_tree():
    job = nested("t", {"A": ["a0", "a1"], "B": ["b0"]}, group_topology=hard(2))
    job.gang_groups[1].min_members = 1
    p = compile_problem(instance(nodes(8), example1_tree(), [job]))
    a, b = p.gang_nodes
    assert (a.id, a.parent, a.depth, a.min_members, a.limit.tier) == ("default/t/A", -1, 2, 2, 2)
    assert (b.min_members, p.jobs[0].gang_nodes) == (1, [0, 1])
    assert [(p.subjobs[s].parent, p.subjobs[s].depth) for s in p.jobs[0].subjobs] == [
        (0, 3),
        (0, 3),
        (1, 3),
    ]
    assert a.subjobs == [0, 1] and b.subjobs == [2]
    assert (p.gang_depth(0), p.max_gang_depth) == (3, 3)


def test_depth_2_instances_have_no_gang_nodes():
    job = partitioned(
        "pj",
        partitions=2,
        size=2,
        job_topology=hard(2),
        partition_topology=hard(1),
        min_available=4,
    )
    p = compile_problem(instance(nodes(8), example1_tree(), [job, gang("g", 2)]))
    assert p.gang_nodes == [] and p.max_gang_depth == 2
    assert all(sj.parent == -1 and sj.depth == 2 for sj in p.subjobs)


def test_gang_group_parents_must_exist_and_not_cycle():
    job = nested("t", {"A": ["a0"]})
    with pytest.raises(ValueError, match="parent GangGroup 'Z' does not exist"):
        Job.model_validate({**job.model_dump(), "gang_groups": [{"name": "A", "parent": "Z"}]})
    with pytest.raises(ValueError, match="cycle"):
        Job.model_validate(
            {
                **job.model_dump(),
                "gang_groups": [{"name": "A", "parent": "B"}, {"name": "B", "parent": "A"}],
            }
        )


def test_compiled_job_carries_task_labels_and_problem_names_its_source():
    """Engines read a task's template labels and the source file from the Problem, never the
    Instance."""
    task = Task(name="lead", replicas=1, labels={"toposolve.io/podset-group": "g"})
    job = Job(name="job", min_available=1, tasks=[task])
    built = instance(nodes(1), [], [job])
    problem = compile_problem(built)
    assert problem.jobs[0].task_labels == {"lead": {"toposolve.io/podset-group": "g"}}
    assert problem.source == built.source


def _within(tier: int, hypernode: str) -> NetworkTopology:
    return NetworkTopology(mode="hard", highest_tier_allowed=tier, within_hypernode=hypernode)


def test_within_hypernode_keeps_pods_under_it_through_the_gang_tree():
    job = gang("j", 2, topology=_within(3, "s4"))
    # job → GangGroup g1 (under s5) → leaves a (own: under s6), b; GangGroup g2 → leaf c
    tree = nested("k", {"g1": ["a", "b"], "g2": ["c"]}, job_topology=_within(3, "s6"))
    tree.gang_groups[0].network_topology = _within(3, "s5")
    tree.subgroup_policies[0].network_topology = _within(3, "s6")
    problem = compile_problem(instance(nodes(8), example1_tree(), [job, tree]))
    names = np.array(problem.topology.node_names)
    where: dict[str, set[str]] = {}
    for g in range(problem.n_groups):
        where.setdefault(problem.group_task[g], set()).update(names[problem.group_feasible[g]])
    s4, s5 = {f"node{i}" for i in range(4)}, {f"node{i}" for i in range(4, 8)}
    assert where["worker"] == s4  # job j
    assert where["a"] == s5 and where["b"] == s5  # g1's limit holds for its leaves
    assert where["c"] == s4 | s5  # s6: every node


def test_an_unknown_within_hypernode_is_one_line_naming_the_job():
    bad = gang("j", 2, topology=_within(3, "nowhere"))
    with pytest.raises(InputError) as info:
        compile_problem(instance(nodes(8), example1_tree(), [bad]))
    assert "Job/default/j" in str(info.value) and "'nowhere'" in str(info.value)
    assert info.value.field == "networkTopology"


def test_the_score_request_is_the_request_unless_the_task_gives_one():
    plain = gang("plain", 2, cpu=1)
    scored = gang("scored", 2, cpu=1)
    task = scored.tasks[0]
    scored.tasks[0] = task.model_copy(update={"score_requests": {"cpu": 1000, GPU: 8000,
                                                                 "memory": 5}})
    problem = compile_problem(instance(nodes(2), [], [plain, scored]))
    r = problem.resource_index
    assert "memory" not in r  # a scoring default of a resource nothing has adds no column
    g_plain, g_scored = problem.jobs[0].groups[0], problem.jobs[1].groups[0]
    assert np.array_equal(problem.score_request(g_plain), problem.group_request[g_plain])
    assert problem.score_request(g_scored)[r["cpu"]] == 1000
    assert problem.score_request(g_scored)[r[GPU]] == 8000
    assert list(problem.group_score_overrides) == [g_scored]


def test_a_limit_in_a_constraint_tree_is_compiled_in_that_tree():
    from builders import crossing_instance, in_cross

    problem = compile_problem(crossing_instance([gang("x", 2, topology=in_cross(1)),
                                                 gang("y", 2, topology=hard(1))]))
    x, y = problem.jobs[0].limit, problem.jobs[1].limit
    assert (x.hard, x.tier, x.tree) == (True, 1, "cross") and y.tree is None
    assert problem.topology_of(x) is problem.trees["cross"]
    assert problem.topology_of(y) is problem.topology and problem.topology_of(None) is (
        problem.topology)
    assert problem.crossing_jobs == {0: "cross"}
    # kept on the nodes the tree holds (node0 and node7 are in no domain of it)
    names = np.array(problem.topology.node_names)
    assert names[problem.group_feasible[0]].tolist() == [f"node{i}" for i in range(1, 7)]
    assert problem.group_feasible[1].all()


def test_an_instance_without_constraint_trees_has_no_crossing_jobs():
    problem = compile_problem(instance(nodes(8), example1_tree(), [gang("y", 2, topology=hard(1))]))
    assert problem.trees == {} and problem.crossing_jobs == {}
    assert problem.jobs[0].limit.tree is None


def test_a_constraint_tree_the_instance_lacks_is_an_input_error_naming_the_field():
    from builders import crossing_instance

    spec = NetworkTopology(mode="hard", highest_tier_allowed=1, tree="nope")
    with pytest.raises(InputError) as info:
        compile_problem(crossing_instance([gang("x", 2, topology=spec)]))
    assert info.value.field == "networkTopology.tree" and "'nope'" in str(info.value)
    assert "\n" not in str(info.value)


def test_two_constraint_trees_of_one_name_are_an_input_error():
    from builders import crossing_instance

    inst = crossing_instance([])
    inst.constraint_trees = [*inst.constraint_trees, inst.constraint_trees[0]]
    with pytest.raises(InputError, match="constraint tree 'cross' is declared twice"):
        compile_problem(inst)
