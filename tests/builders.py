"""Small instance and plan builders shared by tests (pydantic models only: no readers, no engines;
running an engine on them is :mod:`runs`)."""

from __future__ import annotations

from toposolve.core.instance import (
    PARTITION_ID_LABEL,
    TASK_SPEC_LABEL,
    ConstraintTree,
    GangGroup,
    HyperNode,
    Instance,
    Job,
    LabelSelector,
    Member,
    NetworkTopology,
    Node,
    PartitionPolicy,
    PodConstraints,
    PriorityClass,
    SubGroupPolicy,
    Task,
)
from toposolve.core.plan import Binding, Plan

GPU = "nvidia.com/gpu"
# the eviction tests' classes: preemption needs a strictly higher priority
EVICTION_PRIORITIES = [
    PriorityClass(name="high", value=100),
    PriorityClass(name="mid", value=50),
    PriorityClass(name="low", value=1),
]


def nodes(count: int, *, gpus: int = 8, cpu: int = 64, prefix: str = "node") -> list[Node]:
    return [Node(name=f"{prefix}{i}", allocatable={"cpu": cpu, GPU: gpus}) for i in range(count)]


def leaf(name: str, members: list[str], tier: int = 1) -> HyperNode:
    return HyperNode(
        name=name,
        tier=tier,
        members=[Member.exact(m) for m in members],
    )


def inner(name: str, children: list[str], tier: int) -> HyperNode:
    return HyperNode(
        name=name,
        tier=tier,
        members=[
            Member.exact(c, "HyperNode") for c in children
        ],
    )


def example1_tree(prefix: str = "node") -> list[HyperNode]:
    """Seed 000 Example 1: s0..s3 (tier 1, two nodes each), s4, s5 (tier 2), s6 (tier 3)."""
    return [
        *(leaf(f"s{k}", [f"{prefix}{2 * k}", f"{prefix}{2 * k + 1}"]) for k in range(4)),
        inner("s4", ["s0", "s1"], 2),
        inner("s5", ["s2", "s3"], 2),
        inner("s6", ["s4", "s5"], 3),
    ]


def hard(tier: int) -> NetworkTopology:
    return NetworkTopology(mode="hard", highest_tier_allowed=tier)


def soft() -> NetworkTopology:
    return NetworkTopology(mode="soft")


def gang(
    name: str,
    pods: int,
    *,
    gpus: int = 8,
    cpu: int = 0,
    topology: NetworkTopology | None = None,
    min_available: int | None = None,
    priority_class: str | None = None,
    running: dict[int, str] | None = None,
    creation_index: int = 0,
    task: str = "worker",
) -> Job:
    requests = {GPU: gpus} if gpus else {}
    if cpu:
        requests["cpu"] = cpu
    return Job(
        name=name,
        min_available=pods if min_available is None else min_available,
        network_topology=topology,
        priority_class=priority_class,
        creation_index=creation_index,
        tasks=[Task(name=task, replicas=pods, requests=requests, running=running or {})],
    )


def partitioned(
    name: str,
    *,
    partitions: int,
    size: int,
    job_topology: NetworkTopology | None,
    partition_topology: NetworkTopology | None,
    min_available: int,
    min_partitions: int = 0,
    requests: dict[str, int] | None = None,
    constraints: PodConstraints | None = None,
    task: str = "t0",
) -> Job:
    """A Volcano Job with one partitioned task, mapped to a subGroupPolicy as seed 000 does."""
    return Job(
        name=name,
        min_available=min_available,
        network_topology=job_topology,
        tasks=[
            Task(
                name=task,
                replicas=partitions * size,
                requests=requests or {"cpu": 4},
                constraints=constraints or PodConstraints(),
                partition=PartitionPolicy(
                    total_partitions=partitions,
                    partition_size=size,
                    min_partitions=min_partitions,
                    network_topology=partition_topology,
                ),
            )
        ],
        subgroup_policies=[
            SubGroupPolicy(
                name=task,
                sub_group_size=size,
                label_selector=LabelSelector(match_labels={TASK_SPEC_LABEL: task}),
                match_label_keys=[PARTITION_ID_LABEL],
                network_topology=partition_topology.model_copy() if partition_topology else None,
                min_sub_groups=min_partitions,
            )
        ],
    )


def instance(
    node_list, tree, jobs, priority_classes: list[PriorityClass] | None = None
) -> Instance:
    return Instance(
        nodes=node_list, hypernodes=tree, jobs=jobs, priority_classes=priority_classes or []
    )


