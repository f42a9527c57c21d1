"""The independent checker on hand-built instances and hand-written plans.

The tree is Example 1 (instances/seed000-example1.yaml): node0..node7, tier-1 HyperNodes s0..s3
holding node pairs,
s4 = {s0, s1} and s5 = {s2, s3} at tier 2, s6 = {s4, s5} at tier 3; the virtual root has tier 4.
Members are picked with all three selector kinds. node8 belongs to no HyperNode.
Every node has 4 cpu; pods request 1 cpu unless a test says otherwise.
"""

from __future__ import annotations

import pytest

from toposolve.check.checker import (
    KINDS,
    PlanInvalid,
    Violation,
    assert_valid,
    check_plan,
    domains_not_in,
    format_report,
)
from toposolve.check.resources import predicate_failure
from toposolve.check.tree import build_tree
from toposolve.core.errors import InputError
from toposolve.core.instance import (
    ROOT_HYPERNODE,
    HyperNode,
    Instance,
    Job,
    LabelRequirement,
    LabelSelector,
    Member,
    MemberSelector,
    NetworkTopology,
    Node,
    PartitionPolicy,
    PodConstraints,
    PriorityClass,
    Queue,
    SubGroupPolicy,
    Taint,
    Task,
    Toleration,
)
from toposolve.core.plan import Binding, JobPlacement, Plan, SubJobPlacement

CPU = 1  # one core


# ---------------------------------------------------------------- builders


def node_member(**selector) -> Member:
    return Member(type="Node", selector=MemberSelector(**selector))


def hn_member(name: str) -> Member:
    return Member.exact(name, "HyperNode")


def example1_hypernodes() -> list[HyperNode]:
    return [
        HyperNode(
            name="s0",
            tier=1,
            tier_name="leaf",
            members=[Member.exact("node0"), Member.exact("node1")],
        ),
        # unanchored RE2 search: "node[23]$" picks node2 and node3 only
        HyperNode(
            name="s1", tier=1, tier_name="leaf", members=[node_member(regex_match="node[23]$")]
        ),
        HyperNode(
            name="s2",
            tier=1,
            tier_name="leaf",
            members=[node_member(label_match=LabelSelector(match_labels={"rack": "r2"}))],
        ),
        HyperNode(
            name="s3",
            tier=1,
            tier_name="leaf",
            members=[
                node_member(
                    label_match=LabelSelector(
                        match_expressions=[
                            LabelRequirement(key="rack", operator="In", values=["r3"])
                        ]
                    )
                )
            ],
        ),
        HyperNode(name="s4", tier=2, tier_name="spine", members=[hn_member("s0"), hn_member("s1")]),
        HyperNode(name="s5", tier=2, tier_name="spine", members=[hn_member("s2"), hn_member("s3")]),
        HyperNode(name="s6", tier=3, tier_name="super", members=[hn_member("s4"), hn_member("s5")]),
    ]


def example1_nodes(**overrides) -> list[Node]:
    nodes = [
        Node(
            name=f"node{i}",
            labels={"rack": f"r{i // 2}", "index": str(i)},
            allocatable={"cpu": 4 * CPU},
        )
        for i in range(8)
    ]
    nodes.append(Node(name="node8", labels={"rack": "none"}, allocatable={"cpu": 4 * CPU}))
    for name, fields in overrides.items():
        i = int(name.removeprefix("node"))
        nodes[i] = Node.model_validate(
            {**nodes[i].model_dump(), **fields}
        )  # copy(update=) skips validation
    return nodes


def make_instance(*jobs: Job, nodes: list[Node] | None = None, **kw) -> Instance:
    return Instance(
        nodes=nodes if nodes is not None else example1_nodes(),
        hypernodes=example1_hypernodes(),
        jobs=list(jobs),
        **kw,
    )


