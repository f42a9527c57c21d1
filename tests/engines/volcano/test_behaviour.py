"""Heuristic behaviour beyond the seeds' examples (expected placements derived by hand).

All cases use seed 000's Example-1 tree: s0..s3 tier 1 (two nodes each), s4 = {s0, s1} and
s5 = {s2, s3} tier 2, s6 tier 3; 8 GPUs and 64 cpu per node unless stated.
"""

from __future__ import annotations

from builders import GPU, example1_tree, gang, hard, instance, nodes, nodes_of, partitioned, soft
from runs import heuristic_plan

from toposolve.core.instance import NetworkTopology, Node, Taint
from toposolve.core.problem import compile_problem
from toposolve.policy.profiles import Profile, load_profile


def test_hard_limit_unreachable_stays_pending_with_reason():
    plan = heuristic_plan(instance(nodes(8), example1_tree(), [gang("big", 6, topology=hard(1))]))
    (job,) = plan.jobs
    assert not job.placed and plan.bindings == []
    assert "tier ≤ 1" in job.reason and "6 pods" in job.reason and "holds 2" in job.reason


def test_soft_job_falls_back_to_the_lowest_tier_that_fits():
    plan = heuristic_plan(instance(nodes(8), example1_tree(), [gang("wide", 6, topology=soft())]))
    assert nodes_of(plan, "wide") == [f"node{i}" for i in range(6)]
    assert plan.jobs[0].hypernode == "s6"  # tiers 1 and 2 are too small


def test_soft_job_that_fits_a_rack_stays_in_it():
    busy = gang("busy", 1, running={0: "node0"})
    plan = heuristic_plan(
        instance(nodes(8), example1_tree(), [busy, gang("small", 2, topology=soft())])
    )
    assert nodes_of(plan, "small") == ["node2", "node3"]  # s0 has one free node only
    assert plan.job("default/small").hypernode == "s1"


def test_soft_score_only_mode_places_without_gradients():
    profile = Profile.model_validate({"heuristic": {"soft_mode": "score-only"}})
    plan = heuristic_plan(
        instance(nodes(8), example1_tree(), [gang("wide", 6, topology=soft())]), profile
    )
    assert nodes_of(plan, "wide") == [f"node{i}" for i in range(6)]


def solve_three_pairs_with_s0_busy(min_available: int, min_partitions: int):
    """3 partitions of 2 × 8 GPUs (hard tier 1) inside hard tier 2, with rack s0 already busy."""
    busy = gang("busy", 2, running={0: "node0", 1: "node1"})
    job = partitioned(
        "pp",
        partitions=3,
        size=2,
        job_topology=hard(2),
        partition_topology=hard(1),
        min_available=min_available,
        min_partitions=min_partitions,
        requests={GPU: 8},
    )
    return heuristic_plan(instance(nodes(8), example1_tree(), [busy, job]))


def test_min_partitions_picks_a_domain_with_room_for_enough_partitions():
    """Only s5 can hold the 2 required partitions."""
    plan = solve_three_pairs_with_s0_busy(min_available=4, min_partitions=2)
    assert nodes_of(plan, "pp") == ["node4", "node5", "node6", "node7"]
    assert plan.job("default/pp").hypernode == "s5"


def test_min_partitions_unreachable_leaves_job_pending():
    plan = solve_three_pairs_with_s0_busy(min_available=6, min_partitions=3)
    assert not plan.job("default/pp").placed
    assert plan.bindings == []


def test_running_job_keeps_its_domain():
    """Two of four pods run in s2; the rest must stay under s5 (hard tier 2) though s0 is free."""
    job = gang("elastic", 4, topology=hard(2), min_available=2, running={0: "node4", 1: "node5"})
    plan = heuristic_plan(instance(nodes(8), example1_tree(), [job]))
    assert nodes_of(plan, "elastic") == ["node6", "node7"]
    assert plan.job("default/elastic").hypernode == "s5"


def test_multi_resource_fit_counts_every_resource():
    """1 GPU + 40 cpu pods: GPUs would allow 8 per node, cpu allows one."""
    job = gang("cpuheavy", 2, gpus=1, cpu=40, topology=hard(1))
    plan = heuristic_plan(instance(nodes(8), example1_tree(), [job]))
    assert nodes_of(plan, "cpuheavy") == ["node0", "node1"]


def test_unschedulable_and_tainted_nodes_are_skipped():
    node_list = nodes(8)
    node_list[0] = Node(name="node0", allocatable=node_list[0].allocatable, unschedulable=True)
    node_list[2] = Node(
        name="node2",
        allocatable=node_list[2].allocatable,
        taints=[Taint(key="gpu", value="bad", effect="NoSchedule")],
    )
    plan = heuristic_plan(instance(node_list, example1_tree(), [gang("pair", 2, topology=hard(1))]))
    assert nodes_of(plan, "pair") == ["node4", "node5"]  # s0 and s1 each lost a node


