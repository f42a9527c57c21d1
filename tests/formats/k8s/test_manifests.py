"""Manifest reader and loader: every feature and error kind, expectations from Volcano's rules
and Kubernetes' documented rules."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from builders import hard, partitioned

from toposolve.core.errors import InputError
from toposolve.core.instance import (
    LabelRequirement,
    LabelSelector,
    MemberSelector,
    NetworkTopology,
    SubGroupPolicy,
    Taint,
    Toleration,
)
from toposolve.core.problem import compile_problem
from toposolve.formats import load_instance

INSTANCES = Path(__file__).resolve().parents[3] / "instances"
GPU = "nvidia.com/gpu"


def load(tmp_path: Path, text: str, name: str = "in.yaml", **kwargs):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return load_instance(path, **kwargs)


def load_error(tmp_path: Path, text: str, name: str = "in.yaml") -> str:
    with pytest.raises(InputError) as info:
        load(tmp_path, text, name)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{tmp_path / name}: ")  # every error names the file
    return message


def vc_job(tasks: str, spec: str = "", name: str = "a") -> str:
    """A Volcano Job manifest; ``tasks`` and ``spec`` are YAML at the indentation used below."""
    return f"""
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: {name}}}
spec:
{textwrap.indent(textwrap.dedent(spec), "  ")}
  tasks:
{textwrap.indent(textwrap.dedent(tasks), "  ")}
"""


ONE_TASK = """
- name: w
  replicas: 2
  template:
    spec:
      containers: [{name: c, resources: {requests: {cpu: "1"}}}]