def simple_job(
    name: str,
    replicas: int,
    *,
    min_available: int | None = None,
    tier: int | None = None,
    running: dict[int, str] | None = None,
    cpu: int | str = CPU,
    **kw,
) -> Job:
    topology = NetworkTopology(mode="hard", highest_tier_allowed=tier) if tier is not None else None
    return Job(
        name=name,
        min_available=replicas if min_available is None else min_available,
        network_topology=kw.pop("network_topology", topology),
        tasks=[
            Task(
                name="worker",
                replicas=replicas,
                requests={"cpu": cpu},
                running=running or {},
                constraints=kw.pop("constraints", PodConstraints()),
            )
        ],
        **kw,
    )


def pod(job: str, i: int, task: str = "worker") -> str:
    return f"default/{job}-{task}-{i}"


def binds(job: str, nodes: list[str], task: str = "worker", start: int = 0) -> list[Binding]:
    return [Binding(pod=pod(job, start + i, task), node=n) for i, n in enumerate(nodes)]


def make_plan(bindings=(), evictions=(), jobs=()) -> Plan:
    return Plan(
        engine="hand",
        status="feasible",
        bindings=list(bindings),
        evictions=list(evictions),
        jobs=list(jobs),
    )


def kinds(violations: list[Violation]) -> list[str]:
    return [v.kind for v in violations]


# ---------------------------------------------------------------- the tree


def test_tree_resolves_all_selector_kinds_and_the_root():
    tree = build_tree(make_instance())
    assert tree.home == {
        "node0": "s0",
        "node1": "s0",
        "node2": "s1",
        "node3": "s1",
        "node4": "s2",
        "node5": "s2",
        "node6": "s3",
        "node7": "s3",
        "node8": ROOT_HYPERNODE,
    }
    assert tree.tier[ROOT_HYPERNODE] == 4
    assert tree.lca(["node0", "node1"]) == "s0"
    assert tree.lca(["node1", "node3"]) == "s4"
    assert tree.lca(["node0", "node7"]) == "s6"
    assert tree.lca(["node0", "node8"]) == ROOT_HYPERNODE
    assert tree.contains("s5", "node6") and not tree.contains("s4", "node6")
    assert tree.tier_by_name == {"leaf": 1, "spine": 2, "super": 3}


def test_regex_members_are_unanchored_re2_searches():
    names = ["node1", "node10", "xnode1", "node2"]
    instance = Instance(
        nodes=[Node(name=n) for n in names],
        hypernodes=[HyperNode(name="h", tier=1, members=[node_member(regex_match="node1")])],
    )
    assert build_tree(instance).home == {
        "node1": "h",
        "node10": "h",
        "xnode1": "h",
        "node2": ROOT_HYPERNODE,
    }


def test_tree_without_hypernodes_has_a_tier_1_root_holding_everything():
    tree = build_tree(Instance(nodes=example1_nodes()))
    assert tree.tier == {ROOT_HYPERNODE: 1}
    assert tree.lca(["node0", "node7"]) == ROOT_HYPERNODE


def test_tree_errors_are_input_errors():
    cyclic = [
        HyperNode(name="a", tier=1, members=[hn_member("b")]),
        HyperNode(name="b", tier=2, members=[hn_member("a")]),
    ]
    with pytest.raises(InputError, match="cycle"):
        check_plan(Instance(nodes=example1_nodes(), hypernodes=cyclic), make_plan())
    bad_regex = [HyperNode(name="a", tier=1, members=[node_member(regex_match="node(")])]
    with pytest.raises(InputError, match="regular expression"):
        check_plan(Instance(nodes=example1_nodes(), hypernodes=bad_regex), make_plan())


# ---------------------------------------------------------------- a valid plan


def test_valid_plan_has_no_violation_and_a_summary():
    job = simple_job("train", 4, tier=2)
    other = simple_job("solo", 1)  # no topology: node8, outside every HyperNode, is fine
    plan = make_plan(
        bindings=binds("train", ["node0", "node1", "node2", "node3"]) + binds("solo", ["node8"]),
        jobs=[JobPlacement("default/train", True, "s4"), JobPlacement("default/solo", True, None)],
    )
    instance = make_instance(job, other)
    assert check_plan(instance, plan) == []
    assert_valid(instance, plan)
    assert format_report([], plan) == "plan is valid: 5 bindings, 0 evictions, 2 jobs placed"