def nested(
    name: str,
    groups: dict[str, list[str]],
    *,
    group_topology: NetworkTopology | None = None,
    leaf_topology: NetworkTopology | None = None,
    job_topology: NetworkTopology | None = None,
    min_members: dict[str, int] | None = None,
    pods: int = 1,
    gpus: int = 8,
) -> Job:
    """A depth-3 gang (job → GangGroup → leaf SubJob): ``groups`` maps each GangGroup to its leaf
    SubGroups, one task of ``pods`` pods per leaf (pods ``<name>-<leaf>-<i>``, label ``sg``)."""
    leaves = [(g, leaf) for g, members in groups.items() for leaf in members]
    return Job(
        name=name,
        min_available=pods * len(leaves),
        network_topology=job_topology,
        tasks=[
            Task(name=leaf, replicas=pods, requests={GPU: gpus}, labels={"sg": leaf})
            for _, leaf in leaves
        ],
        subgroup_policies=[
            SubGroupPolicy(
                name="subgroup",
                sub_group_size=pods,
                parent=g,
                network_topology=leaf_topology,
                label_selector=LabelSelector(match_labels={"sg": leaf}),
                match_label_keys=["sg"],
            )
            for g, leaf in leaves
        ],
        gang_groups=[
            GangGroup(
                name=g, network_topology=group_topology, min_members=(min_members or {}).get(g)
            )
            for g in groups
        ],
    )


def chain(name: str, depth: int) -> Job:
    """A gang of one pod nested ``depth`` levels deep: job → GangGroups ``g1`` … ``g<depth-2>``,
    each inside the previous one → the leaf SubJob (label ``sg``)."""
    top = depth - 2
    return Job(
        name=name,
        min_available=1,
        tasks=[Task(name="leaf", replicas=1, requests={GPU: 8}, labels={"sg": "leaf"})],
        subgroup_policies=[
            SubGroupPolicy(name="subgroup", sub_group_size=1, parent=f"g{top}",
                           label_selector=LabelSelector(match_labels={"sg": "leaf"}),
                           match_label_keys=["sg"])
        ],
        gang_groups=[GangGroup(name=f"g{i}", parent=f"g{i - 1}" if i > 1 else None)
                     for i in range(1, top + 1)],
    )


def example1(
    jobs: list[Job], queues=(), priority_classes: list[PriorityClass] | None = None
) -> Instance:
    """Seed 000 Example 1 (:func:`example1_tree`) of eight 8-GPU nodes running ``jobs``;
    priority classes :data:`EVICTION_PRIORITIES` unless given."""
    return Instance(
        nodes=nodes(8),
        hypernodes=example1_tree(),
        jobs=jobs,
        queues=list(queues),
        priority_classes=EVICTION_PRIORITIES if priority_classes is None else priority_classes,
    )


def on(*node_ids: int) -> dict[int, str]:
    """``running`` of a job whose pod ``i`` runs on ``node<node_ids[i]>``."""
    return {i: f"node{n}" for i, n in enumerate(node_ids)}


def in_queue(job: Job, queue: str) -> Job:
    return job.model_copy(update={"queue": queue})


def worker_pod(job: str, i: int) -> str:
    """Name of pod ``i`` of task ``worker`` of ``default/job`` (what :func:`gang` builds)."""
    return f"default/{job}-worker-{i}"


def hand_plan(bindings=(), evictions=()) -> Plan:
    """A hand-made plan: nominated ``bindings`` and ``evictions``, each ``(job, pod index, node)``
    of worker pods."""
    return Plan(
        engine="hand",
        status="FEASIBLE",
        bindings=[Binding(pod=worker_pod(j, i), node=n, nominated=True) for j, i, n in bindings],
        evictions=[Binding(pod=worker_pod(j, i), node=n) for j, i, n in evictions],
    )


def evicted(plan: Plan) -> list[str]:
    """Evicted pods without their namespace, sorted."""
    return sorted(e.pod.split("/", 1)[1] for e in plan.evictions)


def bound(plan: Plan, job: str) -> list[tuple[str, bool]]:
    """(node, nominated) of each binding of ``default/job``, sorted."""
    return sorted(
        (b.node, b.nominated) for b in plan.bindings if b.pod.startswith(f"default/{job}-")
    )


def nodes_of(plan: Plan, job: str) -> list[str]:
    """Nodes of each binding of ``default/job``, sorted."""
    return sorted(b.node for b in plan.bindings if b.pod.startswith(f"default/{job}-"))


def crossing_instance(jobs: list[Job]) -> Instance:
    """:func:`example1_tree` on 8 nodes and a constraint tree ``cross`` crossing it: leaves c0
    (node1, node2), c1 (node3, node4), c2 (node5, node6) of tier 1 under ``cross`` (tier 2);
    node0 and node7 are in no domain of it."""
    pairs = [leaf(f"c{k}", [f"node{2 * k + 1}", f"node{2 * k + 2}"]) for k in range(3)]
    tree = ConstraintTree(name="cross", hypernodes=[*pairs, inner("cross", ["c0", "c1", "c2"], 2)])
    return Instance(nodes=nodes(8), hypernodes=example1_tree(), constraint_trees=[tree],
                    jobs=jobs)


def in_cross(tier: int) -> NetworkTopology:
    """A hard limit at ``tier`` of :func:`crossing_instance`'s tree ``cross``, kept on its
    nodes."""
    return NetworkTopology(mode="hard", highest_tier_allowed=tier, tree="cross",
                           within_hypernode="cross")