"""


# -- Nodes, HyperNodes, Queues, PriorityClasses ----------------------------------------------


def test_node_labels_allocatable_cordon_and_taints_are_read(tmp_path):
    inst = load(
        tmp_path,
        """
        apiVersion: v1
        kind: Node
        metadata: {name: n0, labels: {zone: a}}
        spec:
          unschedulable: true
          taints: [{key: gpu, value: "yes", effect: NoSchedule}, {key: spot, effect: NoExecute}]
        status:
          capacity: {cpu: "8"}
          allocatable: {cpu: 7500m, memory: 1Ki, nvidia.com/gpu: 8}
        ---
        apiVersion: v1
        kind: Node
        metadata: {name: n1}
        status: {capacity: {cpu: "2"}}
        """,
    )
    n0, n1 = inst.nodes
    assert n0.name == "n0" and n0.labels == {"zone": "a"}
    assert n0.allocatable == {"cpu": 7500, "memory": 1_024_000, GPU: 8000}
    assert n0.unschedulable is True
    assert n0.taints == [
        Taint(key="gpu", value="yes", effect="NoSchedule"),
        Taint(key="spot", value="", effect="NoExecute"),
    ]
    # no allocatable: capacity is used
    assert n1.allocatable == {"cpu": 2000} and n1.unschedulable is False


def test_hypernode_selectors_and_tiers(tmp_path):
    inst = load(
        tmp_path,
        """
        apiVersion: topology.volcano.sh/v1alpha1
        kind: HyperNode
        metadata: {name: leaf}
        spec:
          tier: "1"
          tierName: rack
          members:
          - selector: {exactMatch: {name: n0}}
          - type: Node
            selector: {regexMatch: {pattern: "^n[12]$"}}
          - selector:
              labelMatch:
                matchLabels: {rack: r1}
                matchExpressions: [{key: zone, operator: NotIn, values: [b]}]
        ---
        apiVersion: topology.volcano.sh/v1alpha1
        kind: HyperNode
        metadata: {name: top}
        spec:
          tier: 2
          members: [{type: HyperNode, selector: {exactMatch: {name: leaf}}}]
        """,
    )
    leaf, top = inst.hypernodes
    assert (leaf.tier, leaf.tier_name, top.tier, top.tier_name) == (1, "rack", 2, None)
    assert [m.type for m in leaf.members] == ["Node", "Node", "Node"]
    assert leaf.members[0].selector == MemberSelector(exact_match="n0")
    assert leaf.members[1].selector == MemberSelector(regex_match="^n[12]$")
    assert leaf.members[2].selector == MemberSelector(
        label_match=LabelSelector(
            match_labels={"rack": "r1"},
            match_expressions=[LabelRequirement(key="zone", operator="NotIn", values=["b"])],
        )
    )
    assert top.members[0].type == "HyperNode"
    assert top.members[0].selector == MemberSelector(exact_match="leaf")


@pytest.mark.parametrize(
    ("selector", "found"),
    [
        ("{}", "found none"),
        ("{exactMatch: {name: a}, regexMatch: {pattern: b}}", "exactMatch and regexMatch"),
    ],
)
def test_hypernode_member_needs_exactly_one_selector(tmp_path, selector, found):
    message = load_error(
        tmp_path,
        f"""
        apiVersion: topology.volcano.sh/v1alpha1
        kind: HyperNode
        metadata: {{name: s0}}
        spec:
          tier: 1
          members: [{{selector: {{exactMatch: {{name: n0}}}}}}, {{selector: {selector}}}]
        """,
    )
    assert message.startswith(f"{tmp_path / 'in.yaml'}: HyperNode/s0: spec.members[1].selector: ")
    assert found in message


def test_seed_style_member_gets_a_hint(tmp_path):
    message = load_error(
        tmp_path,
        """
        apiVersion: topology.volcano.sh/v1alpha1
        kind: HyperNode
        metadata: {name: s0}
        spec: {tier: 1, members: [{name: node0}]}
        """,
    )
    assert "spec.members[0].selector" in message and "selector.exactMatch.name" in message


def test_hypernode_tier_errors(tmp_path):
    base = "apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: s0}\n"
    assert "HyperNode/s0: spec.tier: is required" in load_error(tmp_path, base + "spec: {}\n")
    assert "spec.tier: expected an integer, got 'one'" in load_error(
        tmp_path, base + "spec: {tier: one}\n"
    )
    assert "spec.tier: must be at least 0" in load_error(tmp_path, base + "spec: {tier: -1}\n")
    # Volcano's CRD says minimum 0: tier-0 HyperNodes (NVLink domains below the leaf) load
    assert (
        load(tmp_path, base + "spec: {tier: 0, members: [{selector: {exactMatch: {name: n}}}]}\n")
        .hypernodes[0]
        .tier
        == 0
    )
    message = load_error(
        tmp_path,
        base + "spec: {tier: 1, members: [{type: Rack, selector: {exactMatch: {name: x}}}]}\n",
    )
    assert "spec.members[0].type: unknown member type 'Rack'" in message


def test_queue_and_priority_class(tmp_path):
    inst = load(
        tmp_path,
        """
        apiVersion: scheduling.volcano.sh/v1beta1
        kind: Queue
        metadata: {name: q}
        spec:
          weight: 3
          priority: 5
          reclaimable: false
          capability: {cpu: "10"}
          deserved: {cpu: "4"}
          guarantee: {resource: {cpu: "2", nvidia.com/gpu: "1"}}
        ---
        apiVersion: scheduling.volcano.sh/v1beta1
        kind: Queue
        metadata: {name: default}
        ---
        apiVersion: scheduling.k8s.io/v1
        kind: PriorityClass
        metadata: {name: high}
        value: 1000
        globalDefault: true
        ---
        apiVersion: scheduling.k8s.io/v1
        kind: PriorityClass
        metadata: {name: low}
        value: -5
        """,
    )
    q, default = inst.queues
    assert (q.weight, q.priority, q.reclaimable) == (3, 5, False)
    assert q.capability == {"cpu": 10_000} and q.deserved == {"cpu": 4000}
    assert q.guarantee == {"cpu": 2000, GPU: 1000}
    # Volcano's defaults: weight 1, reclaimable true
    assert (default.weight, default.reclaimable, default.capability) == (1, True, {})
    high, low = inst.priority_classes
    assert (high.name, high.value, high.global_default) == ("high", 1000, True)
    assert (low.value, low.global_default) == (-5, False)


def test_queue_parent_is_read_with_one_warning(tmp_path):
    warnings: list[str] = []
    queue = (
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {{name: {0}}}\n"
        "spec: {{parent: {1}}}\n---\n"
    )
    text = (
        queue.format("team", "root") + queue.format("train", "team") + queue.format("infer", "team")
    )
    inst = load(tmp_path, text, warn=warnings.append)
    assert [(q.name, q.parent) for q in inst.queues] == [
        ("team", "root"),
        ("train", "team"),
        ("infer", "team"),
    ]
    assert warnings == [
        f"{tmp_path / 'in.yaml'}: Queue/train: spec.parent: 2 queue(s) have a parent queue; "
        "toposolve shows the "
        "hierarchy but applies capability, deserved shares and reclaim to each queue alone "
        "(proportion plugin, "
        "not the capacity plugin's hierarchy)"
    ]
    assert (
        load(tmp_path, queue.format("team", "root"), warn=warnings.append).queues[0].parent
        == "root"
    )
    assert len(warnings) == 1  # children of root only: a flat hierarchy, nothing to say


def test_priority_class_needs_value(tmp_path):
    message = load_error(
        tmp_path, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: p}\n"
    )
    assert message.endswith("PriorityClass/p: value: is required")


# -- Volcano Jobs ------------------------------------------------------------------------------


def test_volcano_job_defaults(tmp_path):
    inst = load(
        tmp_path,
        vc_job(
            """
            - replicas: 2
              template:
                metadata: {labels: {role: ps}}
                spec:
                  containers: [{name: c, resources: {requests: {cpu: 500m}}}]
            - name: worker
              replicas: 3
              minAvailable: 1
              template: {spec: {containers: [{name: c}]}}
            """,
            "priorityClassName: high\nnetworkTopology: {highestTierAllowed: 2}",
        ),
    )
    (job,) = inst.jobs
    assert (job.namespace, job.name, job.queue, job.priority_class) == (
        "default",
        "a",
        "default",
        "high",
    )
    # webhook default: sum over tasks of (task minAvailable, else replicas) = 2 + 1
    assert job.min_available == 3
    assert job.network_topology == NetworkTopology(mode="hard", highest_tier_allowed=2)
    ps, worker = job.tasks
    assert (ps.name, ps.replicas, ps.min_available) == ("default0", 2, None)
    assert ps.requests == {"cpu": 500} and ps.labels == {"role": "ps"}
    assert (worker.name, worker.min_available, worker.requests) == ("worker", 1, {})
    assert job.subgroup_policies == [] and all(t.partition is None for t in job.tasks)


def test_seed000_partitioned_job_maps_to_subgroup_policy():
    """Seed 000 'Job management' job: the controller's subGroupPolicy mapping, built by hand."""
    inst = load_instance(INSTANCES / "seed000-partitioned-job.yaml")
    (job,) = inst.jobs
    expected = partitioned(
        "network-topology-job",
        partitions=2,
        size=4,
        job_topology=hard(2),
        partition_topology=hard(1),
        min_available=4,
        requests={"cpu": 4},
    )
    assert job.model_dump(exclude={"creation_index"}) == expected.model_dump(
        exclude={"creation_index"}
    )


def test_seed000_two_task_job_policies():
    """Seed 000 'Volcano Job Controller': the PodGroup's subGroupPolicy list, field by field."""
    (job,) = load_instance(INSTANCES / "seed000-two-task-job.yaml").jobs
    assert job.min_available == 3
    assert job.network_topology == NetworkTopology(mode="hard", highest_tier_allowed=2)
    assert job.subgroup_policies == [
        SubGroupPolicy(
            name=task,
            sub_group_size=size,
            label_selector=LabelSelector(match_labels={"volcano.sh/task-spec": task}),
            match_label_keys=["volcano.sh/partition-id"],
            network_topology=NetworkTopology(mode="hard", highest_tier_allowed=1),
        )
        for task, size in (("task0", 3), ("task1", 2))
    ]
    # pod labels as the controller sets them: task0-3..5 are partition 1
    task0 = job.tasks[0]
    assert [task0.labels_of(i)["volcano.sh/partition-id"] for i in range(6)] == ["0"] * 3 + [
        "1"
    ] * 3