def test_violation_text_and_plan_invalid_lists_every_violation():
    v = Violation("capacity", "Node/node0", "cpu: too much")
    assert str(v) == "capacity: Node/node0: cpu: too much"
    instance = make_instance(simple_job("train", 2))
    plan = make_plan(
        bindings=[
            Binding(pod="default/ghost", node="node0"),
            Binding(pod=pod("train", 0), node="nodeX"),
        ]
    )
    with pytest.raises(PlanInvalid) as info:
        assert_valid(instance, plan)
    assert isinstance(info.value, AssertionError)
    lines = str(info.value).splitlines()
    assert lines[-1] == f"{len(info.value.violations)} violations"
    assert "unknown-pod: Pod/default/ghost: no such pod in the instance" in lines
    assert all(v.kind in KINDS for v in info.value.violations)


# ---------------------------------------------------------------- bindings and evictions


def test_unknown_pod_and_unknown_node():
    instance = make_instance(simple_job("train", 1))
    found = check_plan(instance, make_plan(bindings=[Binding(pod="default/nope", node="node0")]))
    assert kinds(found) == ["unknown-pod"]
    found = check_plan(instance, make_plan(bindings=[Binding(pod=pod("train", 0), node="node99")]))
    assert kinds(found) == ["unknown-node"]
    found = check_plan(instance, make_plan(evictions=[Binding(pod="default/nope", node="node0")]))
    assert kinds(found) == ["unknown-pod"]


def test_duplicate_binding_twice_or_while_running():
    instance = make_instance(simple_job("train", 2, min_available=1, running={1: "node0"}))
    twice = make_plan(bindings=binds("train", ["node0"]) + binds("train", ["node1"]))
    assert kinds(check_plan(instance, twice)) == ["duplicate-binding"]
    while_running = make_plan(bindings=binds("train", ["node2"], start=1))
    assert kinds(check_plan(instance, while_running)) == ["duplicate-binding"]
    # evicted first, then bound elsewhere: a move, not a duplicate (the eviction rule is apart)
    moved = make_plan(
        bindings=binds("train", ["node2"], start=1),
        evictions=[Binding(pod=pod("train", 1), node="node0")],
    )
    assert "duplicate-binding" not in kinds(check_plan(instance, moved))


def test_not_running_evictions():
    instance = make_instance(simple_job("train", 2, min_available=1, running={0: "node0"}))
    pending = make_plan(evictions=[Binding(pod=pod("train", 1), node="node0")])
    assert kinds(check_plan(instance, pending)) == ["not-running"]
    wrong_node = make_plan(evictions=[Binding(pod=pod("train", 0), node="node1")])
    assert kinds(check_plan(instance, wrong_node)) == ["not-running"]
    twice = make_plan(evictions=[Binding(pod=pod("train", 0), node="node0")] * 2)
    assert kinds(check_plan(instance, twice, eviction_mode="both")).count("not-running") == 1


# ---------------------------------------------------------------- capacity


def test_capacity_counts_running_pods_and_evictions_free_room():
    low = simple_job("low", 3, running={0: "node0", 1: "node0", 2: "node0"}, priority_class="low")
    high = simple_job("high", 2, priority_class="high")
    classes = [PriorityClass(name="low", value=1), PriorityClass(name="high", value=10)]
    instance = make_instance(low, high, priority_classes=classes)
    crowded = make_plan(bindings=binds("high", ["node0", "node0"]))
    found = check_plan(instance, crowded)
    assert kinds(found) == ["capacity"] and found[0].obj == "Node/node0"
    # 3 running + 2 new = 5 cpu on a 4-cpu node; evicting one running pod makes room
    freed = make_plan(
        bindings=binds("high", ["node0", "node0"]),
        evictions=[Binding(pod=pod("low", 0), node="node0")],
    )
    assert check_plan(instance, freed) == []


