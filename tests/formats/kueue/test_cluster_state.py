"""What restricts nodes in a Kueue dump: readiness, cordons, flavor node labels, taints and
tolerations, required node affinity, and pods of no Workload — read, compiled, and respected by
every engine (the checker verifies each plan on its own)."""

from __future__ import annotations

import pytest
import yaml

import toposolve
from toposolve.core.problem import compile_problem
from toposolve.formats.load import load_instance
from toposolve.formats.native.reader import load_native
from toposolve.formats.native.writer import instance_to_native
from toposolve.formats.write import write_scheduler_form

GROUP = "kueue.x-k8s.io/v1beta2"
HOST = "kubernetes.io/hostname"


def _node(name, *, zone="a", ready="True", unschedulable=False, taints=(), labels=None):
    spec = {"unschedulable": True} if unschedulable else {}
    if taints:
        spec["taints"] = list(taints)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"block": "b0", HOST: name, "zone": zone, **(labels or {})},
        },
        "spec": spec,
        "status": {
            "allocatable": {"cpu": "4", "pods": "10"},
            "conditions": [{"type": "Ready", "status": ready}],
        },
    }


GPU_TAINT = {"key": "gpu", "value": "present", "effect": "NoSchedule"}
NODES = [
    _node("n0", taints=[GPU_TAINT]),  # tainted
    _node("n1", ready="Unknown"),  # NotReady
    _node("n2", unschedulable=True),  # cordoned
    _node("n3", zone="b"),  # outside the flavor
    _node("n4", labels={"disk": "ssd"}),
    _node("n5"),  # a bound pod of no Workload holds 3 of its 4 cpu
]


def _pod(name, node=None, cpu="3"):
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ops"},
        "spec": spec,
        "status": {"phase": "Running" if node else "Pending"},
    }


def _docs(pod_spec):
    podset = {
        "name": "main",
        "count": 2,
        "topologyRequest": {"required": "block"},
        "template": {
            "spec": {
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}],
                **pod_spec,
            }
        },
    }
    return [
        *NODES,
        {
            "apiVersion": GROUP,
            "kind": "Topology",
            "metadata": {"name": "t"},
            "spec": {"levels": [{"nodeLabel": "block"}, {"nodeLabel": HOST}]},
        },
        {
            "apiVersion": GROUP,
            "kind": "ResourceFlavor",
            "metadata": {"name": "f"},
            "spec": {"topologyName": "t", "nodeLabels": {"zone": "a"}},
        },
        {
            "apiVersion": GROUP,
            "kind": "ClusterQueue",
            "metadata": {"name": "cq"},
            "spec": {
                "resourceGroups": [
                    {"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": []}]}
                ]
            },
        },
        {
            "apiVersion": GROUP,
            "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": "default"},
            "spec": {"clusterQueue": "cq"},
        },
        {
            "apiVersion": GROUP,
            "kind": "Workload",
            "metadata": {"name": "w", "namespace": "default"},
            "spec": {"queueName": "lq", "podSets": [podset]},
        },
        _pod("daemon", "n5"),
        _pod("stray"),
    ]


def _load(tmp_path, pod_spec=None, warnings=None):
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump_all(_docs(pod_spec or {})))
    return load_instance(path, warn=(warnings.append if warnings is not None else lambda _: None))


def test_readiness_cordons_flavor_labels_and_foreign_pods_are_read(tmp_path):
    warnings: list[str] = []
    inst = _load(tmp_path, warnings=warnings)
    unschedulable = {n.name for n in inst.nodes if n.unschedulable}
    assert unschedulable == {"n1", "n2"}  # Ready Unknown reads as unschedulable, as a cordon does
    (workload,) = [j for j in inst.jobs if j.name == "w"]
    assert workload.node_pool == {"zone": "a"}
    assert workload.tasks[0].constraints.node_selector == {"zone": "a"}
    jobs = {j.key for j in inst.jobs}
    assert (
        "ops/daemon" in jobs and "ops/stray" not in jobs
    )  # bound: holds capacity; pending: not Kueue's
    assert any("ops/stray" in w and "not Kueue's to place" in w for w in warnings)
    problem = compile_problem(inst)
    (g,) = problem.jobs[next(cj.index for cj in problem.jobs if cj.key == "default/w")].groups
    feasible = {problem.topology.node_names[n] for n in problem.group_feasible[g].nonzero()[0]}
    assert feasible == {"n4", "n5"}  # not tainted n0, not n1/n2, not n3 outside the pool


@pytest.mark.parametrize(
    ("pod_spec", "allowed"),
    [
        ({}, {"n4"}),  # n5 holds 1 free cpu only
        ({"tolerations": [{"key": "gpu", "operator": "Exists"}]}, {"n0", "n4"}),
        (
            {
                "tolerations": [{"key": "gpu", "operator": "Exists"}],
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "disk", "operator": "DoesNotExist"}]}
                            ]
                        }
                    }
                },
            },
            {"n0"},
        ),
    ],
)
@pytest.mark.parametrize("engine", ["volcano", "kueue", "kai", "cpsat"])
def test_every_engine_places_only_where_the_predicates_allow(tmp_path, pod_spec, allowed, engine):
    inst = _load(tmp_path, pod_spec)
    plan = toposolve.solve(inst, engine=engine, time_limit=5)  # checked: a violation raises
    used = {b.node for b in plan.bindings if b.pod.startswith("default/w-")}
    assert used and used <= allowed