def test_min_partitions_feed_min_sub_groups_and_default_min_available(tmp_path):
    (job,) = load(
        tmp_path,
        vc_job(
            """
            - name: t
              replicas: 6
              partitionPolicy: {totalPartitions: 3, partitionSize: 2, minPartitions: 2}
              template: {spec: {containers: [{name: c}]}}
            """,
            "queue: research",
        ),
    ).jobs
    assert job.queue == "research"
    assert job.subgroup_policies[0].min_sub_groups == 2
    assert job.tasks[0].partition.min_partitions == 2
    # mutate_job.go: a task without minAvailable counts minPartitions × partitionSize
    assert job.min_available == 4


def test_highest_tier_name(tmp_path):
    (job,) = load(
        tmp_path, vc_job(ONE_TASK, "networkTopology: {mode: soft, highestTierName: leaf}")
    ).jobs
    assert job.network_topology == NetworkTopology(mode="soft", highest_tier_name="leaf")


HYPERNODE_RACK = """
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: r0}
spec: {tier: 1, tierName: rack, members: [{selector: {exactMatch: {name: n0}}}]}
---
"""


def test_unknown_highest_tier_name_loads_with_one_warning_per_spec(tmp_path):
    warnings: list[str] = []
    tasks = """
    - name: w
      replicas: 4
      partitionPolicy: {totalPartitions: 2, partitionSize: 2,
                        networkTopology: {mode: hard, highestTierName: nvl}}
    """
    text = HYPERNODE_RACK + vc_job(tasks, "networkTopology: {mode: hard, highestTierName: spine}")
    (job,) = load(tmp_path, text, warn=warnings.append).jobs
    assert job.network_topology == NetworkTopology(
        mode="hard", highest_tier_name="spine"
    )  # kept as written
    file = tmp_path / "in.yaml"
    assert warnings == [
        f"{file}: Job/default/a: spec.networkTopology.highestTierName: no HyperNode has tierName "
        "'spine' "
        "(known: rack); the constraint is dropped, as Volcano does",
        f"{file}: Job/default/a: spec.tasks[0].partitionPolicy.networkTopology.highestTierName: no "
        "HyperNode "
        "has tierName 'nvl' (known: rack); the constraint is dropped, as Volcano does",
    ]


@pytest.mark.parametrize(
    ("spec", "tasks", "field", "words"),
    [
        (
            "networkTopology: {highestTierAllowed: 1, highestTierName: leaf}",
            ONE_TASK,
            "spec.networkTopology",
            "cannot both be set",
        ),
        (
            "networkTopology: {mode: Hard}",
            ONE_TASK,
            "spec.networkTopology.mode",
            "unknown mode 'Hard'",
        ),
        (
            "minAvailable: 3",
            ONE_TASK,
            "spec.minAvailable",
            "minAvailable (3) exceeds the job's replicas (2)",
        ),
        (
            "",
            "- {name: w, replicas: 2, minAvailable: 5, template: {spec: {containers: []}}}",
            "spec.tasks[0].minAvailable",
            "exceeds replicas (2)",
        ),
        (
            "",
            "- {name: w, replicas: 8, partitionPolicy: {totalPartitions: 3, partitionSize: 2}}",
            "spec.tasks[0].partitionPolicy",
            "replicas (8) must equal totalPartitions × partitionSize (3 × 2)",
        ),
        (
            "",
            "- {name: w, replicas: 4, partitionPolicy: {totalPartitions: 2, partitionSize: 2, "
            "minPartitions: 3}}",
            "spec.tasks[0].partitionPolicy.minPartitions",
            "exceeds totalPartitions",
        ),
        (
            "",
            "- {name: w, replicas: 4, partitionPolicy: {totalPartitions: 2, partitionSize: 2, "
            "networkTopology: {mode: hard, highestTierAllowed: 1, highestTierName: x}}}",
            "spec.tasks[0].partitionPolicy.networkTopology",
            "cannot both be set",
        ),
        (
            "",
            "- {name: w, replicas: 1}\n- {name: w, replicas: 1}",
            "spec.tasks[1].name",
            "duplicate task name 'w'",
        ),
        ("", "- {name: w, replicas: -1}", "spec.tasks[0].replicas", "must be at least 0"),
    ],
)
def test_volcano_job_contradictions(tmp_path, spec, tasks, field, words):
    message = load_error(tmp_path, vc_job(tasks, spec))
    assert message.startswith(f"{tmp_path / 'in.yaml'}: Job/default/a: {field}: "), message
    assert words in message


def test_volcano_job_needs_tasks(tmp_path):
    text = ("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: a}\nspec: "
            "{minAvailable: 1}\n")
    assert "Job/default/a: spec.tasks: a Volcano Job needs at least one task" in load_error(
        tmp_path, text
    )


def test_bad_quantity_names_the_field(tmp_path):
    tasks = """
    - name: w
      replicas: 1
      template:
        spec:
          containers: [{name: c, resources: {requests: {cpu: 4 cores}}}]
    """
    message = load_error(tmp_path, vc_job(tasks))
    assert message.startswith(
        f"{tmp_path / 'in.yaml'}: Job/default/a: "
        "spec.tasks[0].template.spec.containers[0].resources.requests.cpu: "
        "'4 cores' is not a Kubernetes quantity"
    )


def test_volcano_job_pods_mark_running_indexes(tmp_path):
    pods = "".join(
        f"""
---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  labels: {{volcano.sh/job-name: a, volcano.sh/task-spec: w}}
  annotations: {{volcano.sh/task-index: "{annotated}"}}
spec: {{nodeName: {node}, containers: []}}
status: {{phase: {phase}}}
"""
        for name, annotated, node, phase in (
            ("a-w-1", "", "n1", "Running"),
            ("renamed", "0", "n0", "Running"),
            ("a-w-0-old", "0", "n5", "Failed"),  # finished pods are ignored
        )
    )
    (job,) = load(tmp_path, vc_job(ONE_TASK) + pods).jobs
    assert job.tasks[0].running == {0: "n0", 1: "n1"}


