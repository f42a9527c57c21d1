"""Why a pod group stays pending in kube-scheduler's words: the PodGroup status (``reason``) and
the event of the pod that found no node (``scheduler_reason``)."""

from __future__ import annotations

from typing import Any

from tests.device_cases import gpu_nodes, share
from toposolve.core.instance import Instance
from toposolve.core.problem import compile_problem
from toposolve.engines.common.filter_reasons import filter_reason, fit_error
from toposolve.engines.kube.cycle import run_kube
from toposolve.engines.kube.reasons import gang_unschedulable, placements_unavailable
from toposolve.formats.load import instance_from_bodies

KEY = "example.com/rack"


def node(name: str, rack: str, cpu: str = "4", memory: str = "16Gi",
         **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {KEY: rack}},
            "spec": spec, "status": {"allocatable": {"cpu": cpu, "memory": memory}}}


def group(pods: int, minimum: int, cpu: str = "1", memory: str = "1Gi",
          key: str | None = KEY) -> list[dict[str, Any]]:
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": minimum}}}
    if key:
        spec["schedulingConstraints"] = {"topology": [{"key": key}]}
    docs = [{"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
             "metadata": {"name": "pg", "namespace": "ns"}, "spec": spec}]
    for i in range(pods):
        requests = {"cpu": cpu, "memory": memory}
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"pg-{i}", "namespace": "ns"},
                     "spec": {"schedulingGroup": {"podGroupName": "pg"},
                              "containers": [{"name": "c", "resources": {"requests": requests}}]},
                     "status": {"phase": "Pending"}})
    return docs


def run(docs):
    instance = instance_from_bodies([(d, "t.yaml") for d in docs], "t", lambda _: None)
    a = run_kube(compile_problem(instance))
    return a.reasons.get(0), a.scheduler_reasons.get(0)


def test_the_fit_error_text():
    # FitError.Error(): the reasons counted over the nodes, sorted as strings, one period
    assert fit_error(1, {}) == "0/1 nodes are available:"
    assert fit_error(3, {"Insufficient memory": 1, "Insufficient cpu": 2}) == (
        "0/3 nodes are available: 1 Insufficient memory, 2 Insufficient cpu.")
    assert filter_reason("taint gpu=yes:NoSchedule") == "node(s) had untolerated taint {gpu: yes}"
    assert filter_reason("nodeSelector") == filter_reason("affinity") == (
        "node(s) didn't match Pod's node affinity/selector")


def test_each_node_counts_under_its_first_failing_filter():
    # one placement (no key): a is cordoned, b tainted (and short, which the taint hides),
    # c short of cpu and memory (NodeResourcesFit gives every short resource)
    taint = [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]
    docs = [node("a", "r1", unschedulable=True), node("b", "r1", cpu="1", taints=taint),
            node("c", "r1", cpu="1", memory="1Gi"), *group(1, 1, cpu="2", memory="2Gi", key=None)]
    reason, event = run(docs)
    assert event == ("0/3 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, "
                     "1 node(s) had untolerated taint {gpu: yes}, 1 node(s) were unschedulable.")
    assert reason == placements_unavailable(1, gang_unschedulable(1, 0, 0))


def test_the_event_is_the_first_missing_pod_of_the_first_placement():
    # r1 (first by name) holds two of the three pods: the third finds its node full after the
    # two before it; GangScheduling stops the run there
    docs = [node("a", "r1", cpu="2"), node("b", "r2", cpu="1"), *group(3, 3)]
    reason, event = run(docs)
    assert event == "0/1 nodes are available: 1 Insufficient cpu."
    assert reason == ("0/2 placements are available, first placement status: minCount (3) "
                      "cannot be satisfied: 2 scheduled, 0 remaining")


def test_a_run_stopped_before_its_last_pod_reports_the_pods_left():
    # minCount 3 of 4 on a node holding 1: after the third pod misses, 1 + 1 < 3
    docs = [node("a", "r1", cpu="1"), *group(4, 3)]
    reason, _ = run(docs)
    assert reason.endswith("minCount (3) cannot be satisfied: 1 scheduled, 1 remaining")


def test_a_refusal_kube_scheduler_does_not_make_has_no_event():
    # n0's pooled GPUs have room but none of its devices: the device plugin refuses it, not a
    # kube-scheduler Filter, so no FitError exists in upstream's words
    running = [share(f"r{d}", 600, running={0: "n0"}, device_use={0: {d: 600}}) for d in (0, 1)]
    instance = Instance(nodes=gpu_nodes(2, 1), jobs=[*running, share("a", 700, replicas=2)])
    a = run_kube(compile_problem(instance))
    j = next(i for i, job in enumerate(instance.jobs) if job.name == "a")
    assert j in a.reasons and j not in a.scheduler_reasons
