"""The kube writer keeps what kube-scheduler's scores count (an explicit 0 vs an unset request)."""

from __future__ import annotations

from toposolve.core.instance import Instance, Job, NetworkTopology, Node, Task
from toposolve.formats.k8s.pods import SCORE_DEFAULTS
from toposolve.formats.kube.writer import kube_documents
from toposolve.formats.load import instance_from_bodies

MEM = SCORE_DEFAULTS["memory"]


def written(task: Task) -> tuple[list[dict], list[str], Task]:
    """The pods written for a one-task job, the warnings, and the task the kube reader reads."""
    inst = Instance(nodes=[Node(name="n", allocatable={"cpu": 4, "memory": "8Gi"})],
                    jobs=[Job(name="j", tasks=[task])])
    warnings: list[str] = []
    docs = kube_documents(inst, warnings.append)
    back = instance_from_bodies([(d, "w.yaml") for d in docs], "w", lambda _: None)
    return [d for d in docs if d["kind"] == "Pod"], warnings, back.jobs[0].tasks[0]


def _pod_requests(pod: dict) -> dict:
    return pod["spec"]["containers"][0]["resources"]["requests"]


def test_a_request_scored_as_zero_is_written_as_an_explicit_zero():
    pods, warnings, back = written(Task(name="t", replicas=1, requests={"cpu": 1}))
    assert _pod_requests(pods[0]) == {"cpu": "1", "memory": "0"} and not warnings
    assert back.score_requests is None and back.requests == {"cpu": 1000, "memory": 0}


def test_a_scoring_default_is_written_as_an_unset_request():
    task = Task(name="t", replicas=1, requests={"cpu": 1},
                score_requests={"cpu": 1, "memory": "200Mi"})
    pods, warnings, back = written(task)
    assert _pod_requests(pods[0]) == {"cpu": "1"} and not warnings
    assert back.score_requests == {"cpu": 1000, "memory": MEM}


def test_a_scoring_request_one_container_cannot_state_is_reported():
    task = Task(name="t", replicas=1, requests={"cpu": 1},
                score_requests={"cpu": 1, "memory": "400Mi"})  # two containers' defaults
    _, warnings, _ = written(task)
    assert warnings == ["Job/default/j: task t: its scoring requests are left out (one container "
                        "states only its requests)"]


def _composite_input():
    """Nodes in 2 zones of 2 racks of 2, and a CompositePodGroup hierarchy of 2 levels whose root
    mixes PodGroup and CompositePodGroup children."""
    from tests.fidelity.kube.objects import composite, node

    nodes = [node({"name": f"n{i}", "labels": {"zone": f"z{i // 4}", "rack": f"r{i // 2}"}})
             for i in range(8)]

    def leaf(name, pods, minimum):
        return {"name": name, "key": "rack", "policy": {"minCount": minimum},
                "pods": [{"name": f"{name}-{i}"} for i in range(pods)]}

    tree = {"name": "root", "key": "zone", "policy": {"minGroupCount": 2}, "children": [
        leaf("x", 1, 1), {"name": "mid", "policy": "basic", "children": [leaf("a", 2, 2)]},
        leaf("b", 3, 2)]}
    return [*nodes, *composite(tree)]


def _read(docs: list[dict], warnings: list[str]) -> Instance:
    return instance_from_bodies([(d, "c.yaml") for d in docs], "c", warnings.append)


def test_a_composite_hierarchy_round_trips_through_the_kube_writer():
    warnings: list[str] = []
    first = _read(_composite_input(), warnings)
    docs = kube_documents(first, warnings.append)
    back = _read(docs, warnings)
    assert not warnings
    assert [j.model_dump() for j in back.jobs] == [j.model_dump() for j in first.jobs]
    assert ([h.model_copy(update={"tier_name": None}) for h in back.hypernodes]
            == [h.model_copy(update={"tier_name": None}) for h in first.hypernodes])
    assert kube_documents(back, warnings.append) == docs  # a fixed point
    kinds = [(d["kind"], d["metadata"]["name"]) for d in docs if d["kind"] not in ("Node", "Pod")]
    assert kinds == [("Workload", "root"), ("CompositePodGroup", "root"), ("PodGroup", "x"),
                     ("CompositePodGroup", "mid"), ("PodGroup", "a"), ("PodGroup", "b")]


def test_composite_objects_follow_the_v1alpha3_types():
    docs = kube_documents(_read(_composite_input(), []), lambda _: None)
    groups = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    root, mid = groups["CompositePodGroup", "root"], groups["CompositePodGroup", "mid"]
    assert root["apiVersion"] == "scheduling.k8s.io/v1alpha3"
    assert "parentCompositePodGroupName" not in root["spec"]
    assert root["spec"]["workloadRef"] == {"workloadName": "root", "templateName": "root"}
    assert root["spec"]["schedulingPolicy"] == {"gang": {"minGroupCount": 2}}
    assert mid["spec"]["schedulingPolicy"] == {"basic": {}}
    leaf = groups["PodGroup", "a"]["spec"]
    assert leaf["parentCompositePodGroupName"] == "mid"
    assert leaf["schedulingPolicy"] == {"gang": {"minCount": 2}}
    assert len(leaf["schedulingConstraints"]["topology"]) == 1  # maxItems=1 upstream
    (template,) = groups["Workload", "root"]["spec"]["compositePodGroupTemplates"]
    assert [t["name"] for t in template["podGroupTemplates"]] == ["x", "b"]
    assert [t["name"] for t in template["compositePodGroupTemplates"]] == ["mid"]
    pods = [d for d in docs if d["kind"] == "Pod"]
    assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in pods} == {"x", "a", "b"}


def test_a_soft_constraint_in_a_hierarchy_is_reported():
    instance = _read(_composite_input(), [])
    job = instance.jobs[0]
    soft = job.gang_groups[0].network_topology.model_copy(update={"mode": "soft"})
    groups = [job.gang_groups[0].model_copy(update={"network_topology": soft}),
              *job.gang_groups[1:]]
    instance = instance.model_copy(update={"jobs": [job.model_copy(
        update={"gang_groups": groups})]})
    warnings: list[str] = []
    docs = kube_documents(instance, warnings.append)
    assert warnings == ["Job/default/root: a soft topology constraint is left out (the Workload "
                        "API has none)"]
    root = next(d for d in docs if d["kind"] == "CompositePodGroup")
    assert "schedulingConstraints" not in root["spec"]


def test_a_missing_level_is_left_out_in_one_line():
    # the kube reader skips a PodGroup whose key no node carries: not the same pending job
    inst = Instance(nodes=[Node(name="n", allocatable={"cpu": 4})],
                    jobs=[Job(name="j", tasks=[Task(name="t", replicas=1, requests={"cpu": 1})],
                              network_topology=NetworkTopology(mode="hard",
                                                               missing_level="rack"))])
    warnings: list[str] = []
    docs = kube_documents(inst, warnings.append)
    assert warnings == ["Job/default/j: the constraint naming level 'rack', which its topology "
                        "lacks, is left out (the written objects cannot hold it): the written "
                        "job is unconstrained"]
    assert all("schedulingConstraints" not in d["spec"] for d in docs if d["kind"] == "PodGroup")