def test_kueue_reports_no_domain_when_the_flavor_holds_no_node(tmp_path):
    docs = _docs({})
    docs[len(NODES) + 1]["spec"]["nodeLabels"] = {"zone": "c"}
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    plan = toposolve.solve(load_instance(path, warn=lambda _: None), engine="kueue")
    assert plan.bindings == [] or all(not b.pod.startswith("default/w-") for b in plan.bindings)
    assert "no topology domains at level: block" in str(plan.jobs)


PREFERRED = {
    "affinity": {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 10,
                    "preference": {
                        "matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]
                    },
                },
                {
                    "weight": 5,
                    "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]},
                },
            ]
        }
    }
}


def test_preferred_node_affinity_is_read_scored_and_written_back(tmp_path):
    inst = _load(tmp_path, PREFERRED)
    (workload,) = [j for j in inst.jobs if j.name == "w"]
    terms = workload.tasks[0].constraints.preferred_affinity
    assert [(t.weight, t.requirements[0].key) for t in terms] == [(10, "disk"), (5, "zone")]
    problem = compile_problem(inst)
    (g,) = problem.jobs[next(cj.index for cj in problem.jobs if cj.key == "default/w")].groups
    score = dict(
        zip(problem.topology.node_names, problem.group_preference[g].tolist(), strict=True)
    )
    assert score == {"n0": 5, "n1": 5, "n2": 5, "n3": 5, "n4": 15, "n5": 5}
    native = load_native([instance_to_native(inst)], "native")
    assert [j for j in native.jobs if j.name == "w"][0].tasks[
        0
    ].constraints.preferred_affinity == terms
    path = tmp_path / "kueue.yaml"
    write_scheduler_form(inst, "kueue", str(path), warn=lambda _: None)
    back = load_instance(path, warn=lambda _: None)
    assert [j for j in back.jobs if j.name == "w"][0].tasks[
        0
    ].constraints.preferred_affinity == terms


def test_node_pools_survive_the_native_and_kueue_writers(tmp_path):
    inst = _load(tmp_path)
    native = load_native([instance_to_native(inst)], "native")
    assert [j for j in native.jobs if j.name == "w"][0].node_pool == {"zone": "a"}
    path = tmp_path / "kueue.yaml"
    write_scheduler_form(inst, "kueue", str(path), warn=lambda _: None)
    back = load_instance(path, warn=lambda _: None)
    assert [j for j in back.jobs if j.name == "w"][0].node_pool == {"zone": "a"}


def _replacement_docs(owners):
    def node(name, block, cpu, ready="True"):
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {"block": block, HOST: name}},
            "status": {
                "allocatable": {"cpu": cpu, "pods": "10"},
                "conditions": [{"type": "Ready", "status": ready}],
            },
        }

    podset = {
        "name": "main",
        "count": 2,
        "topologyRequest": {"required": "block"},
        "template": {
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]}
        },
    }
    assignment = {
        "name": "main",
        "count": 2,
        "topologyAssignment": {
            "levels": [HOST],
            "domains": [{"values": ["m0"], "count": 1}, {"values": ["m1"], "count": 1}],
        },
    }
    return [
        node("m0", "b0", "6"),
        node("m1", "b0", "2", ready="False"),
        node("m2", "b1", "2"),
        {
            "apiVersion": GROUP,
            "kind": "Topology",
            "metadata": {"name": "t"},
            "spec": {"levels": [{"nodeLabel": "block"}, {"nodeLabel": HOST}]},
        },
        {
            "apiVersion": GROUP,
            "kind": "ResourceFlavor",
            "metadata": {"name": "f"},
            "spec": {"topologyName": "t"},
        },
        {
            "apiVersion": GROUP,
            "kind": "ClusterQueue",
            "metadata": {"name": "cq"},
            "spec": {
                "resourceGroups": [
                    {"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": []}]}
                ]
            },
        },
        {
            "apiVersion": GROUP,
            "kind": "Workload",
            "metadata": {"name": "r", "namespace": "default", "ownerReferences": owners},
            "spec": {"queueName": "lq", "podSets": [podset]},
            "status": {
                "admission": {"clusterQueue": "cq", "podSetAssignments": [assignment]},
                "unhealthyNodes": [{"name": "m1"}],
            },
        },
    ]


def _read(tmp_path, docs):
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return load_instance(path, warn=lambda _: None)


def test_pods_on_an_unhealthy_node_are_replaced_inside_the_required_domain(tmp_path):
    inst = _read(
        tmp_path,
        _replacement_docs([{"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "u"}]),
    )
    (job,) = inst.jobs
    assert job.tasks[0].running == {0: "m0"}  # the pod on m1 is pending again
    for engine in ("kueue", "volcano", "kai", "cpsat"):
        plan = toposolve.solve(
            inst, engine=engine, time_limit=5
        )  # checked: the job stays in one block
        assert [b.node for b in plan.bindings] == ["m0"], engine  # m2 (block b1) is the tighter fit


def test_a_workload_owned_by_one_pod_keeps_its_unhealthy_node(tmp_path):
    inst = _read(
        tmp_path, _replacement_docs([{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u"}])
    )
    assert inst.jobs[0].tasks[0].running == {0: "m0", 1: "m1"}