def test_capacity_of_pods_resource_and_undeclared_resources():
    nodes = example1_nodes(node0={"allocatable": {"cpu": 4 * CPU, "pods": 2}})
    small = simple_job("small", 3, cpu="100m")
    instance = make_instance(small, nodes=nodes)
    found = check_plan(instance, make_plan(bindings=binds("small", ["node0"] * 3)))
    assert [(v.kind, v.message.split(":")[0]) for v in found] == [("capacity", "pods")]
    # node1 declares no "pods": pod count is not limited there
    assert check_plan(instance, make_plan(bindings=binds("small", ["node1"] * 3))) == []
    gpu_job = Job(
        name="g",
        min_available=1,
        tasks=[Task(name="worker", replicas=1, requests={"nvidia.com/gpu": 1})],
    )
    found = check_plan(make_instance(gpu_job), make_plan(bindings=binds("g", ["node0"])))
    assert kinds(found) == ["capacity"] and "nvidia.com/gpu" in found[0].message


# ---------------------------------------------------------------- predicates


def req(key, op, *values):
    return LabelRequirement(key=key, operator=op, values=list(values))


NODE = Node(
    name="n",
    labels={"zone": "a", "gen": "5"},
    taints=[
        Taint(key="gpu", value="yes", effect="NoSchedule"),
        Taint(key="soft", effect="PreferNoSchedule"),
    ],
)
ALL_TOLERATED = [Toleration(operator="Exists")]


@pytest.mark.parametrize(
    ("constraints", "allowed"),
    [
        (PodConstraints(), False),  # NoSchedule taint not tolerated
        (PodConstraints(tolerations=ALL_TOLERATED), True),  # empty key + Exists tolerates all
        (PodConstraints(tolerations=[Toleration(key="gpu", operator="Exists")]), True),
        (PodConstraints(tolerations=[Toleration(key="gpu", value="yes")]), True),  # effect "" = all
        (PodConstraints(tolerations=[Toleration(key="gpu", value="no")]), False),
        (
            PodConstraints(tolerations=[Toleration(key="gpu", value="yes", effect="NoExecute")]),
            False,
        ),
        (PodConstraints(tolerations=ALL_TOLERATED, node_selector={"zone": "a"}), True),
        (PodConstraints(tolerations=ALL_TOLERATED, node_selector={"zone": "b"}), False),
        # OR of terms, AND inside a term
        (
            PodConstraints(
                tolerations=ALL_TOLERATED,
                affinity_terms=[[req("zone", "In", "b")], [req("gen", "Gt", "4")]],
            ),
            True,
        ),
        (
            PodConstraints(
                tolerations=ALL_TOLERATED,
                affinity_terms=[[req("zone", "In", "a"), req("gen", "Lt", "5")]],
            ),
            False,
        ),
        (
            PodConstraints(
                tolerations=ALL_TOLERATED,
                affinity_terms=[
                    [req("zone", "NotIn", "b"), req("gpu", "DoesNotExist"), req("gen", "Exists")]
                ],
            ),
            True,
        ),
        (
            PodConstraints(tolerations=ALL_TOLERATED, affinity_terms=[[req("zone", "Gt", "1")]]),
            False,
        ),
    ],
)
def test_predicate_semantics(constraints, allowed):
    assert (predicate_failure(NODE, constraints) is None) is allowed


def test_predicate_violations_in_a_plan():
    picky = simple_job("picky", 1, constraints=PodConstraints(node_selector={"rack": "r1"}))
    nodes = example1_nodes(node3={"unschedulable": True})
    instance = make_instance(picky, nodes=nodes)
    assert check_plan(instance, make_plan(bindings=binds("picky", ["node2"]))) == []
    found = check_plan(instance, make_plan(bindings=binds("picky", ["node0"])))
    assert kinds(found) == ["predicate"]
    found = check_plan(instance, make_plan(bindings=binds("picky", ["node3"])))
    assert kinds(found) == ["predicate"] and "unschedulable" in found[0].message