def test_priority_orders_jobs_before_creation():
    from toposolve.core.instance import PriorityClass

    classes = [PriorityClass(name="high", value=100), PriorityClass(name="low", value=1)]
    first = gang("early-low", 4, topology=hard(2), priority_class="low", creation_index=0)
    second = gang("late-high", 6, topology=hard(3), priority_class="high", creation_index=1)
    plan = heuristic_plan(instance(nodes(8), example1_tree(), [first, second], classes))
    assert len(nodes_of(plan, "late-high")) == 6
    assert not plan.job("default/early-low").placed  # only 2 nodes are left, in two racks


def test_highest_tier_name_resolves_through_tier_names():
    tree = example1_tree()
    for hn in tree:
        hn.tier_name = {1: "rack", 2: "spine", 3: "core"}[hn.tier]
    job = gang("named", 4, topology=NetworkTopology(mode="hard", highest_tier_name="spine"))
    plan = heuristic_plan(instance(nodes(8), tree, [job]))
    assert plan.job("default/named").hypernode == "s4"


def test_no_topology_job_prefers_packed_hypernodes():
    """Fading bin-packing: with GPUs weighted (models/volcano-default.yaml) a 1-GPU pod goes
    where its HyperNodes are already the fullest — rack s2 of node5, where both nodes score alike
    (the plugin scores HyperNodes, not nodes) so the tie goes to node4; with Volcano's bare
    defaults (cpu and memory only) a GPU-only pod scores 0 everywhere: node0."""
    busy = gang("busy", 1, gpus=4, running={0: "node5"})
    inst = instance(nodes(8), example1_tree(), [busy, gang("tiny", 1, gpus=1)])
    assert nodes_of(heuristic_plan(inst, load_profile("volcano-default")), "tiny") == ["node4"]
    assert nodes_of(heuristic_plan(inst, Profile()), "tiny") == ["node0"]


def test_tasks_go_in_pod_priority_order():
    """Volcano's TaskOrderFn: higher pod priority first. The ps task (PriorityClass high) is
    declared second but placed first; only one pod fits, and minAvailable 1 is met by it."""
    from toposolve.core.instance import Job, PodConstraints, PriorityClass, Task

    classes = [PriorityClass(name="high", value=100)]
    job = Job(
        name="tf",
        min_available=1,
        tasks=[
            Task(name="worker", replicas=1, requests={GPU: 8}),
            Task(
                name="ps",
                replicas=1,
                requests={GPU: 8},
                constraints=PodConstraints(priority_class="high"),
            ),
        ],
    )
    problem = compile_problem(instance(nodes(1), [], [job], classes))
    assert problem.group_priority == [0, 100]
    plan = heuristic_plan(instance(nodes(1), [], [job], classes))
    assert [b.pod for b in plan.bindings] == ["default/tf-ps-0"]


def test_queue_priority_orders_queues_before_jobs():
    """The queue with the higher priority is served first, whatever its jobs' age."""
    from toposolve.core.instance import Instance, Queue

    early = gang("batch-job", 4, topology=hard(2), creation_index=0).model_copy(
        update={"queue": "batch"}
    )
    late = gang("prod-job", 6, topology=hard(3), creation_index=1).model_copy(
        update={"queue": "prod"}
    )
    inst = Instance(
        nodes=nodes(8),
        hypernodes=example1_tree(),
        jobs=[early, late],
        queues=[Queue(name="batch", priority=0), Queue(name="prod", priority=10)],
    )
    plan = heuristic_plan(inst)
    assert len(nodes_of(plan, "prod-job")) == 6
    assert not plan.job("default/batch-job").placed


def test_podgroup_min_resources_drive_the_job_prefilter():
    """Volcano's job gradient keeps HyperNodes whose idle resources hold PodGroup minResources:
    asking for 32 GPUs rules out every 16-GPU rack, so the 2-pod job's domain is a tier-2 one."""
    plain = gang("pg", 2, topology=hard(2))
    assert (
        heuristic_plan(instance(nodes(8), example1_tree(), [plain])).job("default/pg").hypernode
        == "s0"
    )
    demanding = gang("pg", 2, topology=hard(2))
    demanding.min_resources = {GPU: 32}
    plan = heuristic_plan(instance(nodes(8), example1_tree(), [demanding]))
    assert plan.job("default/pg").hypernode == "s4"