def test_volcano_job_pod_errors(tmp_path):
    pod = """
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, labels: {labels}}}
spec: {{nodeName: n0, containers: []}}
"""
    no_task = load_error(
        tmp_path, vc_job(ONE_TASK) + pod.format(name="a-w-0", labels="{volcano.sh/job-name: a}")
    )
    assert (
        "Pod/default/a-w-0: metadata.labels.volcano.sh/task-spec: pod of Job/default/a has no"
        in no_task
    )
    bad_index = load_error(
        tmp_path,
        vc_job(ONE_TASK)
        + pod.format(name="a-w-7", labels="{volcano.sh/job-name: a, volcano.sh/task-spec: w}"),
    )
    assert "Pod/default/a-w-7: metadata.name: cannot tell which of the 2 pods" in bad_index
    # '²' passes str.isdigit() but is no index (int() fails on it; Go's Atoi too)
    superscript = load_error(
        tmp_path,
        vc_job(ONE_TASK)
        + pod.format(name="a-w-²", labels="{volcano.sh/job-name: a, volcano.sh/task-spec: w}"),
    )
    assert "Pod/default/a-w-²: metadata.name: cannot tell which of the 2 pods" in superscript


def test_volcano_jobs_own_podgroup_is_skipped(tmp_path):
    warnings: list[str] = []
    text = (
        vc_job(ONE_TASK)
        + """
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: a-6f1c
  ownerReferences: [{apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: a, uid: 6f1c}]
spec: {minMember: 2}
---
apiVersion: v1
kind: Pod
metadata:
  name: a-w-1
  annotations: {scheduling.k8s.io/group-name: a-6f1c}
  labels: {volcano.sh/task-spec: w}
spec: {nodeName: n3, containers: []}
"""
    )
    inst = load(tmp_path, text, warn=warnings.append)
    assert [j.name for j in inst.jobs] == ["a"]
    assert inst.jobs[0].tasks[0].running == {1: "n3"}
    assert warnings == [
        f"{tmp_path / 'in.yaml'}: PodGroup/default/a-6f1c: skipped (created for Job/default/a, "
        "which is read instead)",
        f"{tmp_path / 'in.yaml'}: Pod/default/a-w-1: spec.nodeName: node 'n3' is not in the input; "
        "its 1 running "
        "pod(s) (default/a-w-1) count toward their gangs and use no capacity",
    ]


# -- PodGroups and Pods ------------------------------------------------------------------------


def pod(
    name: str, *, group: str | None = "pg", labels: str = "{}", spec: str = "", extra: str = ""
) -> str:
    annotations = f"{{scheduling.k8s.io/group-name: {group}}}" if group else "{}"
    return f"""
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: ns, labels: {labels}, annotations: {annotations}}}
spec:
  containers: [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]
{textwrap.indent(textwrap.dedent(spec), "  ")}
{extra}
"""


PODGROUP = """
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg, namespace: ns}
spec:
  minMember: 3
  minTaskMember: {worker: 2}
  queue: q
  priorityClassName: high
  networkTopology: {mode: hard, highestTierAllowed: 2}
  subGroupPolicy:
  - name: dp
    subGroupSize: 2
    labelSelector: {matchLabels: {volcano.sh/task-spec: worker}}
    matchLabelKeys: [dp]
    networkTopology: {highestTierAllowed: 1}
    minSubGroups: 1
"""


def test_podgroup_pods_become_tasks(tmp_path):
    text = PODGROUP + "".join(
        [
            pod(
                "w-0", labels="{volcano.sh/task-spec: worker, app: x, dp: '0'}", spec="nodeName: n0"
            ),
            pod("w-1", labels="{volcano.sh/task-spec: worker, app: x, dp: '0'}"),
            pod("w-2", labels="{volcano.sh/task-spec: worker, app: x, dp: '1'}"),
            pod(
                "done", labels="{volcano.sh/task-spec: worker}", extra="status: {phase: Succeeded}"
            ),
            pod("helper", labels="{app: x}"),  # no task-spec label: role "pod"
            pod(
                "w-big",
                labels="{volcano.sh/task-spec: worker, app: x}",
                spec="nodeSelector: {gpu: 'true'}",
            ),
        ]
    )
    (job,) = load(tmp_path, text).jobs
    # the Succeeded worker is ready already: minMember 3 and minTaskMember 2 shrink by one
    assert (job.namespace, job.name, job.min_available, job.queue, job.priority_class) == (
        "ns",
        "pg",
        2,
        "q",
        "high",
    )
    assert job.min_task_member == {"worker": 1}
    assert job.network_topology == NetworkTopology(mode="hard", highest_tier_allowed=2)
    assert job.subgroup_policies == [
        SubGroupPolicy(
            name="dp",
            sub_group_size=2,
            label_selector=LabelSelector(match_labels={"volcano.sh/task-spec": "worker"}),
            match_label_keys=["dp"],
            network_topology=NetworkTopology(mode="hard", highest_tier_allowed=1),
            min_sub_groups=1,
        )
    ]
    workers, helper, big = job.tasks
    assert (workers.name, workers.replicas, workers.pod_names) == (
        "worker",
        3,
        ["w-0", "w-1", "w-2"],
    )
    assert workers.labels == {"app": "x"}
    assert workers.pod_labels == {0: {"dp": "0"}, 1: {"dp": "0"}, 2: {"dp": "1"}}
    assert workers.running == {0: "n0"} and workers.requests == {"cpu": 1000}
    assert workers.labels_of(2) == {"volcano.sh/task-spec": "worker", "app": "x", "dp": "1"}
    assert (helper.name, helper.pod_names, helper.labels) == ("pod", ["helper"], {"app": "x"})
    # same role, different predicates: a task of its own, named apart, the role kept
    assert (big.name, big.role_name, big.pod_names, big.constraints.node_selector) == (
        "worker-2",
        "worker",
        ["w-big"],
        {"gpu": "true"},
    )


def test_podgroup_min_member_beyond_pods(tmp_path):
    message = load_error(tmp_path, PODGROUP + pod("w-0"))
    assert (
        "PodGroup/ns/pg: spec.minMember: minMember (3) exceeds the PodGroup's pods in the input (1)"
        in message
    )