def test_a_pod_outside_its_jobs_node_pool_is_a_predicate_violation():
    pooled = simple_job("pooled", 1, node_pool={"rack": "r1"})
    instance = make_instance(pooled)
    assert check_plan(instance, make_plan(bindings=binds("pooled", ["node3"]))) == []
    found = check_plan(instance, make_plan(bindings=binds("pooled", ["node0"])))
    assert kinds(found) == ["predicate"] and "node pool (rack=r1)" in found[0].message


# ---------------------------------------------------------------- gangs


def test_gang_counts_running_pods():
    instance = make_instance(simple_job("train", 4, running={0: "node0"}))
    assert kinds(
        check_plan(instance, make_plan(bindings=binds("train", ["node1", "node2"], start=1)))
    ) == ["gang"]
    full = make_plan(bindings=binds("train", ["node1", "node2", "node3"], start=1))
    assert check_plan(instance, full) == []
    # evicting the running pod leaves 3 of 4
    evicted = make_plan(
        bindings=binds("train", ["node1", "node2", "node3"], start=1),
        evictions=[Binding(pod=pod("train", 0), node="node0")],
    )
    assert "gang" in kinds(check_plan(instance, evicted, eviction_mode="both"))


def test_per_task_minimum():
    job = Job(
        name="ps",
        min_available=2,
        tasks=[
            Task(name="server", replicas=1, min_available=1, requests={"cpu": CPU}),
            Task(name="worker", replicas=3, min_available=1, requests={"cpu": CPU}),
        ],
    )
    instance = make_instance(job)
    workers_only = make_plan(bindings=binds("ps", ["node0", "node1"], task="worker"))
    found = check_plan(instance, workers_only)
    assert kinds(found) == ["gang"] and "'server'" in found[0].message
    both = make_plan(
        bindings=binds("ps", ["node0"], task="server") + binds("ps", ["node1"], task="worker")
    )
    assert check_plan(instance, both) == []


def test_per_task_minimums_are_skipped_when_min_available_is_below_their_total():
    # Volcano CheckTaskReady: minAvailable 1 < 1 + 1, so only the job total counts
    job = Job(
        name="ps",
        min_available=1,
        tasks=[
            Task(name="server", replicas=1, min_available=1, requests={"cpu": CPU}),
            Task(name="worker", replicas=3, min_available=1, requests={"cpu": CPU}),
        ],
    )
    assert (
        check_plan(make_instance(job), make_plan(bindings=binds("ps", ["node0"], task="worker")))
        == []
    )


def test_min_task_member_overrides_task_minimums():
    # minTaskMember asks for 2 workers, overriding the task's own minAvailable of 3
    job = Job(
        name="pg",
        min_available=3,
        min_task_member={"worker": 2},
        tasks=[
            Task(name="server", replicas=2, requests={"cpu": CPU}),
            Task(name="worker", replicas=3, min_available=3, requests={"cpu": CPU}),
        ],
    )
    instance = make_instance(job)
    one_worker = make_plan(
        bindings=binds("pg", ["node0", "node1"], task="server")
        + binds("pg", ["node2"], task="worker")
    )
    found = check_plan(instance, one_worker)
    assert kinds(found) == ["gang"] and "'worker': 1 pods placed, minimum is 2" in found[0].message
    two_workers = make_plan(
        bindings=binds("pg", ["node0"], task="server")
        + binds("pg", ["node1", "node2"], task="worker")
    )
    assert check_plan(instance, two_workers) == []


def test_role_minimums_count_every_task_of_the_role():
    # two tasks of role "worker" (a PodGroup role whose pods differ in requests): minTaskMember
    # counts them together, not by task name
    job = Job(
        name="pg",
        min_available=3,
        min_task_member={"worker": 3},
        tasks=[
            Task(name="server", replicas=2, requests={"cpu": CPU}),
            Task(name="worker", replicas=2, requests={"cpu": CPU}),
            Task(name="big", role="worker", replicas=1, requests={"cpu": 2 * CPU}),
        ],
    )
    instance = make_instance(job)
    by_role = make_plan(bindings=binds("pg", ["node0", "node1"]) + binds("pg", ["node2"], "big"))
    assert check_plan(instance, by_role) == []
    with_a_server = make_plan(
        bindings=binds("pg", ["node0", "node1"]) + binds("pg", ["node2"], task="server"))
    found = check_plan(instance, with_a_server)
    assert kinds(found) == ["gang"] and "'worker': 2 pods placed, minimum is 3" in found[0].message


