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


@pytest.mark.parametrize(("request_", "count", "match"), [
    (slices("block", 4), 3, "slice size 4 must not be greater than pod set count 3"),
    ({"podsetSliceRequiredTopologyConstraints": [
        {"topology": "block", "size": 4}, {"topology": "kubernetes.io/hostname", "size": 2}]}, 6,
     "podset count 6 is not a multiple of the outer slice size 4: an incomplete slice under "
     "multi-layer slices is not modelled yet"),
])
def test_what_stays_refused_is_one_line_naming_the_workload(tmp_path, request_, count, match):
    with pytest.raises(InputError, match=match) as err:
        load(tmp_path, workload([podset("main", count, request_)]))
    assert "\n" not in str(err.value) and "Workload/default/w" in str(err.value)


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
