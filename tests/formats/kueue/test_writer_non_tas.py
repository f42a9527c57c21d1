"""The Kueue writer on jobs Kueue admits without TAS: a flat instance (no HyperNode tree) is
written with a ResourceFlavor without ``topologyName`` and no Topology, and a ClusterQueue of
TAS and non-TAS workloads lists both flavors, so read → write → read gives the same instance and
the same ``kueue`` plan."""

from __future__ import annotations

import copy

import pytest
import yaml
from scheduler_docs import kueue_docs, podset, workload, write_docs

import toposolve
from toposolve.check.checker import check_plan
from toposolve.formats.kueue.writer import kueue_documents
from toposolve.formats.load import instance_from_bodies, load_instance

NODE = {"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": "8", "pods": "110"}


def round_trip(inst):
    warnings: list[str] = []
    docs = kueue_documents(inst, warnings.append)
    back = instance_from_bodies([(d, "w.yaml") for d in docs], "w", warnings.append)
    return docs, back, warnings


def of_kind(docs, kind):
    return [d for d in docs if d["kind"] == kind]


def kueue_plan(inst):
    plan = toposolve.solve(inst, "kueue")
    assert plan.engine == "kueue"
    assert check_plan(inst, plan, eviction_mode="none") == []
    return (sorted((b.pod, b.node) for b in plan.bindings),
            sorted((e.job, e.placed, e.reason) for e in plan.jobs))


def flat(tmp_path, jobs):
    """A native instance of four 8-GPU nodes, no topology, one queue capped at 28 GPUs."""
    doc = {"apiVersion": "toposolve/v1", "kind": "Instance", "metadata": {"name": "flat"},
           "nodeGroups": [{"name": "n{i}", "count": 4, "allocatable": NODE}],
           "queues": [{"name": "default", "weight": 1, "capability": {"nvidia.com/gpu": "28"}}],
           "jobs": jobs}
    path = tmp_path / "flat.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return load_instance(path, warn=lambda _: None)


def gpu_job(name, replicas, gpus, running=None):
    task = {"name": "w", "replicas": replicas, "requests": {"nvidia.com/gpu": gpus}}
    if running:
        task["running"] = running
    return {"name": name, "tasks": [task]}


FLAT_JOBS = [gpu_job("run", 2, 4, running={0: "n3", 1: "n3"}), gpu_job("a", 2, 8),
             gpu_job("b", 3, 4), gpu_job("over", 1, 8)]


def test_a_flat_instance_is_written_without_a_topology(tmp_path):
    inst = flat(tmp_path, FLAT_JOBS)
    docs, back, _ = round_trip(inst)
    assert not of_kind(docs, "Topology")
    (flavor,) = of_kind(docs, "ResourceFlavor")
    assert "topologyName" not in flavor["spec"]
    assert not back.hypernodes
    assert {(j.flavor, j.topology_name) for j in back.jobs} == {(flavor["metadata"]["name"],
                                                                  None)}
    assert {j.key: j.tasks[0].running for j in back.jobs} == {
        j.key: j.tasks[0].running for j in inst.jobs}


def test_a_flat_instance_keeps_its_kueue_plan_and_round_trips(tmp_path):
    inst = flat(tmp_path, FLAT_JOBS)
    _, back, _ = round_trip(inst)
    plan = kueue_plan(inst)
    assert plan == kueue_plan(back)
    assert not dict((job, placed) for job, placed, _ in plan[1])["default/over"]  # over quota
    _, again, warnings = round_trip(back)
    assert not warnings
    assert again.model_dump() == back.model_dump()


def mixed_docs(plain_first):
    """``kueue_docs`` with a flavor ``plain`` (no Topology, block b1's nodes) listed in ``cq``
    first or second; a workload asking for no topology (``w``, on ``plain``) and one asking for
    a block."""
    docs = copy.deepcopy(kueue_docs(["block", "kubernetes.io/hostname"],
                                    workload([podset("main", 2, cpu="1")])))
    plain = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
             "metadata": {"name": "plain"}, "spec": {"nodeLabels": {"block": "b1"}}}
    cq = next(d for d in docs if d["kind"] == "ClusterQueue")
    cq["spec"]["resourceGroups"][0]["flavors"].insert(
        0 if plain_first else 1,
        {"name": "plain", "resources": [{"name": "cpu", "nominalQuota": "4"}]})
    tas = copy.deepcopy(docs[-1])
    tas["metadata"]["name"] = "tas"
    tas["spec"]["podSets"] = [podset("main", 2, {"required": "block"})]
    return [*docs[:-1], plain, docs[-1], tas]


@pytest.mark.parametrize("plain_first", [False, True])
def test_a_mixed_cluster_queue_round_trips(tmp_path, plain_first):
    inst = load_instance(write_docs(tmp_path, mixed_docs(plain_first)), warn=lambda _: None)
    assert {j.name: (j.flavor, j.topology_name) for j in inst.jobs} == {
        "w": ("plain", None), "tas": ("f", "t")}
    docs, back, warnings = round_trip(inst)
    flavors = {d["metadata"]["name"]: d["spec"] for d in of_kind(docs, "ResourceFlavor")}
    assert "topologyName" not in flavors["plain"]
    assert flavors["plain"]["nodeLabels"] == {"block": "b1"}
    assert flavors["f"]["topologyName"] in {d["metadata"]["name"] for d in of_kind(docs,
                                                                                "Topology")}
    (cq,) = of_kind(docs, "ClusterQueue")
    listed = ["plain", "f"] if plain_first else ["f", "plain"]  # as read
    assert [f["name"] for f in cq["spec"]["resourceGroups"][0]["flavors"]] == listed
    assert [w for w in warnings if w.startswith("ClusterQueue/cq")]  # quota on the first only
    # the main Topology is written relabelled with GKE's keys, under the writer's own name
    renamed = {"tas": flavors["f"]["topologyName"], "w": None}
    assert {j.name: j.topology_name for j in back.jobs} == renamed
    assert [j.model_dump(exclude={"topology_name"}) for j in back.jobs] == [
        j.model_dump(exclude={"topology_name"}) for j in inst.jobs]
    # the quota summed over both flavors as read (the writer adds the cluster's other totals)
    assert [(q.name, q.flavors, q.capability["cpu"]) for q in back.queues] == [
        (q.name, q.flavors, q.capability["cpu"]) for q in inst.queues]
    assert [h.model_dump(exclude={"tier_name"}) for h in back.hypernodes] == [
        h.model_dump(exclude={"tier_name"}) for h in inst.hypernodes]
    assert kueue_plan(back) == kueue_plan(inst)