def partitioned_job(*, min_sub_groups: int = 0, job_tier: int | None = 2, sub_tier: int = 1) -> Job:
    """A Volcano Job task of 2 partitions × 2 pods, as the job controller turns it into a
    PodGroup."""
    return Job(
        name="pj",
        min_available=2,
        network_topology=None
        if job_tier is None
        else NetworkTopology(mode="hard", highest_tier_allowed=job_tier),
        tasks=[
            Task(
                name="worker",
                replicas=4,
                requests={"cpu": CPU},
                partition=PartitionPolicy(total_partitions=2, partition_size=2),
            )
        ],
        subgroup_policies=[
            SubGroupPolicy(
                name="worker",
                sub_group_size=2,
                label_selector=LabelSelector(match_labels={"volcano.sh/task-spec": "worker"}),
                match_label_keys=["volcano.sh/partition-id"],
                network_topology=NetworkTopology(mode="hard", highest_tier_allowed=sub_tier),
                min_sub_groups=min_sub_groups,
            )
        ],
    )


def test_an_incomplete_partition_breaks_the_subgroup_gang():
    instance = make_instance(partitioned_job())
    # partition 0 (pods 0,1) complete, partition 1 (pods 2,3) has one pod
    found = check_plan(instance, make_plan(bindings=binds("pj", ["node0", "node1", "node2"])))
    assert kinds(found) == ["subgroup-gang"] and found[0].obj == "SubJob/default/pj/worker-1"
    assert check_plan(instance, make_plan(bindings=binds("pj", ["node0", "node1"]))) == []


def test_min_sub_groups():
    instance = make_instance(partitioned_job(min_sub_groups=2))
    found = check_plan(instance, make_plan(bindings=binds("pj", ["node0", "node1"])))
    assert kinds(found) == ["subgroup-gang"] and found[0].obj == "Job/default/pj"
    assert (
        check_plan(instance, make_plan(bindings=binds("pj", ["node0", "node1", "node2", "node3"])))
        == []
    )


# ---------------------------------------------------------------- tiers


def test_hard_job_tier():
    instance = make_instance(simple_job("train", 2, tier=1))
    assert check_plan(instance, make_plan(bindings=binds("train", ["node0", "node1"]))) == []
    found = check_plan(instance, make_plan(bindings=binds("train", ["node1", "node2"])))
    assert kinds(found) == ["tier"] and "'s4'" in found[0].message
    # a node no HyperNode holds is only under the root (tier 4)
    found = check_plan(instance, make_plan(bindings=binds("train", ["node8", "node8"])))
    assert kinds(found) == ["tier"]
    # soft mode is not checked
    soft = simple_job(
        "train", 2, network_topology=NetworkTopology(mode="soft", highest_tier_allowed=1)
    )
    assert (
        check_plan(make_instance(soft), make_plan(bindings=binds("train", ["node1", "node7"])))
        == []
    )


def test_tier_counts_running_pods():
    instance = make_instance(simple_job("train", 2, tier=1, running={0: "node0"}))
    assert check_plan(instance, make_plan(bindings=binds("train", ["node1"], start=1))) == []
    assert kinds(check_plan(instance, make_plan(bindings=binds("train", ["node2"], start=1)))) == [
        "tier"
    ]


def test_highest_tier_name():
    spine = NetworkTopology(mode="hard", highest_tier_name="spine")  # tier 2
    instance = make_instance(simple_job("train", 2, network_topology=spine))
    assert check_plan(instance, make_plan(bindings=binds("train", ["node0", "node3"]))) == []
    assert kinds(check_plan(instance, make_plan(bindings=binds("train", ["node0", "node4"])))) == [
        "tier"
    ]
    # an unknown name drops the constraint, as Volcano does: any span is accepted
    unknown = NetworkTopology(mode="hard", highest_tier_name="galaxy")
    found = check_plan(
        make_instance(simple_job("train", 2, network_topology=unknown)),
        make_plan(bindings=binds("train", ["node0", "node7"])),
    )
    assert found == []


