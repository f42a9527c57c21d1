"""NVIDIA time-slicing / MPS: nodes labelled ``nvidia.com/gpu.replicas`` advertise devices ×
replicas of ``nvidia.com/gpu``; read as devices, a pod asking ``k`` replicas takes 1/replicas
of ``k`` devices. Mixed or unlabelled clusters keep the plain count."""

from __future__ import annotations

import pytest
from scheduler_docs import kueue_docs, podset, workload, write_docs

from toposolve.check.checker import check_plan
from toposolve.core.errors import InputError
from toposolve.core.problem import compile_problem
from toposolve.formats.k8s.timeslicing import GPU, REPLICAS_LABEL, STRATEGY_LABEL
from toposolve.formats.load import load_instance
from toposolve.solve import solve_problem


def node(name: str, devices: int, replicas: int | str | None, strategy: str = "time-slicing",
         allocatable: str | None = None) -> dict:
    labels = {"kubernetes.io/hostname": name}
    if replicas is not None:
        labels |= {REPLICAS_LABEL: str(replicas), STRATEGY_LABEL: strategy,
                   "nvidia.com/gpu.count": str(devices)}
    advertised = allocatable or str(devices * (int(replicas) if str(replicas).isdigit() else 1))
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": "64", GPU: advertised}}}


def pod(name: str, gpus: int, node_name: str | None = None) -> dict:
    spec: dict = {"schedulerName": "volcano",
                  "containers": [{"name": "c", "resources": {"limits": {GPU: str(gpus)}}}]}
    if node_name is not None:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns"},
            "spec": spec, "status": {"phase": "Running" if node_name else "Pending"}}


def queue(gpus: int) -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
            "metadata": {"name": "q"}, "spec": {"capability": {GPU: str(gpus)}}}


def load(tmp_path, docs, warnings=None):
    sink = warnings.append if warnings is not None else (lambda _: None)
    return load_instance(write_docs(tmp_path, docs), warn=sink)


def shapes(instance):
    return {j.name: (t.device_share and (t.device_share.milli, t.device_share.count),
                     t.requests.get(GPU)) for j in instance.jobs for t in j.tasks}


@pytest.mark.parametrize("strategy", ["time-slicing", "mps"])
def test_replicas_are_thousandths_of_one_device(tmp_path, strategy):
    docs = [node("n0", 2, 4, strategy), node("n1", 1, 4, strategy), node("cpu", 0, None),
            pod("one", 1), pod("two", 2), queue(8)]
    instance = load(tmp_path, docs)
    assert shapes(instance) == {"one": ((250, 1), 250), "two": ((250, 2), 500)}
    assert [n.allocatable.get(GPU) for n in instance.nodes] == [2000, 1000, 0]
    assert compile_problem(instance).node_devices.tolist() == [2, 1, 0]
    # the queue's 8 replicas are 8 × 250 thousandths of a device, as the pods' requests
    assert next(q for q in instance.queues if q.name == "q").capability[GPU] == 2000


def test_a_device_holds_replicas_pods_and_no_more(tmp_path):
    docs = [node("n0", 2, 4), *[pod(f"p{i}", 1) for i in range(9)]]
    instance = load(tmp_path, docs)
    for engine in ("volcano", "kube", "cpsat"):
        plan = solve_problem(compile_problem(instance), engine)
        assert check_plan(instance, plan, eviction_mode="none") == []
        per_device = sorted(sum(1 for b in plan.bindings if b.devices == [d]) for d in (0, 1))
        assert per_device == [4, 4], engine  # 8 replicas, the ninth pod waits


def test_running_replicas_are_placed_first_fit_with_one_warning(tmp_path):
    warnings: list[str] = []
    docs = [node("n0", 2, 3), pod("r0", 1, "n0"), pod("r1", 2, "n0"), pod("new", 1)]
    instance = load(tmp_path, docs, warnings)
    use = {j.name: t.device_use for j in instance.jobs for t in j.tasks if t.device_use}
    assert use == {"r0": {0: {0: 333}}, "r1": {0: {0: 333, 1: 333}}}
    assert len([w for w in warnings if "do not say which devices" in w]) == 1


@pytest.mark.parametrize(("nodes", "words"), [
    ([node("n0", 2, 4), node("n1", 2, 2)], "as 2, 4 replicas"),
    ([node("n0", 2, 4), node("n1", 2, None)], "as 1, 4 replicas"),
    ([node("n0", 1, 334)], "not a whole share of thousandths"),
])
def test_unlike_sharing_keeps_the_plain_count_with_one_warning(tmp_path, nodes, words):
    warnings: list[str] = []
    instance = load(tmp_path, [*nodes, pod("one", 1)], warnings)
    assert shapes(instance) == {"one": (None, 1000)}
    assert instance.device_resource is None
    lines = [w for w in warnings if REPLICAS_LABEL in w]
    assert len(lines) == 1 and words in lines[0] and "plain count" in lines[0]


@pytest.mark.parametrize("labels", [(1, "time-slicing"), (4, "none"), (0, "time-slicing")])
def test_unshared_nodes_keep_the_plain_count(tmp_path, labels):
    replicas, strategy = labels
    docs = [node("n0", 2, replicas, strategy, allocatable="2"), pod("one", 1)]
    assert shapes(load(tmp_path, docs)) == {"one": (None, 1000)}


@pytest.mark.parametrize(("doc", "field", "words"), [
    (node("n0", 2, "four"), f"metadata.labels.{REPLICAS_LABEL}", "not a replica count"),
    (node("n0", 2, 4, allocatable="6"), f"status.allocatable.{GPU}", "not whole devices"),
])
def test_bad_sharing_labels_are_one_line(tmp_path, doc, field, words):
    with pytest.raises(InputError) as info:
        load(tmp_path, [doc, pod("one", 1)])
    err = info.value
    assert err.obj == "Node/n0" and err.field == field
    assert words in str(err) and "\n" not in str(err)


def test_mig_profiles_are_plain_extended_resources(tmp_path):
    mig = "nvidia.com/mig-1g.10gb"
    gpu_node = node("a100", 0, None)
    gpu_node["status"]["allocatable"] = {"cpu": "64", mig: "7"}
    pods = [pod(f"p{i}", 1) for i in range(8)]
    for p in pods:
        p["spec"]["containers"][0]["resources"] = {"limits": {mig: "1"}}
    instance = load(tmp_path, [gpu_node, *pods])
    assert instance.device_resource is None
    assert all(t.requests[mig] == 1000 for j in instance.jobs for t in j.tasks)
    plan = solve_problem(compile_problem(instance), "volcano")
    assert check_plan(instance, plan, eviction_mode="none") == []
    assert len(plan.bindings) == 7 and all(b.devices is None for b in plan.bindings)


def test_a_kueue_input_keeps_counting_replicas_with_one_warning(tmp_path):
    docs = kueue_docs(["block", "kubernetes.io/hostname"], workload([podset("main", 2)]))
    for doc in docs[:4]:  # the nodes: 2 GPUs as 4 replicas each
        doc["metadata"]["labels"] |= {REPLICAS_LABEL: "4", STRATEGY_LABEL: "time-slicing"}
        doc["status"]["allocatable"][GPU] = "8"
    docs[-1]["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"][
        "requests"][GPU] = "1"
    warnings: list[str] = []
    instance = load(tmp_path, docs, warnings)
    assert instance.device_resource is None
    assert {n.allocatable[GPU] for n in instance.nodes} == {8000}
    assert len([w for w in warnings if "Kueue's quotas count replicas" in w]) == 1
