"""Each placement rule, on small instances with hand-derived outcomes.

Unless stated: seed 000's Example-1 tree (s0..s3 tier 1 with two nodes each, s4 = {s0, s1} and
s5 = {s2, s3} tier 2, s6 tier 3), nodes of 8 GPUs and 64 cpu, pods of 8 GPUs (a whole node).
"""

from __future__ import annotations

from builders import GPU, example1_tree, gang, hard, instance, nodes, partitioned
from cpsat_support import solve_checked

from toposolve.core.instance import Job, Node, PodConstraints, Queue, Taint, Task, Toleration

WHOLE_NODE = {GPU: 8}


def test_gang_is_all_or_nothing_and_elastic_jobs_take_what_fits():
    # three free nodes: "strict" needs 4 at once (never), "elastic" needs 2 and gets all 3
    inst = instance(nodes(3), [], [gang("strict", 4), gang("elastic", 4, min_available=2)])
    solved = solve_checked(inst)
    assert solved.nodes_of("strict") == []
    assert solved.nodes_of("elastic") == ["node0", "node1", "node2"]
    assert solved.job("strict").reason.startswith("does not fit even alone on the idle cluster")
    assert "needs 32 GPUs" in solved.job("strict").reason


def test_partitions_each_in_one_tier1_domain_inside_one_tier2_domain():
    # node0 runs a pod, so s0 cannot hold a 2-pod partition and s4 only one partition (s1);
    # s5 holds two (s2, s3): minPartitions 2 is met there, the third partition stays out
    busy = gang("busy", 1, running={0: "node0"})
    job = partitioned(
        "p",
        partitions=3,
        size=2,
        job_topology=hard(2),
        partition_topology=hard(1),
        min_available=4,
        min_partitions=2,
        requests=WHOLE_NODE,
    )
    solved = solve_checked(instance(nodes(8), example1_tree(), [busy, job]))
    assert solved.nodes_of("p") == ["node4", "node5", "node6", "node7"]
    placement = solved.job("p")
    assert placement.hypernode == "s5"
    assert sorted(s.hypernode for s in placement.subjobs) == ["s2", "s3"]
    # placed 4 × 8 units; spread: job tier 2 + two partitions at tier 1; s2, s3 broken
    assert solved.result.objective.stages == {"placed": 32, "spread": 4, "fragmentation": 2}


def test_min_partitions_out_of_reach_names_the_tier_limit():
    # minPartitions 3 needs 3 × 2 = 6 whole nodes (48 GPUs) under one tier-2 HyperNode; the
    # largest has 4 free nodes (32 GPUs). Without the job's limit, s1, s2, s3 hold them.
    busy = gang("busy", 1, running={0: "node0"})
    job = partitioned(
        "p",
        partitions=3,
        size=2,
        job_topology=hard(2),
        partition_topology=hard(1),
        min_available=4,
        min_partitions=3,
        requests=WHOLE_NODE,
    )
    solved = solve_checked(instance(nodes(8), example1_tree(), [busy, job]))
    assert solved.plan.bindings == []
    # counted in whole partitions: s5 holds two, s4 one (s0 is broken), the cluster three
    assert solved.job("p").reason == (
        "needs 3 SubJobs of 2 pods (8 nvidia.com/gpu each), each within one HyperNode of tier ≤ 1, "
        "all within one HyperNode of tier ≤ 2 (the job's limit); the best, s5, has room for 2 "
        "(the whole cluster for 3)"
    )


def test_running_pods_pin_the_domain():
    # one pod already runs on node4 (s2 ⊂ s5): the other three must join it inside s5
    job = gang("r", 4, topology=hard(2), running={0: "node4"})
    solved = solve_checked(instance(nodes(8), example1_tree(), [job]))
    assert solved.nodes_of("r") == ["node5", "node6", "node7"]
    assert solved.job("r").hypernode == "s5"


def test_every_resource_is_a_capacity():
    # one node with 8 GPUs and 64 cpu; pods of 1 GPU and 32 cpu: cpu allows only two
    inst = instance(nodes(1), [], [gang("m", 4, gpus=1, cpu=32, min_available=1)])
    solved = solve_checked(inst)
    assert len(solved.nodes_of("m")) == 2
    assert solved.result.objective.stages["placed"] == 2