def test_pods_without_known_podgroup_are_one_pod_jobs(tmp_path):
    text = "".join(
        [
            pod(
                "solo",
                group=None,
                spec="nodeName: n2\npriorityClassName: high",
                extra="",
            ).replace("annotations: {}", "annotations: {scheduling.volcano.sh/queue-name: q2}"),
            pod("orphan", group="missing-pg"),
        ]
    )
    solo, orphan = load(tmp_path, text).jobs
    assert (solo.key, solo.min_available, solo.queue, solo.priority_class) == (
        "ns/solo",
        1,
        "q2",
        "high",
    )
    assert solo.tasks[0].running == {0: "n2"} and solo.tasks[0].pod_names == ["solo"]
    assert (orphan.key, orphan.min_available, orphan.queue) == ("ns/orphan", 1, "default")
    assert orphan.tasks[0].running == {}
    # the running one-pod job takes capacity on its node
    problem = compile_problem(
        load(
            tmp_path,
            text
            + "---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\nstatus: {allocatable: {cpu: "
              "'4'}}\n"
            + "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: "
              "high}\nvalue: 1\n",
        )
    )
    assert problem.used[0, problem.resource_index["cpu"]] == 1000


# Volcano's TestBuildPodGroupFromPodWithNetworkTopology (pkg/controllers/podgroup/
# pg_controller_test.go @ ed72c7c8) as data: annotations -> (mode, highestTierAllowed), warnings
@pytest.mark.parametrize(
    ("annotations", "expected", "warning"),
    [
        (
            {
                "volcano.sh/network-topology-mode": "hard",
                "volcano.sh/network-topology-highest-tier": "2",
            },
            ("hard", 2),
            None,
        ),
        ({"volcano.sh/network-topology-mode": "soft"}, ("soft", None), None),  # no default tier
        ({"volcano.sh/network-topology-highest-tier": "1"}, ("hard", 1), None),
        ({}, None, None),
        (
            {
                "volcano.sh/network-topology-mode": "invalid",
                "volcano.sh/network-topology-highest-tier": "3",
            },
            ("hard", 3),
            "volcano.sh/network-topology-mode: unknown mode 'invalid'; hard is used, as Volcano "
            "does",
        ),
        ({"volcano.sh/network-topology-mode": "Soft"}, ("soft", None), None),  # lower-cased
        (
            {"volcano.sh/network-topology-highest-tier": "two"},
            ("hard", None),
            "volcano.sh/network-topology-highest-tier: 'two' is not a tier; left unset, as Volcano "
            "does",
        ),
    ],
)
def test_pod_annotation_topology_of_a_shadow_podgroup(tmp_path, annotations, expected, warning):
    warnings: list[str] = []
    text = pod("solo", group=None).replace(
        "annotations: {}", f"annotations: {json.dumps(annotations)}"
    )
    (job,) = load(tmp_path, text, warn=warnings.append).jobs
    spec = job.network_topology
    assert (None if spec is None else (spec.mode, spec.highest_tier_allowed)) == expected
    assert warnings == (
        [f"{tmp_path / 'in.yaml'}: Pod/ns/solo: metadata.annotations.{warning}"] if warning else []
    )


def test_podgroup_spec_wins_over_pod_annotations(tmp_path):
    # the scheduler reads the PodGroup; the annotations only matter where the controller builds it
    annotated = pod("p0", group="pg", extra="").replace(
        "annotations: {", "annotations: {volcano.sh/network-topology-highest-tier: '1', "
    )
    text = PODGROUP + annotated
    (job,) = load(
        tmp_path,
        text.replace("minMember: 3", "minMember: 1").replace("minTaskMember: {worker: 2}", ""),
    ).jobs
    assert job.network_topology == NetworkTopology(mode="hard", highest_tier_allowed=2)


def test_finished_objects_are_skipped(tmp_path):
    """What a real dump holds besides the work to place: finished jobs and their leftovers."""
    done_job = vc_job(ONE_TASK, name="done") + "status: {state: {phase: Completed}}\n"
    text = (
        done_job
        + "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: done-w-0\n"
        + "  labels: {volcano.sh/job-name: done, volcano.sh/task-spec: w}\n"
        + "spec: {nodeName: n0, containers: []}\nstatus: {phase: Running}\n"
        + "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
        + "metadata: {name: old, namespace: ns}\nspec: {minMember: 1}\nstatus: {phase: Completed}\n"
        + "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
        + "metadata: {name: early, namespace: ns}\nspec: {minMember: 2}\n"
        + pod("old-0", group="old", spec="nodeName: n1")
    )
    warnings: list[str] = []
    inst = load(tmp_path, text, warn=warnings.append)
    assert inst.jobs == []
    path = tmp_path / "in.yaml"
    assert warnings == [
        f"{path}: Job/default/done: skipped (job phase Completed)",
        f"{path}: PodGroup/ns/old: skipped (PodGroup phase Completed)",
        f"{path}: PodGroup/ns/early: skipped (minMember 2 but no live pod in the input)",
    ]


def test_pending_pod_of_another_scheduler_is_skipped(tmp_path):
    warnings: list[str] = []
    text = pod("kube", group=None, spec="schedulerName: default-scheduler") + pod(
        "kube-running", group=None, spec="schedulerName: default-scheduler\nnodeName: n0"
    )
    inst = load(tmp_path, text, warn=warnings.append)
    assert [j.name for j in inst.jobs] == ["kube-running"]
    assert (
        warnings[0]
        == f"{tmp_path / 'in.yaml'}: Pod/ns/kube: skipped (pending pod of scheduler "
           "'default-scheduler')"
    )
    assert len(warnings) == 2 and "node 'n0' is not in the input" in warnings[1]


# -- pod specs ---------------------------------------------------------------------------------


