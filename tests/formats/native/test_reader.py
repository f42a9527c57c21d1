"""The native format: every feature against hand-derived expectations, every error kind, the
writer's round trip, and equivalence with the Kubernetes reader on the two-task job example."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from toposolve.core.errors import InputError
from toposolve.core.instance import (
    HyperNode,
    Instance,
    Job,
    LabelRequirement,
    LabelSelector,
    Member,
    MemberSelector,
    NetworkTopology,
    Node,
    PodConstraints,
    PriorityClass,
    Queue,
    SubGroupPolicy,
    Taint,
    Task,
    Toleration,
)
from toposolve.core.problem import compile_problem
from toposolve.formats.k8s.fields import Document
from toposolve.formats.k8s.manifests import read_manifests
from toposolve.formats.native.names import compress_names, expand_range
from toposolve.formats.native.reader import is_native, load_native
from toposolve.formats.native.writer import dump_native, instance_to_native, write_native
from toposolve.generate import generate

GPU = "nvidia.com/gpu"
GIB = 1024**3 * 1000  # milli-units


def base() -> dict:
    """10 nodes n-00..n-09; two tiers: top over 3 leaves holding 4, 4 and 2 nodes."""
    return {
        "apiVersion": "toposolve/v1",
        "kind": "Instance",
        "metadata": {"name": "t"},
        "nodeGroups": [
            {
                "name": "n-{i:02d}",
                "count": 10,
                "allocatable": {"cpu": "2", "memory": "1Gi", GPU: 8},
            },
        ],
        "topology": {
            "tierNames": {1: "leaf", 2: "spine"},
            "levels": [
                {"tier": 2, "name": "top"},
                {"tier": 1, "name": "leaf-{i}", "per": 3, "nodes": 4},
            ],
        },
        "jobs": [],
    }


def load(doc: dict) -> Instance:
    return load_native([doc], "t.yaml")


def error(doc: dict) -> InputError:
    with pytest.raises(InputError) as info:
        load(doc)
    return info.value


def members(hn: HyperNode) -> list[tuple[str, str]]:
    return [(m.type, m.selector.exact_match) for m in hn.members]


# -- nodes ------------------------------------------------------------------------------------


def test_node_groups_expand_names_quantities_labels_taints_and_cordons():
    doc = base()
    doc["nodeGroups"] = [
        {
            "name": "gpu-{i:03d}",
            "count": 3,
            "start": 7,
            "allocatable": {"cpu": "500m", "memory": "2Gi", GPU: 4},
            "labels": {"zone": "a"},
            "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}],
            "unschedulable": [1],
        },
        {"name": "odd{{x}}", "allocatable": {"cpu": 1}, "unschedulable": True},
    ]
    doc["topology"] = {}
    inst = load(doc)
    assert [n.name for n in inst.nodes] == ["gpu-007", "gpu-008", "gpu-009", "odd{x}"]
    assert inst.nodes[0].allocatable == {"cpu": 500, "memory": 2 * GIB, GPU: 4000}
    assert inst.nodes[0].labels == {"zone": "a"}
    assert inst.nodes[2].taints == [Taint(key="k", value="v", effect="NoSchedule")]
    assert [n.unschedulable for n in inst.nodes] == [False, True, False, True]
    assert inst.nodes[3].allocatable == {"cpu": 1000}


def test_is_native_recognises_the_api_version():
    assert is_native({"apiVersion": "toposolve/v1", "kind": "Instance"})
    assert not is_native({"apiVersion": "v1", "kind": "Node"})
    assert not is_native(["not", "a", "mapping"])


# -- topology ---------------------------------------------------------------------------------


def test_levels_build_a_tree_with_a_smaller_last_leaf():
    inst = load(base())
    names = [h.name for h in inst.hypernodes]
    assert names == ["top", "leaf-0", "leaf-1", "leaf-2"]
    top, l0, l1, l2 = inst.hypernodes
    assert (top.tier, top.tier_name, l0.tier, l0.tier_name) == (2, "spine", 1, "leaf")
    assert members(top) == [
        ("HyperNode", "leaf-0"),
        ("HyperNode", "leaf-1"),
        ("HyperNode", "leaf-2"),
    ]
    assert members(l0) == [("Node", f"n-0{i}") for i in range(4)]
    assert members(l2) == [("Node", "n-08"), ("Node", "n-09")]
    problem = compile_problem(inst)
    assert problem.topology.max_tier == 3  # virtual root above tier 2


def test_tier_zero_levels_and_hypernodes():
    doc = base()
    doc["topology"] = {
        "tierNames": {0: "nvl", 1: "leaf"},
        "levels": [
            {"tier": 1, "name": "leaf"},
            {"tier": 0, "name": "nvl-{i}", "per": 5, "nodes": 2},
        ],
        "hyperNodes": [{"name": "extra", "tier": 0}],
    }
    inst = load(doc)
    assert [(h.name, h.tier, h.tier_name) for h in inst.hypernodes[:2]] == [
        ("leaf", 1, "leaf"),
        ("nvl-0", 0, "nvl"),
    ]
    assert inst.hypernodes[-1].tier == 0
    assert compile_problem(inst).topology.min_tier == 0
    doc["topology"]["tierNames"] = {-1: "below"}
    assert "tiers run from 0 to 100" in str(error(doc))


def test_level_count_gives_the_last_parent_the_remainder():
    doc = base()
    doc["nodeGroups"][0]["count"] = 5
    doc["topology"]["levels"] = [
        {"tier": 3, "name": "core-{i}", "count": 2},
        {"tier": 2, "name": "sp-{i}", "per": 2, "count": 3},
        {"tier": 1, "name": "lf-{i}", "per": 2, "count": 5, "nodes": 1, "tierName": "rack"},
    ]
    inst = load(doc)
    by_name = {h.name: h for h in inst.hypernodes}
    assert members(by_name["core-0"]) == [("HyperNode", "sp-0"), ("HyperNode", "sp-1")]
    assert members(by_name["core-1"]) == [("HyperNode", "sp-2")]
    assert members(by_name["sp-2"]) == [("HyperNode", "lf-4")]
    assert members(by_name["lf-4"]) == [("Node", "n-04")]
    assert by_name["lf-0"].tier_name == "rack"
    assert by_name["core-0"].tier_name is None


def test_explicit_hypernodes_with_ranges_children_and_selectors():
    doc = base()
    doc["topology"] = {
        "tierNames": {1: "leaf"},
        "hyperNodes": [
            {"name": "a", "tier": 1, "nodes": ["n-00..n-02", "n-05"]},
            {"name": "b", "tier": 1, "members": [{"regexMatch": "^n-0[6-7]$"}]},
            {
                "name": "c",
                "tier": 1,
                "tierName": "other",
                "members": [{"labelMatch": {"matchLabels": {"x": "y"}}}],
            },
            {
                "name": "s",
                "tier": 2,
                "children": ["a", "b"],
                "members": [{"type": "HyperNode", "exactMatch": "c"}],
            },
        ],
    }
    inst = load(doc)
    a, b, c, s = inst.hypernodes
    assert members(a) == [("Node", "n-00"), ("Node", "n-01"), ("Node", "n-02"), ("Node", "n-05")]
    assert b.members[0].selector.regex_match == "^n-0[6-7]$"
    assert c.members[0].selector.label_match == LabelSelector(match_labels={"x": "y"})
    assert (a.tier_name, c.tier_name, s.tier_name) == ("leaf", "other", None)
    assert members(s) == [("HyperNode", "a"), ("HyperNode", "b"), ("HyperNode", "c")]
    topo = compile_problem(inst).topology
    assert topo.node_home.tolist()[6] == topo.index["b"]


def test_name_ranges_expand_on_their_last_number():
    assert expand_range("n-08..n-11") == ["n-08", "n-09", "n-10", "n-11"]
    assert expand_range("n8..n11") == ["n8", "n9", "n10", "n11"]
    assert expand_range("r1-x3a..r1-x5a") == ["r1-x3a", "r1-x4a", "r1-x5a"]
    assert expand_range("plain") is None
    with pytest.raises(ValueError):
        expand_range("a-1..b-3")
    with pytest.raises(ValueError):
        expand_range("n-5..n-3")
    names = ["n-08", "n-09", "n-10", "x", "n-12", "n-13", None, "y-1", "y-2", "y-3"]
    assert compress_names(names) == ["n-08..n-10", "x", "n-12", "n-13", None, "y-1..y-3"]


# -- jobs -------------------------------------------------------------------------------------


def test_job_shapes_repeat_with_names_positions_and_defaults():
    doc = base()
    doc["priorityClasses"] = [{"name": "hi", "value": 7}]
    doc["queues"] = [{"name": "q", "weight": 2, "capability": {GPU: 16}}]
    doc["jobs"] = [
        {"name": "solo", "tasks": [{"name": "w", "requests": {GPU: 1}}]},
        {
            "name": "train-{i}",
            "count": 2,
            "start": 5,
            "namespace": "ml",
            "queue": "q",
            "priorityClass": "hi",
            "networkTopology": {"mode": "soft", "highestTierName": "leaf"},
            "tasks": [{"name": "w", "replicas": 3, "requests": {GPU: 8, "cpu": "1500m"}}],
        },
    ]
    inst = load(doc)
    assert [j.key for j in inst.jobs] == ["default/solo", "ml/train-5", "ml/train-6"]
    assert [j.creation_index for j in inst.jobs] == [0, 1, 2]
    solo, t5, t6 = inst.jobs
    assert (solo.min_available, solo.queue, solo.tasks[0].replicas) == (1, "default", 1)
    assert t5.min_available == 3  # every replica, as Volcano's webhook defaults it
    assert t5.network_topology == NetworkTopology(mode="soft", highest_tier_name="leaf")
    assert t6.tasks[0].requests == {GPU: 8000, "cpu": 1500}
    assert t6.tasks[0] is not t5.tasks[0]
    assert inst.queues == [Queue(name="q", weight=2, capability={GPU: 16})]
    assert inst.priority_classes == [PriorityClass(name="hi", value=7)]
    assert inst.job_priority(t6) == 7


def test_partition_derives_the_controllers_subgroup_policy_and_min_available():
    doc = base()
    doc["jobs"] = [
        {
            "name": "p",
            "tasks": [
                {
                    "name": "a",
                    "replicas": 6,
                    "partition": {
                        "partitionSize": 3,
                        "minPartitions": 1,
                        "networkTopology": {"highestTierAllowed": 1},
                    },
                },
                {"name": "b", "replicas": 2, "minAvailable": 1},
            ],
        }
    ]
    job = load(doc).jobs[0]
    a = job.tasks[0]
    assert (
        a.partition.total_partitions,
        a.partition.partition_size,
        a.partition.min_partitions,
    ) == (2, 3, 1)
    assert job.subgroup_policies == [
        SubGroupPolicy(
            name="a",
            sub_group_size=3,
            label_selector=LabelSelector(match_labels={"volcano.sh/task-spec": "a"}),
            match_label_keys=["volcano.sh/partition-id"],
            network_topology=NetworkTopology(mode="hard", highest_tier_allowed=1),
            min_sub_groups=1,
        )
    ]
    # minPartitions × partitionSize for a, the task's minAvailable for b
    assert job.min_available == 3 + 1
    problem = compile_problem(load(doc))
    assert sorted(problem.subjobs[s].id for s in problem.jobs[0].subjobs) == [
        "default/p",
        "default/p/a-0",
        "default/p/a-1",
    ]


def test_running_pods_as_list_with_ranges_and_nulls_or_as_mapping():
    doc = base()
    doc["jobs"] = [
        {
            "name": "r",
            "tasks": [{"name": "w", "replicas": 6, "running": ["n-00..n-02", None, "n-04"]}],
        },
        {"name": "m", "tasks": [{"name": "w", "replicas": 3, "running": {2: "n-09"}}]},
    ]
    r, m = load(doc).jobs
    assert r.tasks[0].running == {0: "n-00", 1: "n-01", 2: "n-02", 4: "n-04"}
    assert m.tasks[0].running == {2: "n-09"}


def test_pod_constraints_names_and_labels():
    doc = base()
    doc["jobs"] = [
        {
            "name": "c",
            "tasks": [
                {
                    "name": "w",
                    "replicas": 2,
                    "labels": {"app": "x"},
                    "nodeSelector": {"zone": "a"},
                    "affinity": [
                        {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["h100"]}]}
                    ],
                    "tolerations": [{"key": "k", "operator": "Exists"}],
                    "podNames": ["p-0", "p-1"],
                    "podLabels": {1: {"extra": "y"}},
                }
            ],
        }
    ]
    task = load(doc).jobs[0].tasks[0]
    assert task.constraints == PodConstraints(
        node_selector={"zone": "a"},
        affinity_terms=[[LabelRequirement(key="gpu", operator="In", values=["h100"])]],
        tolerations=[Toleration(key="k", operator="Exists")],
    )
    assert task.pod_name("c", 1) == "p-1"
    assert task.labels_of(1) == {"volcano.sh/task-spec": "w", "app": "x", "extra": "y"}


def test_same_job_as_the_kubernetes_reader_for_seed_000_two_task_job():
    manifests = list(
        yaml.safe_load_all(
            Path(__file__)
            .resolve()
            .parents[3]
            .joinpath("instances", "seed000-two-task-job.yaml")
            .read_text()
        )
    )
    docs = [Document(body, "m.yaml", i) for i, body in enumerate(manifests) if body]
    from_k8s = read_manifests(docs, source="m.yaml", warn=lambda _: None)
    kube_job = next(j for j in from_k8s.jobs if j.name == "network-topology-job")
    doc = base()
    part = {"mode": "hard", "highestTierAllowed": 1}
    doc["jobs"] = [
        {
            "name": "network-topology-job",
            "minAvailable": 3,
            "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
            "tasks": [
                {
                    "name": "task0",
                    "replicas": 6,
                    "requests": {"cpu": "4"},
                    "partition": {
                        "totalPartitions": 2,
                        "partitionSize": 3,
                        "networkTopology": part,
                    },
                },
                {
                    "name": "task1",
                    "replicas": 8,
                    "requests": {"cpu": "4"},
                    "partition": {
                        "totalPartitions": 4,
                        "partitionSize": 2,
                        "networkTopology": part,
                    },
                },
            ],
        }
    ]
    native_job = load(doc).jobs[0]
    assert native_job.model_dump(exclude={"creation_index"}) == kube_job.model_dump(
        exclude={"creation_index"}
    )


# -- errors -----------------------------------------------------------------------------------


def _with(path: list, value) -> dict:
    doc = base()
    doc["jobs"] = [{"name": "j", "tasks": [{"name": "w", "replicas": 4}]}]
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return doc


ERRORS = [
    # (change, object, field, words in the message)
    (["extra"], 1, None, "extra", "unknown key"),
    (["apiVersion"], "toposolve/v2", None, "apiVersion", "unsupported"),
    (["kind"], "Cluster", None, "kind", "expected kind"),
    (["nodeGroups", 0, "colour"], "red", "nodeGroups[0]", "colour", "unknown key"),
    (
        ["nodeGroups", 0, "allocatable", "cpu"],
        "lots",
        "nodeGroups[0]",
        "allocatable.cpu",
        "quantity",
    ),
    (["nodeGroups", 0, "allocatable", "cpu"], "-1", "nodeGroups[0]", "allocatable.cpu", ""),
    (["nodeGroups", 0, "name"], "n-{j}", "nodeGroups[0]", "name", "{i}"),
    (["nodeGroups", 0, "name"], "n-{i:q}", "nodeGroups[0]", "name", "bad name pattern"),
    (["nodeGroups", 0, "name"], "same", "nodeGroups[0]", "name", "need {i}"),
    (["nodeGroups", 0, "count"], 0, "nodeGroups[0]", "count", "at least 1"),
    (["nodeGroups", 0, "unschedulable"], [10], "nodeGroups[0]", "unschedulable[0]", "outside"),
    (["topology", "levels", 1, "nodes"], 3, "topology.levels[1]", "nodes", "10 nodes"),
    (["topology", "levels", 1, "count"], 7, "topology.levels[1]", "count", "parents"),
    (["topology", "levels", 1, "tier"], 2, "topology.levels[1]", "tier", "lower"),
    (["topology", "levels", 0, "per"], 2, "topology.levels[0]", "per", "count, not per"),
    (["topology", "levels", 1, "fanout"], 2, "topology.levels[1]", "fanout", "unknown key"),
    (["topology", "tierNames"], {"one": "x"}, "Instance/t", "topology.tierNames.one", "integers"),
    (
        ["topology", "hyperNodes"],
        [{"name": "h", "tier": 1, "nodes": ["n-3..n-1"]}],
        "HyperNode/h",
        "nodes[0]",
        "backwards",
    ),
    (
        ["topology", "hyperNodes"],
        [{"name": "h", "tier": 1, "members": [{"regexMatch": "("}]}],
        "HyperNode/h",
        "members[0].regexMatch",
        "regular expression",
    ),
    (
        ["topology", "hyperNodes"],
        [{"name": "leaf-0", "tier": 1}],
        "HyperNode/leaf-0",
        "name",
        "duplicate",
    ),
    (["jobs", 0, "tasks", 0, "replicas"], -1, "Job/default/j", "tasks[0].replicas", "at least 0"),
    (
        ["jobs", 0, "tasks", 0, "requests"],
        {"cpu": "1x"},
        "Job/default/j",
        "tasks[0].requests.cpu",
        "quantity",
    ),
    (
        ["jobs", 0, "tasks", 0, "partition"],
        {"partitionSize": 3},
        "Job/default/j",
        "tasks[0].partition.partitionSize",
        "does not divide",
    ),
    (
        ["jobs", 0, "tasks", 0, "partition"],
        {"partitionSize": 2, "totalPartitions": 3},
        "Job/default/j",
        "tasks[0].partition",
        "totalPartitions",
    ),
    (
        ["jobs", 0, "tasks", 0, "running"],
        {4: "n-00"},
        "Job/default/j",
        "tasks[0].running.4",
        "out of range",
    ),
    (
        ["jobs", 0, "tasks", 0, "running"],
        ["n-00..n-04"],
        "Job/default/j",
        "tasks[0].running",
        "lists 5 pods",
    ),
    (["jobs", 0, "tasks", 0, "partiton"], {}, "Job/default/j", "tasks[0].partiton", "unknown key"),
    (["jobs", 0, "minAvailable"], 5, "Job/default/j", "minAvailable", "exceeds"),
    (
        ["jobs", 0, "networkTopology"],
        {"mode": "strict"},
        "Job/default/j",
        "networkTopology.mode",
        "unknown mode",
    ),
    (["jobs", 0, "count"], 2, "Job/default/j", "name", "need {i}"),
    (
        ["jobs", 0, "tasks", 0, "affinity"],
        [{"matchExpressions": []}],
        "Job/default/j",
        "tasks[0].affinity[0]",
        "empty term",
    ),
]


@pytest.mark.parametrize(("path", "value", "obj", "field", "words"), ERRORS)
def test_bad_input_is_one_located_line(path, value, obj, field, words):
    err = error(_with(path, value))
    assert err.file == "t.yaml"
    assert err.obj == (obj or "Instance/t")
    assert err.field == field
    assert words in err.message
    assert "\n" not in str(err) and str(err).startswith("t.yaml: ")


def test_duplicate_names_and_document_count():
    doc = base()
    doc["nodeGroups"].append({"name": "n-09", "allocatable": {}})
    err = error(doc)
    assert (err.obj, err.field) == ("nodeGroups[1]", "name")
    doc = base()
    doc["jobs"] = [
        {"name": "j", "tasks": []},
        {"name": "j-{i}", "count": 1, "start": 0, "tasks": []},
        {"name": "j", "tasks": []},
    ]
    err = error(doc)
    assert (err.obj, err.field) == ("Job/default/j", "name")
    with pytest.raises(InputError, match="exactly one YAML document"):
        load_native([base(), base()], "t.yaml")
    doc = base()
    doc["queues"] = [{"name": "q"}, {"name": "q"}]
    assert error(doc).obj == "Queue/q"


# -- writer -----------------------------------------------------------------------------------


def _same(a: Instance, b: Instance) -> None:
    assert a.model_dump(exclude={"source"}) == b.model_dump(exclude={"source"})


def odd_instance() -> Instance:
    """Everything the compact forms cannot say, so the writer must fall back on literal forms."""
    sel = LabelSelector(
        match_labels={"x": "1"}, match_expressions=[LabelRequirement(key="y", operator="Exists")]
    )
    nodes = [
        Node(name="a-1", allocatable={"cpu": 4, GPU: 8}),
        Node(name="a-2", allocatable={"cpu": 4, GPU: 8}, unschedulable=True),
        Node(name="a-3", allocatable={"cpu": 4, GPU: 8}),
        Node(name="b", labels={"x": "1", "y": "2"}, allocatable={"memory": "1536m"}),
        Node(
            name="a-5", allocatable={"cpu": 4, GPU: 8}, taints=[Taint(key="t", effect="NoExecute")]
        ),
        Node(name="c-09", allocatable={"cpu": "1m"}),
        Node(name="c-10", allocatable={"cpu": "1m"}),
    ]
    hypernodes = [
        HyperNode(
            name="r",
            tier=1,
            tier_name="rack",
            members=[
                Member(selector=MemberSelector(regex_match="^a-[12]$")),
                Member.exact("a-3"),
            ],
        ),
        HyperNode(name="l", tier=1, members=[Member(selector=MemberSelector(label_match=sel))]),
        HyperNode(
            name="top",
            tier=3,
            tier_name="top",
            members=[
                Member.exact("r", "HyperNode"),
                Member.exact("l", "HyperNode"),
                Member.exact("c-09"),
            ],
        ),
    ]
    jobs = [
        Job(
            name="pg",
            namespace="ns",
            min_available=0,
            queue="q",
            creation_index=3,
            subgroup_policies=[
                SubGroupPolicy(
                    name="g", label_selector=sel, match_label_keys=["k"], min_sub_groups=1
                )
            ],
            min_task_member={"w": 1},
            tasks=[
                Task(
                    name="w",
                    replicas=3,
                    requests={"cpu": "1m"},
                    pod_names=["x", "y", "z"],
                    pod_labels={2: {"k": "v"}},
                    running={1: "a-3"},
                    constraints=PodConstraints(tolerations=[Toleration(operator="Exists")]),
                )
            ],
        ),
        Job(
            name="vj",
            min_available=5,
            priority_class="p",
            creation_index=0,
            tasks=[
                Task(name="t", replicas=5, min_available=2, running={0: "a-1", 1: "a-1", 2: "a-3"})
            ],
        ),
        Job(name="empty", min_available=0, creation_index=1),
    ]
    return Instance(
        nodes=nodes,
        hypernodes=hypernodes,
        jobs=jobs,
        queues=[Queue(name="q", reclaimable=False, parent="team")],
        priority_classes=[PriorityClass(name="p", value=-3, global_default=True)],
    )


def test_writer_round_trips_literal_forms(tmp_path):
    inst = odd_instance()
    doc = instance_to_native(inst)
    _same(load_native([copy.deepcopy(doc)], "x"), inst)
    write_native(inst, tmp_path / "odd.yaml")
    _same(load_native([yaml.safe_load((tmp_path / "odd.yaml").read_text())], "x"), inst)


@pytest.mark.parametrize(
    ("preset", "options"),
    [
        ("superpod", {"nodes": 128, "occupancy": 0.5, "cordoned": 0.05, "jobs": 20}),
        ("nvl72", {"nodes": 144, "occupancy": 0.3}),
        ("alibaba", {"nodes": 120, "occupancy": 0.3, "load": 0.3}),
        ("usecase-npu", {"pods": 96, "partition_size": 24, "hccs_size": 48, "roce_size": 2}),
    ],
)
def test_writer_round_trips_generated_instances(preset, options):
    inst = generate(preset, **options)
    text = dump_native(instance_to_native(inst))
    _same(load_native([yaml.safe_load(text)], "x"), inst)
    # the explicit form groups nodes: a generated homogeneous cluster is one or a few groups
    assert len(instance_to_native(inst)["nodeGroups"]) <= 20


def test_a_gang_tree_deeper_than_two_levels_is_refused_by_the_writers_not_flattened(tmp_path):
    from builders import example1_tree, hard, instance, nested, nodes

    from toposolve.formats.volcano.writer import write_manifests

    inst = instance(nodes(8), example1_tree(), [nested("t", {"A": ["a0"]}, group_topology=hard(2))])
    for write in (write_native, write_manifests):
        with pytest.raises(InputError, match="gang hierarchy deeper than job → SubJob") as err:
            write(inst, tmp_path / "out.yaml")
        assert "\n" not in str(err.value) and "Job/default/t" in str(err.value)


def test_the_kueue_topology_name_survives_the_native_form(tmp_path):
    """Kueue's reason names the Topology (issue 23 §2): converting a Kueue dump to the native
    format keeps it (topologyName), so the reason is the same from either form."""
    from pathlib import Path

    from toposolve.formats.load import load_instance
    from toposolve.formats.native.writer import write_native

    dump = Path(__file__).resolve().parents[3] / "instances" / "kueue-gke.yaml"
    inst = load_instance(dump, warn=lambda _: None)
    write_native(inst, tmp_path / "native.yaml")
    back = load_instance(tmp_path / "native.yaml", warn=lambda _: None)
    assert [j.topology_name for j in back.jobs] == [j.topology_name for j in inst.jobs]
    assert {j.topology_name for j in inst.jobs} == {"default"}


def test_score_requests_are_read_and_written_back():
    doc = base()
    doc["jobs"] = [{"name": "j", "tasks": [
        {"name": "t", "replicas": 2, "requests": {"cpu": "1"},
         "scoreRequests": {"cpu": "1", "memory": "200Mi"}},
        {"name": "u", "replicas": 1, "requests": {"cpu": "1"}}]}]
    inst = load(doc)
    scored, plain = inst.jobs[0].tasks
    assert scored.score_requests == {"cpu": 1000, "memory": 200 * 2**20 * 1000}
    assert plain.score_requests is None
    tasks = instance_to_native(inst)["jobs"][0]["tasks"]
    assert tasks[0]["scoreRequests"] == {"cpu": 1, "memory": "200Mi"}
    assert "scoreRequests" not in tasks[1]
    assert load(instance_to_native(inst)) == inst


def test_a_bad_score_request_names_the_field():
    doc = base()
    doc["jobs"] = [{"name": "j", "tasks": [{"name": "t", "replicas": 1,
                                            "scoreRequests": {"memory": "lots"}}]}]
    assert "scoreRequests.memory" in str(error(doc))
