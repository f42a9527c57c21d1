"""A podset count its slice size does not divide (issue 23): Kueue admits it, places
``count // size`` whole slices and leaves the last, incomplete one gated; the reader models that
last slice as a SubJob no engine can fill (``formats/kueue/slices.py``)."""

from __future__ import annotations

import json

import pytest
import yaml
from scheduler_docs import kueue_docs, podset, workload, write_docs

from toposolve.core.errors import InputError
from toposolve.core.instance import PARTITION_ID_LABEL
from toposolve.formats.load import load_instance
from toposolve.formats.write import write_scheduler_form

LEVELS = ["block", "kubernetes.io/hostname"]
SLICE_SIZE = "kueue.x-k8s.io/podset-slice-size"
SLICE_TOPOLOGY = "kueue.x-k8s.io/podset-slice-required-topology"


def batch_job(annotations: dict[str, str], parallelism: int) -> dict:
    """A queued, suspended batch Job of ``parallelism`` 1-CPU pods."""
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "train", "namespace": "default",
                     "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {"parallelism": parallelism, "suspend": True, "template": {
            "metadata": {"annotations": annotations},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}},
    }


def slices(level: str, size: int) -> dict:
    return {"podSetSliceRequiredTopology": level, "podSetSliceSize": size}


def load(tmp_path, *docs):
    return load_instance(write_docs(tmp_path, kueue_docs(LEVELS, *docs)), warn=lambda _: None)


def test_the_last_incomplete_slice_is_a_subjob_of_the_full_slice_size(tmp_path):
    (job,) = load(tmp_path, workload([podset("main", 6, slices("block", 4))])).jobs
    (task,) = job.tasks
    assert task.partition is None  # 6 pods are no whole number of partitions
    (policy,) = job.subgroup_policies
    assert (policy.sub_group_size, policy.network_topology.highest_tier_allowed) == (4, 2)
    assert [task.labels_of(i)[PARTITION_ID_LABEL] for i in range(6)] == list("000011")
    assert job.min_available == 4  # the whole slices: Kueue admits the workload with them


def test_a_count_the_size_divides_keeps_its_partitions(tmp_path):
    (job,) = load(tmp_path, workload([podset("main", 8, slices("block", 4))])).jobs
    assert job.tasks[0].partition.total_partitions == 2 and job.min_available == 8


def test_a_batch_job_with_an_uneven_slice_annotation_is_read_alike(tmp_path):
    annotations = {SLICE_TOPOLOGY: "block", SLICE_SIZE: "2"}
    (job,) = load(tmp_path, batch_job(annotations, parallelism=3)).jobs
    assert job.min_available == 2 and job.subgroup_policies[0].sub_group_size == 2


def test_what_stays_refused_is_one_line_naming_the_workload(tmp_path):
    with pytest.raises(InputError, match="slice size 4 must not be greater than pod set count "
                                         "3") as err:
        load(tmp_path, workload([podset("main", 3, slices("block", 4))]))
    assert "\n" not in str(err.value) and "Workload/default/w" in str(err.value)


def _two_layers(outer: int = 4, inner: int = 2) -> dict:
    return {"podsetSliceRequiredTopologyConstraints": [
        {"topology": "block", "size": outer},
        {"topology": "kubernetes.io/hostname", "size": inner}]}


def test_an_incomplete_outer_slice_under_two_layers_is_a_subjob_beside_the_tree(tmp_path):
    """10 pods in block slices of 4 over host slices of 2: two whole block slices (GangGroups
    over host-slice SubJobs), the last 2 pods one SubJob of 4 no engine can fill."""
    (job,) = load(tmp_path, workload([podset("main", 10, _two_layers())])).jobs
    assert job.min_available == 8
    assert [(g.name, g.parent) for g in job.gang_groups] == [
        ("main-layer0-0", None), ("main-layer0-1", None)]
    incomplete, *inner = job.subgroup_policies
    assert (incomplete.name, incomplete.parent, incomplete.sub_group_size,
            incomplete.network_topology.highest_tier_allowed) == (
        "main-layer0-incomplete", None, 4, 2)
    assert incomplete.label_selector.match_labels["toposolve.io/kueue-slice-0"] == "2"
    assert [(p.parent, p.sub_group_size) for p in inner] == [("main-layer0-0", 2),
                                                             ("main-layer0-1", 2)]


def test_three_layers_keep_every_inner_slice_inside_the_whole_outer_ones(tmp_path):
    """6 pods in block slices of 4 over rack slices of 2 over host slices of 1: one whole block
    slice with its two rack slices; the 2 last pods (a whole rack slice among them) are the
    incomplete block slice only, as Kueue gives them no domain."""
    docs = kueue_docs(["block", "rack", "kubernetes.io/hostname"], workload([podset("main", 6, {
        "podsetSliceRequiredTopologyConstraints": [
            {"topology": "block", "size": 4}, {"topology": "rack", "size": 2},
            {"topology": "kubernetes.io/hostname", "size": 1}]})]))
    for doc in docs:
        if doc["kind"] == "Node":
            labels = doc["metadata"]["labels"]
            labels["rack"] = f"{labels['block']}-r{int(doc['metadata']['name'][-1]) % 2}"
    (job,) = load_instance(write_docs(tmp_path, docs), warn=lambda _: None).jobs
    assert job.min_available == 4
    assert [(g.name, g.parent) for g in job.gang_groups] == [
        ("main-layer0-0", None), ("main-layer1-0", "main-layer0-0"),
        ("main-layer1-1", "main-layer0-0")]
    assert [(p.name, p.parent, p.sub_group_size) for p in job.subgroup_policies] == [
        ("main-layer0-incomplete", None, 4), ("main-layer2", "main-layer1-0", 1),
        ("main-layer2", "main-layer1-1", 1)]


def test_the_kueue_writer_writes_the_incomplete_outer_slice_back(tmp_path):
    original = load(tmp_path, workload([podset("main", 10, _two_layers())]))
    path = tmp_path / "out.yaml"
    warnings: list[str] = []
    write_scheduler_form(original, "kueue", str(path), warn=warnings.append)
    assert warnings == []
    (wl,) = [d for d in yaml.safe_load_all(path.read_text()) if d and d["kind"] == "Workload"]
    assert wl["spec"]["podSets"][0]["count"] == 10
    layers = wl["spec"]["podSets"][0]["topologyRequest"]["podsetSliceRequiredTopologyConstraints"]
    assert [layer["size"] for layer in layers] == [4, 2]
    (back,) = load_instance(path, warn=lambda _: None).jobs
    assert back.subgroup_policies == original.jobs[0].subgroup_policies
    assert back.gang_groups == original.jobs[0].gang_groups


def test_the_kueue_writer_writes_the_uneven_slices_back(tmp_path):
    original = load(tmp_path, workload([podset("main", 6, slices("block", 4))]))
    path = tmp_path / "out.yaml"
    warnings: list[str] = []
    write_scheduler_form(original, "kueue", str(path), warn=warnings.append)
    assert warnings == []
    (wl,) = [d for d in yaml.safe_load_all(path.read_text()) if d and d["kind"] == "Workload"]
    request = wl["spec"]["podSets"][0]["topologyRequest"]
    assert (request["podSetSliceSize"], wl["spec"]["podSets"][0]["count"]) == (4, 6)
    (back,) = load_instance(path, warn=lambda _: None).jobs
    assert back.subgroup_policies == original.jobs[0].subgroup_policies
    assert json.dumps(back.tasks[0].pod_labels) == json.dumps(original.jobs[0].tasks[0].pod_labels)