def test_effective_requests_follow_kubernetes(tmp_path):
    spec = """
    overhead: {cpu: 100m}
    initContainers:
    - {name: setup, resources: {requests: {cpu: "3", memory: 1Gi}}}
    - {name: proxy, restartPolicy: Always, resources: {requests: {cpu: 500m}}}
    - {name: late-init, resources: {requests: {cpu: "2"}}}
    containers:
    - {name: a, resources: {requests: {cpu: "1"}, limits: {cpu: "2", memory: 2Gi}}}
    - {name: b, resources: {limits: {nvidia.com/gpu: "8"}}}
    """
    text = f"""
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
{textwrap.indent(textwrap.dedent(spec), "  ")}
"""
    (job,) = load(tmp_path, text).jobs
    # cpu: containers 1 + sidecar 0.5 = 1.5; init peaks: setup 3, late-init 2 + sidecar 0.5 = 2.5
    #      → max(1.5, 3) = 3, plus overhead 0.1
    # memory: container a requests its limit 2Gi (> setup's 1Gi); gpu: limit stands for request
    assert job.tasks[0].requests == {"cpu": 3100, "memory": 2 * 1024**3 * 1000, GPU: 8000}


def test_predicates_from_pod_spec(tmp_path):
    spec = """
    nodeSelector: {disk: ssd}
    tolerations:
    - {key: gpu, operator: Exists, effect: NoSchedule}
    - {operator: Exists}
    - {key: k, value: v}
    affinity:
      nodeAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - {key: zone, operator: In, values: [a, b]}
            - {key: size, operator: Gt, values: ["3"]}
          - matchExpressions: [{key: spare, operator: Exists}]
        preferredDuringSchedulingIgnoredDuringExecution:
        - {weight: 1, preference: {matchExpressions: [{key: x, operator: Exists}]}}
    """
    (job,) = load(
        tmp_path,
        vc_job(
            "- name: w\n  replicas: 1\n  template:\n    "
            f"spec:\n{textwrap.indent(textwrap.dedent(spec), '      ')}"
        ),
    ).jobs
    c = job.tasks[0].constraints
    assert c.node_selector == {"disk": "ssd"}
    assert c.tolerations == [
        Toleration(key="gpu", operator="Exists", effect="NoSchedule"),
        Toleration(operator="Exists"),
        Toleration(key="k", operator="Equal", value="v"),
    ]
    assert c.affinity_terms == [
        [
            LabelRequirement(key="zone", operator="In", values=["a", "b"]),
            LabelRequirement(key="size", operator="Gt", values=["3"]),
        ],
        [LabelRequirement(key="spare", operator="Exists")],
    ]


def test_match_fields_on_the_node_name_pin_a_daemonset_pod(tmp_path):
    """DaemonSet pods carry ``matchFields: metadata.name``; it must load and pin the node."""
    docs = """
apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {cpu: "4"}}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4"}}
---
apiVersion: v1
kind: Pod
metadata: {name: exporter-abc, namespace: monitoring}
spec:
  containers: [{name: c, resources: {requests: {cpu: "1"}}}]
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchFields: [{key: metadata.name, operator: In, values: [n1]}]
"""
    path = tmp_path / "ds.yaml"
    path.write_text(docs)
    instance = load_instance(path)
    problem = compile_problem(instance)
    assert problem.group_feasible[0].tolist() == [False, True]
    from toposolve.check.checker import check_plan
    from toposolve.core.plan import Binding, Plan

    wrong = Plan(engine="hand", status="x", bindings=[Binding("monitoring/exporter-abc", "n0")])
    right = Plan(engine="hand", status="x", bindings=[Binding("monitoring/exporter-abc", "n1")])
    assert [v.kind for v in check_plan(instance, wrong)] == ["predicate"]
    assert check_plan(instance, right) == []


def test_match_fields_on_another_field_is_rejected(tmp_path):
    spec = """
    affinity:
      nodeAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchFields: [{key: metadata.uid, operator: In, values: [x]}]
    """
    tasks = (f"- name: w\n  replicas: 1\n  template:\n    "
             f"spec:\n{textwrap.indent(textwrap.dedent(spec), '      ')}")
    message = load_error(tmp_path, vc_job(tasks))
    assert "nodeSelectorTerms[0].matchFields[0].key" in message and "only metadata.name" in message


@pytest.mark.parametrize(
    ("spec", "field", "words"),
    [
        (
            "tolerations: [{key: a, operator: Maybe}]",
            "spec.tolerations[0].operator",
            "'Equal' or 'Exists'",
        ),
        ("nodeSelector: {gpu: true}", "spec.nodeSelector.gpu", "expected a string, got True"),
        (
            "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
            "{nodeSelectorTerms: [{matchExpressions: [{key: a, operator: In}]}]}}}",
            "nodeSelectorTerms[0].matchExpressions[0]",
            "operator In needs values",
        ),
        (
            "containers: [{name: c, resources: {requests: {memory: -1Gi}}}]",
            "requests.memory",
            "-1Gi",
        ),
    ],
)
def test_pod_spec_errors(tmp_path, spec, field, words):
    text = f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: ns}}\nspec: {{{spec}}}\n"
    message = load_error(tmp_path, text)
    assert message.startswith(f"{tmp_path / 'in.yaml'}: Pod/ns/p: "), message
    assert field in message and words in message, message


def test_node_taint_effect_error_names_field(tmp_path):
    text = ("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec: {taints: [{key: a, effect: "
            "Sometimes}]}\n")
    assert "Node/n: spec.taints[0].effect: " in load_error(tmp_path, text)


# -- names, ordering ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "obj"),
    [
        (
            "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n---\napiVersion: v1\nkind: "
            "Node\nmetadata: {name: n}\n",
            "Node/n",
        ),
        (vc_job(ONE_TASK) + "---" + vc_job(ONE_TASK), "Job/default/a"),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n---\napiVersion: v1\nkind: "
            "Pod\nmetadata: {name: p}\n",
            "Pod/default/p",
        ),
        (
            vc_job(ONE_TASK, name="x")
            + "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: "
              "x}\n",
            "PodGroup/default/x",
        ),
    ],
)
def test_duplicate_names_are_errors_naming_the_object(tmp_path, text, obj):
    message = load_error(tmp_path, text)
    assert f": {obj}: metadata.name: " in message