def test_running_pod_on_an_absent_node_counts_for_the_gang_and_lies_in_no_hypernode():
    job = simple_job("train", 3, tier=1, running={0: "gone"})
    instance = make_instance(job)
    # gang of 3: the absent pod and two new ones; the tier span looks only at node0 and node1
    assert (
        check_plan(instance, make_plan(bindings=binds("train", ["node0", "node1"], start=1))) == []
    )
    assert kinds(check_plan(instance, make_plan(bindings=binds("train", ["node0"], start=1)))) == [
        "gang"
    ]
    assert kinds(
        check_plan(instance, make_plan(bindings=binds("train", ["node1", "node2"], start=1)))
    ) == ["tier"]
    evicted = make_plan(evictions=[Binding(pod=pod("train", 0), node="gone")])
    assert kinds(check_plan(instance, evicted)) == ["unknown-node"]


def test_partitioned_job_tiers():
    instance = make_instance(partitioned_job())
    sub0, sub1 = "default/pj/worker-0", "default/pj/worker-1"
    good = make_plan(
        bindings=binds("pj", ["node0", "node1", "node2", "node3"]),
        jobs=[
            JobPlacement(
                "default/pj",
                True,
                "s4",
                subjobs=[SubJobPlacement(sub0, "s0"), SubJobPlacement(sub1, "s1")],
            )
        ],
    )
    assert check_plan(instance, good) == []
    # partition 0 across s0/s1: the SubJob's LCA is s4 (tier 2) > 1, though the job stays in s4
    split = make_plan(bindings=binds("pj", ["node1", "node2", "node0", "node3"]))
    found = check_plan(instance, split)
    assert kinds(found) == ["tier", "tier"]
    assert {v.obj for v in found} == {f"SubJob/{sub0}", f"SubJob/{sub1}"}
    # each partition inside one leaf, but the job spans s6 (tier 3) > 2
    apart = make_plan(bindings=binds("pj", ["node0", "node1", "node4", "node5"]))
    found = check_plan(instance, apart)
    assert kinds(found) == ["tier"] and found[0].obj == "Job/default/pj"


def test_reported_hypernodes_respect_the_tier_limit_and_unknown_names_are_noted():
    instance = make_instance(simple_job("train", 2, tier=1))
    bindings = binds("train", ["node0", "node1"])

    def report(hypernode):
        return check_plan(
            instance, make_plan(bindings, jobs=[JobPlacement("default/train", True, hypernode)])
        )

    assert report("s0") == []
    # a name this instance lacks (another form of the cluster): judged by the pods' nodes
    assert report("s9") == []
    assert domains_not_in(instance, make_plan(
        bindings, jobs=[JobPlacement("default/train", True, "s9")])) == ["s9"]
    assert kinds(report("s4")) == ["tier"]  # tier 2 > 1
    assert kinds(report("s1")) == ["tier"]  # does not hold node0, node1
    sub_instance = make_instance(partitioned_job())
    wrong_sub = make_plan(
        bindings=binds("pj", ["node0", "node1"]),
        jobs=[
            JobPlacement(
                "default/pj", True, "s0", subjobs=[SubJobPlacement("default/pj/worker-0", "s4")]
            )
        ],
    )
    found = check_plan(sub_instance, wrong_sub)
    assert kinds(found) == ["tier"] and found[0].obj == "SubJob/default/pj/worker-0"


# ---------------------------------------------------------------- queues


def test_queue_capability_counts_running_pods():
    queues = [Queue(name="q", capability={"cpu": 3 * CPU})]
    instance = make_instance(
        simple_job("a", 2, queue="q", running={0: "node0", 1: "node1"}),
        simple_job("b", 2, queue="q"),
        queues=queues,
    )
    assert kinds(check_plan(instance, make_plan(bindings=binds("b", ["node2", "node3"])))) == [
        "queue-capability"
    ]
    uncapped = make_instance(simple_job("b", 2, queue="q"), queues=[Queue(name="q")])
    assert check_plan(uncapped, make_plan(bindings=binds("b", ["node2", "node3"]))) == []


