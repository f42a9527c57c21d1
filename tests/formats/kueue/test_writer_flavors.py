"""The Kueue writer's flavor names: the ResourceFlavor the reader chose keeps its name, and an
admitted Workload's podsets are assigned its ClusterQueue's flavor (not a fixed ``tas-flavor``);
a podset naming a level its Topology lacks is written back as read."""

from __future__ import annotations

from pathlib import Path

from builders import example1_tree, gang, instance, nodes
from scheduler_docs import kueue_docs, podset, workload, write_docs

from toposolve.formats.kueue.writer import kueue_documents
from toposolve.formats.load import instance_from_bodies, load_instance

TWO_FLAVORS = Path(__file__).resolve().parents[3] / "instances" / "kueue-two-flavors.yaml"


def write(inst):
    docs = kueue_documents(inst, lambda _: None)
    back = instance_from_bodies([(d, "w.yaml") for d in docs], "w", lambda _: None)
    return docs, back


def of_kind(docs, kind):
    return [d for d in docs if d["kind"] == kind]


def test_admitted_workloads_name_their_cluster_queues_flavor_as_read():
    inst = load_instance(TWO_FLAVORS, warn=lambda _: None)
    docs, back = write(inst)
    queues = {d["metadata"]["name"]: d["spec"]["resourceGroups"][0]["flavors"][0]["name"]
              for d in of_kind(docs, "ClusterQueue")}
    admitted = [d for d in of_kind(docs, "Workload") if "status" in d]
    assert admitted  # the dump runs a workload
    for doc in admitted:
        flavors = {f for ps in doc["status"]["admission"]["podSetAssignments"]
                   for f in ps["flavors"].values()}
        assert flavors == {queues[doc["status"]["admission"]["clusterQueue"]]}
    assert {j.key: j.flavor for j in back.jobs} == {j.key: j.flavor for j in inst.jobs}
    assert {j.flavor for j in inst.jobs} == {"gpu-flavor", "cpu-flavor"}


def test_an_instance_without_flavor_names_gets_generated_ones():
    inst = instance(nodes(8), example1_tree(), [gang("a", 2, running={0: "node0", 1: "node1"})])
    docs, back = write(inst)
    assert [d["metadata"]["name"] for d in of_kind(docs, "ResourceFlavor")] == ["tas-flavor"]
    (wl,) = of_kind(docs, "Workload")
    assert {f for ps in wl["status"]["admission"]["podSetAssignments"]
            for f in ps["flavors"].values()} == {"tas-flavor"}
    assert [j.flavor for j in back.jobs] == ["tas-flavor"]


def test_a_missing_level_is_written_back_as_read(tmp_path):
    docs = kueue_docs(["block", "kubernetes.io/hostname"],
                      workload([podset("main", 2, {"required": "rack"})]))
    inst = load_instance(write_docs(tmp_path, docs), warn=lambda _: None)
    written, back = write(inst)
    (wl,) = of_kind(written, "Workload")
    assert wl["spec"]["podSets"][0]["topologyRequest"] == {"required": "rack"}
    assert back.jobs[0].network_topology.missing_level == "rack"