def test_creation_index_by_timestamp_then_appearance(tmp_path):
    def pg(name: str, created: str | None) -> str:
        stamp = f", creationTimestamp: '{created}'" if created else ""
        return (f"---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: "
                f"{{name: {name}{stamp}}}\n")

    inst = load(
        tmp_path,
        pg("late", "2024-05-01T00:00:00Z")
        + pg("none1", None)
        + pg("early", "2024-01-01T00:00:00+00:00")
        + pg("tie", "2024-05-01T00:00:00Z")
        + pg("none2", None),
    )
    assert [j.name for j in inst.jobs] == ["late", "none1", "early", "tie", "none2"]
    ranks = {j.name: j.creation_index for j in inst.jobs}
    assert ranks == {"early": 0, "late": 1, "tie": 2, "none1": 3, "none2": 4}


def test_a_non_rfc3339_creation_timestamp_is_an_error(tmp_path):
    text = ("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g, "
            "creationTimestamp: yesterday}\n")
    assert (
        "PodGroup/default/g: metadata.creationTimestamp: 'yesterday' is not an RFC 3339"
        in load_error(tmp_path, text)
    )


# -- loading -----------------------------------------------------------------------------------


NODE_LIST = """
apiVersion: v1
kind: List
metadata: {resourceVersion: ""}
items:
- {apiVersion: v1, kind: Node, metadata: {name: n0}}
- {apiVersion: v1, kind: Node, metadata: {name: n1}}
"""


def test_kubectl_list_dumps_read_as_their_items(tmp_path):
    typed = """
    apiVersion: topology.volcano.sh/v1alpha1
    kind: HyperNodeList
    items:
    - metadata: {name: s0}
      spec: {tier: 1, members: [{selector: {exactMatch: {name: n0}}}]}
    """
    (tmp_path / "nodes.yaml").write_text(NODE_LIST)
    (tmp_path / "hn.yaml").write_text(textwrap.dedent(typed))
    inst = load_instance([tmp_path / "nodes.yaml", tmp_path / "hn.yaml"])
    assert [n.name for n in inst.nodes] == ["n0", "n1"]
    assert [h.name for h in inst.hypernodes] == ["s0"]
    assert inst.source == f"{tmp_path / 'nodes.yaml'}, {tmp_path / 'hn.yaml'}"


def test_a_json_node_list_reads_as_its_items(tmp_path):
    dump = {"apiVersion": "v1", "kind": "NodeList", "items": [{"metadata": {"name": "j0"}}]}
    inst = load(tmp_path, json.dumps(dump), name="nodes.json")
    assert [n.name for n in inst.nodes] == ["j0"]


def test_directory_loading_is_recursive_and_sorted(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "x.yml").write_text("apiVersion: v1\nkind: Node\nmetadata: {name: from-b}\n")
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: Node\nmetadata: {name: from-a}\n")
    (tmp_path / "c.json").write_text(
        '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "from-c"}}'
    )
    (tmp_path / "notes.txt").write_text("not an input")
    inst = load_instance(tmp_path)
    assert [n.name for n in inst.nodes] == ["from-a", "from-b", "from-c"]
    assert inst.source == str(tmp_path)


def test_unknown_kinds_are_skipped_with_one_line_each(tmp_path, caplog):
    text = """
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: cfg, namespace: kube-system}
    ---
    apiVersion: batch/v1
    kind: Job
    metadata: {name: plain}
    ---
    apiVersion: v1
    kind: Node
    metadata: {name: n0}
    """
    warnings: list[str] = []
    inst = load(tmp_path, text, warn=warnings.append)
    path = tmp_path / "in.yaml"
    assert warnings == [
        f"{path}: ConfigMap/kube-system/cfg: skipped (kind not used by toposolve)",
        f"{path}: Job/plain: skipped (kind not used by toposolve)",
    ]
    assert [n.name for n in inst.nodes] == ["n0"] and inst.jobs == []
    with caplog.at_level("WARNING", logger="toposolve"):
        load(tmp_path, text)  # default: warnings of the toposolve logger
    assert [r.getMessage() for r in caplog.records] == warnings


def test_malformed_yaml_names_file_and_line(tmp_path):
    message = load_error(tmp_path, "apiVersion: v1\nkind: Node\nmetadata:\n  name: [n0\n")
    assert message.startswith(f"{tmp_path / 'in.yaml'}: invalid YAML at line ")
    bad_json = load_error(tmp_path, '{\n  "kind": "Node",\n  oops\n}', name="x.json")
    assert bad_json.startswith(f"{tmp_path / 'x.json'}: invalid JSON at line 3")


def test_missing_file_and_non_objects(tmp_path):
    with pytest.raises(InputError, match="no such file or directory"):
        load_instance(tmp_path / "nope.yaml")
    assert "document 2 is not a mapping" in load_error(
        tmp_path, "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\n- x\n"
    )
    assert "kind is missing" in load_error(tmp_path, "apiVersion: v1\nmetadata: {name: a}\n")


def test_native_and_manifests_do_not_mix(tmp_path):
    message = load_error(tmp_path, "apiVersion: toposolve/v1\nkind: Instance\n---\n" + NODE_LIST)
    assert "cannot mix the native format" in message and "List" in message


def test_native_documents_go_to_the_native_reader(tmp_path, monkeypatch):
    seen = {}

    def fake_load_native(docs, source):
        seen["docs"], seen["source"] = docs, source
        from toposolve.core.instance import Instance

        return Instance()

    monkeypatch.setattr("toposolve.formats.load.load_native", fake_load_native)
    inst = load(
        tmp_path,
        "apiVersion: toposolve/v1\nkind: Cluster\n---\napiVersion: toposolve/v1\nkind: Jobs\n",
    )
    assert [d["kind"] for d in seen["docs"]] == ["Cluster", "Jobs"]
    assert inst.source == str(tmp_path / "in.yaml")


# -- the instance files ------------------------------------------------------------------------

INSTANCE_FILES = sorted(INSTANCES.glob("seed*.yaml"))  # the manifest-format files


def test_every_seed_file_is_present():
    assert {p.name for p in INSTANCE_FILES} >= {
        "seed000-example1.yaml",
        "seed000-example2.yaml",
        "seed000-partitioned-job.yaml",
        "seed000-two-task-job.yaml",
        "seed001-stories.yaml",
        "seed004-tree.yaml",
    }


