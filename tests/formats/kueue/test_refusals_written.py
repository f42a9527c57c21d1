"""Requests Kueue loads but never places, written back as Kueue's objects carry them (issue 23):
a missing level as the podsets' required level, an inactive ClusterQueue as a ClusterQueue whose
flavor names a Topology the output lacks; the round trip gives the same job and the same pending
reason. Slice layers TAS refuses are not kept in the model: those stay a warning line."""

from __future__ import annotations

from builders import example1_tree, gang, instance, nodes
from scheduler_docs import inactive_queue_docs, kueue_docs, podset, workload, write_docs

import toposolve
from toposolve.core.instance import NetworkTopology
from toposolve.core.podset_groups import inactive_message
from toposolve.formats.kueue.writer import kueue_documents
from toposolve.formats.load import instance_from_bodies, load_instance

LEVELS = ["block", "kubernetes.io/hostname"]


def round_trip(inst):
    warnings: list[str] = []
    docs = kueue_documents(inst, warnings.append)
    back = instance_from_bodies([(d, "w.yaml") for d in docs], "w", lambda _: None)
    return docs, back, warnings


def reasons(inst):
    return [(j.job, j.reason, j.scheduler_reason) for j in toposolve.solve(inst, "kueue").jobs]


def test_an_inactive_queues_workload_reads_back_the_same_and_pending_alike(tmp_path):
    inst = load_instance(write_docs(tmp_path, inactive_queue_docs()), warn=lambda _: None)
    docs, back, warnings = round_trip(inst)
    assert warnings == []
    [before] = [j for j in inst.jobs if j.queue == "cq2"]
    [after] = [j for j in back.jobs if j.queue == "cq2"]
    assert after == before
    assert before.network_topology.never_placed == inactive_message("cq2")
    assert reasons(back) == reasons(inst)
    assert [q.flavors for q in back.queues if q.name == "cq2"] == [["g"]]  # the flavor as read
    flavor = next(d for d in docs if d["kind"] == "ResourceFlavor" and d["metadata"]["name"] == "g")
    topologies = {d["metadata"]["name"] for d in docs if d["kind"] == "Topology"}
    assert flavor["spec"]["topologyName"] not in topologies


def test_an_inactive_queue_of_several_podsets_is_written_back_without_a_warning():
    job = gang("refused", 2, topology=NetworkTopology(mode="hard",
                                                      never_placed=inactive_message("default")))
    job.tasks.append(job.tasks[0].model_copy(update={"name": "other", "replicas": 3}))
    inst = instance(nodes(8), example1_tree(), [job])
    _, back, warnings = round_trip(inst)
    assert warnings == []
    assert back.jobs[0].network_topology == job.network_topology
    assert reasons(back) == reasons(inst)


def test_a_queue_with_an_active_job_is_written_active_and_the_refusal_warned():
    refused = gang("refused", 2, topology=NetworkTopology(mode="hard",
                                                          never_placed=inactive_message("default")))
    _, back, warnings = round_trip(instance(nodes(8), example1_tree(), [refused, gang("ok", 2)]))
    assert len(warnings) == 1 and "Job/default/refused" in warnings[0]
    assert "ClusterQueue default is inactive" in warnings[0]
    assert all(j.network_topology is None or j.network_topology.never_placed is None
               for j in back.jobs)


def test_a_missing_level_on_a_podset_group_stays_the_groups(tmp_path):
    required = {"required": "rack", "podSetGroupName": "g"}
    docs = kueue_docs(LEVELS, workload([podset("leader", 1, required),
                                        podset("workers", 3, required)]))
    inst = load_instance(write_docs(tmp_path, docs), warn=lambda _: None)
    written, back, warnings = round_trip(inst)
    assert warnings == []
    (wl,) = [d for d in written if d["kind"] == "Workload"]
    assert [ps["topologyRequest"] for ps in wl["spec"]["podSets"]] == [
        {"required": "rack", "podSetGroupName": "job"}] * 2
    assert back.jobs[0].network_topology == inst.jobs[0].network_topology
    assert back.jobs[0].subgroup_policies == inst.jobs[0].subgroup_policies == []
    assert reasons(back) == reasons(inst)


def test_a_missing_level_the_written_topology_has_is_left_out_with_a_warning():
    key = "cloud.google.com/gce-topology-block"  # a level key the writer itself uses
    lost = gang("lost", 2, topology=NetworkTopology(mode="hard", missing_level=key))
    written, back, warnings = round_trip(instance(nodes(8), example1_tree(), [lost]))
    (wl,) = [d for d in written if d["kind"] == "Workload"]
    assert "topologyRequest" not in wl["spec"]["podSets"][0]
    assert warnings == [f"Job/default/lost: the constraint naming level {key!r}, which its "
                        "topology lacks, is left out (the written objects cannot hold it): the "
                        "written job is unconstrained"]
    assert back.jobs[0].network_topology is None


def test_slice_layers_tas_refuses_are_still_a_warning(tmp_path):
    layers = {"podsetSliceRequiredTopologyConstraints": [
        {"topology": "block", "size": 4}, {"topology": "kubernetes.io/hostname", "size": 3}]}
    docs = kueue_docs(LEVELS, workload([podset("main", 8, layers)]))
    inst = load_instance(write_docs(tmp_path, docs), warn=lambda _: None)
    _, _, warnings = round_trip(inst)
    assert warnings == ["Job/default/w: the request its scheduler never places (additional slice "
                        "layer size 3 must evenly divide parent layer size 4) is left out (the "
                        "written objects cannot hold it): the written job is unconstrained"]