# ---------------------------------------------------------------- plan jobs


def test_plan_jobs_consistency():
    instance = make_instance(simple_job("train", 1), simple_job("run", 1, running={0: "node0"}))
    b = binds("train", ["node1"])
    assert kinds(
        check_plan(instance, make_plan(b, jobs=[JobPlacement("default/train", False)]))
    ) == ["plan-jobs"]
    assert kinds(check_plan(instance, make_plan(jobs=[JobPlacement("default/train", True)]))) == [
        "plan-jobs"
    ]
    assert kinds(check_plan(instance, make_plan(jobs=[JobPlacement("default/ghost", False)]))) == [
        "plan-jobs"
    ]
    ok = make_plan(b, jobs=[JobPlacement("default/train", True), JobPlacement("default/run", True)])
    assert check_plan(instance, ok) == []
    bad_sub = make_plan(
        b,
        jobs=[
            JobPlacement(
                "default/train", True, subjobs=[SubJobPlacement("default/train/x-0", None)]
            )
        ],
    )
    assert kinds(check_plan(instance, bad_sub)) == ["plan-jobs"]


# ---------------------------------------------------------------- evictions


def eviction_instance(victim_queue: str, victim_class: str) -> Instance:
    return make_instance(
        simple_job(
            "victim",
            1,
            queue=victim_queue,
            priority_class=victim_class,
            running={0: "node0"},
            cpu=4 * CPU,
        ),
        simple_job("taker", 1, queue="q1", priority_class="high", cpu=4 * CPU),
        # q2 deserves no cpu, so its running victim is over its share and may be reclaimed
        queues=[
            Queue(name="q1"),
            Queue(name="q2", deserved={"cpu": 0}),
            Queue(name="locked", reclaimable=False),
        ],
        priority_classes=[
            PriorityClass(name="low", value=1),
            PriorityClass(name="high", value=100),
        ],
    )


EVICT = make_plan(
    bindings=[Binding(pod=pod("taker", 0), node="node0", nominated=True)],
    evictions=[Binding(pod=pod("victim", 0), node="node0")],
)


@pytest.mark.parametrize(
    ("victim_queue", "victim_class", "mode", "valid"),
    [
        ("q1", "low", "preempt", True),  # same queue, lower priority
        ("q1", "low", "both", True),
        ("q1", "low", "reclaim", False),  # same queue: nothing to reclaim
        ("q1", "low", "none", False),
        ("q1", "high", "both", False),  # equal priority is not strictly lower
        ("q2", "high", "reclaim", True),  # another, reclaimable queue
        ("q2", "high", "preempt", False),
        ("locked", "low", "both", False),  # another queue, not reclaimable
    ],
)
def test_eviction_mode_decides_which_victims_may_be_evicted(
    victim_queue, victim_class, mode, valid
):
    found = check_plan(eviction_instance(victim_queue, victim_class), EVICT, eviction_mode=mode)
    assert kinds(found) == ([] if valid else ["eviction"])


def test_unknown_eviction_mode_is_refused():
    with pytest.raises(ValueError, match="eviction_mode"):
        check_plan(eviction_instance("q1", "low"), EVICT, eviction_mode="sometimes")


def test_eviction_without_bindings_is_never_justified():
    instance = eviction_instance("q1", "low")
    found = check_plan(instance, make_plan(evictions=[Binding(pod=pod("victim", 0), node="node0")]))
    assert kinds(found) == ["eviction"]


# ---------------------------------------------------------------- report


def test_format_report_lists_violations_and_counts():
    vs = [
        Violation("gang", "Job/default/a", "1 pods placed, minAvailable is 2"),
        Violation("tier", "Job/default/b", "too wide"),
    ]
    assert format_report(vs) == (
        "gang: Job/default/a: 1 pods placed, minAvailable is 2\n"
        "tier: Job/default/b: too wide\n"
        "2 violations"
    )