@pytest.mark.parametrize("path", INSTANCE_FILES, ids=lambda p: p.name)
def test_instance_files_load_and_compile(path):
    warnings: list[str] = []
    inst = load_instance(path, warn=warnings.append)
    problem = compile_problem(inst)
    assert warnings == []
    assert problem.n_nodes == len(inst.nodes) > 0
    assert path.read_text().startswith("# Seed ")


def members_of(problem, hypernode: str) -> list[str]:
    topo = problem.topology
    row = problem.topology.members[topo.index[hypernode]].toarray().ravel()
    return [topo.node_names[i] for i in range(len(row)) if row[i]]


def test_example1_tree_matches_seed():
    problem = compile_problem(load_instance(INSTANCES / "seed000-example1.yaml"))
    assert members_of(problem, "s0") == ["node0", "node1"]
    assert members_of(problem, "s5") == ["node4", "node5", "node6", "node7"]
    assert members_of(problem, "s6") == [f"node{i}" for i in range(8)]
    tier = {name: int(problem.topology.tier[i]) for i, name in enumerate(problem.topology.names)}
    assert (tier["s3"], tier["s4"], tier["s6"]) == (1, 2, 3)
    gpu = problem.resource_index[GPU]
    assert set(problem.allocatable[:, gpu].tolist()) == {8000}


def test_example2_tree_matches_seed():
    problem = compile_problem(load_instance(INSTANCES / "seed000-example2.yaml"))
    assert members_of(problem, "nvlink-network0") == ["node1", "node2"]
    assert members_of(problem, "roce-network1") == ["node5", "node6", "node7", "node8"]


def test_seed001_selectors_pick_the_story_units():
    inst = load_instance(INSTANCES / "seed001-stories.yaml")
    problem = compile_problem(inst)
    for k in range(6):
        assert members_of(problem, f"unit{k}") == [f"node{2 * k}", f"node{2 * k + 1}"]
    assert members_of(problem, "leaf0") == ["node0", "node1", "node2", "node3"]
    assert len(members_of(problem, "spine0")) == 12
    (job,) = inst.jobs
    assert (job.min_available, job.priority_class, inst.job_priority(job)) == (
        4,
        "best-effort",
        100,
    )
    assert job.network_topology == NetworkTopology(mode="hard", highest_tier_allowed=2)
    assert job.tasks[0].pod_names == [f"pod-1-{i}" for i in range(4)]
    assert job.tasks[0].requests == {GPU: 8000}  # from limits


def test_seed004_running_pods_use_capacity():
    inst = load_instance(INSTANCES / "seed004-tree.yaml")
    problem = compile_problem(inst)
    gpu, cpu = problem.resource_index[GPU], problem.resource_index["cpu"]
    idx = problem.node_index
    assert problem.used[idx["node-0"], gpu] == 4000 and problem.used[idx["node-1"], cpu] == 8000
    assert problem.used[idx["node-5"], cpu] == 500
    assert problem.used[idx["node-3"]].sum() == 0
    jobs = {j.name: j for j in inst.jobs}
    assert jobs["soft-train"].network_topology == NetworkTopology(mode="soft")
    assert jobs["etl"].network_topology is None
    assert jobs["inference"].network_topology.highest_tier_name == "rack"
    # the node-exporter pod is the oldest object
    assert jobs["node-exporter-7xk2p"].creation_index == 0
    assert problem.group_feasible[:, idx["node-7"]].tolist() == [
        problem.group_task[g] == "server" for g in range(len(problem.group_task))
    ]


def test_pod_priority_class_is_kept_only_where_it_differs_from_the_job(tmp_path):
    docs = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 1
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: tf}
spec:
  minAvailable: 2
  priorityClassName: low
  tasks:
  - name: ps
    replicas: 1
    template: {spec: {priorityClassName: high,
                      containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
  - name: worker
    replicas: 1
    template: {spec: {priorityClassName: low,
                      containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
"""
    path = tmp_path / "tf.yaml"
    path.write_text(docs)
    (job,) = load_instance(path).jobs
    assert [t.constraints.priority_class for t in job.tasks] == ["high", None]


def test_podgroup_min_resources_are_read_and_written_back(tmp_path):
    from toposolve.formats.volcano.writer import write_manifests

    docs = """
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg}
spec: {minMember: 1, minResources: {cpu: "8", nvidia.com/gpu: "16"}}
---
apiVersion: v1
kind: Pod
metadata: {name: pg-0, annotations: {scheduling.k8s.io/group-name: pg}}
spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
"""
    path = tmp_path / "pg.yaml"
    path.write_text(docs)
    (job,) = load_instance(path).jobs
    assert job.min_resources == {"cpu": 8000, "nvidia.com/gpu": 16000}
    again = tmp_path / "again.yaml"
    write_manifests(load_instance(path), again)
    assert load_instance(again).jobs[0].min_resources == job.min_resources


def test_subgroup_policy_label_selector_beside_match_label_keys(tmp_path):
    # Volcano's getSubJobMatchValues: the labelSelector picks the pods, matchLabelKeys split them
    podgroup = """
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg, namespace: ns}
spec:
  minMember: 5
  subGroupPolicy:
  - name: workers
    subGroupSize: 2
    labelSelector: {matchExpressions: [{key: role, operator: In, values: [worker]}]}
    matchLabelKeys: [group]
    networkTopology: {mode: hard, highestTierAllowed: 1}
"""
    pods = [pod(f"w-{i}", labels=f"{{role: worker, group: g{i // 2}}}") for i in range(4)]
    pods.append(pod("ps-0", labels="{role: ps, group: g0}"))  # the selector leaves it out
    problem = compile_problem(load(tmp_path, podgroup + "".join(pods)))
    by_pod = {
        name: problem.subjobs[problem.group_subjob[g]].id for name, g in problem.pod_group.items()
    }
    assert by_pod == {
        "ns/w-0": "ns/pg/workers-g0",
        "ns/w-1": "ns/pg/workers-g0",
        "ns/w-2": "ns/pg/workers-g1",
        "ns/w-3": "ns/pg/workers-g1",
        "ns/ps-0": "ns/pg",
    }