def test_predicates_taints_unschedulable_and_selectors():
    node_list = [
        Node(
            name="tainted",
            allocatable=WHOLE_NODE,
            taints=[Taint(key="gpu", value="reserved", effect="NoSchedule")],
        ),
        Node(name="cordoned", allocatable=WHOLE_NODE, unschedulable=True),
        Node(name="zone-b", allocatable=WHOLE_NODE, labels={"zone": "b"}),
        Node(name="zone-a", allocatable=WHOLE_NODE, labels={"zone": "a"}),
    ]

    def one_pod(name: str, constraints: PodConstraints) -> Job:
        return Job(
            name=name,
            min_available=1,
            tasks=[Task(name="t", replicas=1, requests=WHOLE_NODE, constraints=constraints)],
        )

    tolerant = PodConstraints(
        tolerations=[Toleration(key="gpu", operator="Equal", value="reserved", effect="NoSchedule")]
    )
    jobs = [
        one_pod("in-a", PodConstraints(node_selector={"zone": "a"})),
        one_pod("tolerant", tolerant),
        one_pod("plain", PodConstraints()),
        one_pod("in-c", PodConstraints(node_selector={"zone": "c"})),
    ]
    solved = solve_checked(instance(node_list, [], jobs))
    # in-a must take zone-a; plain cannot use tainted or cordoned → zone-b; tolerant → tainted
    assert solved.nodes_of("in-a") == ["zone-a"]
    assert solved.nodes_of("plain") == ["zone-b"]
    assert solved.nodes_of("tolerant") == ["tainted"]
    assert solved.job("in-c").reason.startswith("no node passes its predicates")


def test_queue_capability_limits_running_plus_new():
    # queue q may hold 16 GPUs; 8 already run there. "one" (8 GPUs) fits, "two" (16) never does.
    running = Job(
        name="old",
        queue="q",
        min_available=1,
        tasks=[Task(name="t", replicas=1, requests=WHOLE_NODE, running={0: "node0"})],
    )
    two = Job(
        name="two",
        queue="q",
        min_available=2,
        creation_index=0,
        tasks=[Task(name="t", replicas=2, requests=WHOLE_NODE)],
    )
    one = Job(
        name="one",
        queue="q",
        min_available=1,
        creation_index=1,
        tasks=[Task(name="t", replicas=1, requests=WHOLE_NODE)],
    )
    inst = instance(nodes(4), [], [running, two, one])
    inst.queues.append(Queue(name="q", capability={GPU: 16}))
    solved = solve_checked(inst)
    assert len(solved.nodes_of("one")) == 1 and solved.nodes_of("two") == []
    assert solved.job("two").reason == "queue 'q' capability would be exceeded"


def test_per_task_minimum():
    # three free nodes; ps needs 1 and worker needs 2: the only ready mix is 1 ps + 2 workers
    job = Job(
        name="mix",
        min_available=2,
        tasks=[
            Task(name="ps", replicas=2, min_available=1, requests=WHOLE_NODE),
            Task(name="worker", replicas=3, min_available=2, requests=WHOLE_NODE),
        ],
    )
    solved = solve_checked(instance(nodes(3), [], [job]))
    pods = [b.pod for b in solved.plan.bindings]
    assert sum("-ps-" in p for p in pods) >= 1 and sum("-worker-" in p for p in pods) >= 2
    assert len(pods) == 3


def test_higher_priority_dominates_more_units_and_blocks_with_a_reason():
    from toposolve.core.instance import PriorityClass

    pcs = [PriorityClass(name="hi", value=1000), PriorityClass(name="lo", value=1)]
    jobs = [
        gang("low", 2, priority_class="lo"),
        gang("high", 1, priority_class="hi", creation_index=1),
    ]
    inst = instance(nodes(2), [], jobs, priority_classes=pcs)
    solved = solve_checked(inst)
    assert len(solved.nodes_of("high")) == 1 and solved.nodes_of("low") == []
    assert (
        solved.job("low").reason
        == "blocked by other jobs' placements: default/high took the room it needs"
    )
