"""Kueue reader, hostile input (issue 19): one line naming the file, object and field, checked
before anything of the size the input asks for is built."""

from __future__ import annotations

import time

import pytest
import yaml
from scheduler_docs import kueue_docs, podset, workload, write_docs

from toposolve.core.errors import InputError
from toposolve.formats.load import load_instance

HOST = "kubernetes.io/hostname"
LEVELS = ["block", HOST]


def refused(tmp_path, docs, field: str, words: str) -> str:
    """Load ``docs``: an InputError naming the file and ``field``, whose text has ``words``."""
    start = time.perf_counter()
    with pytest.raises(InputError) as info:
        load_instance(write_docs(tmp_path, docs), warn=lambda _: None)
    assert time.perf_counter() - start < 5
    text = str(info.value)
    assert info.value.file.endswith("in.yaml") and info.value.field == field, text
    assert words in text and "\n" not in text
    return text


def admitted(assignment: dict, count: int = 2, cpu: str = "1") -> list[dict]:
    """An admitted two-pod workload whose podset ``main`` has ``assignment``."""
    status = {"admission": {"clusterQueue": "cq", "podSetAssignments": [
        {"name": "main", "count": count, "topologyAssignment": assignment}]}}
    return kueue_docs(LEVELS, workload([podset("main", 2, cpu=cpu)], status))


ASSIGNMENT = "status.admission.podSetAssignments[0]"


@pytest.mark.parametrize(("assignment", "field"), [
    ({"levels": [HOST], "domains": [{"values": ["n1"], "count": 10**12}]},
     "topologyAssignment.domains[0].count"),
    ({"levels": [HOST], "slices": [{"domainCount": 10**12, "valuesPerLevel": [{"universal": "n1"}],
                                    "podCounts": {"universal": 1}}]},
     "topologyAssignment.slices[0].domainCount"),
    ({"levels": [HOST], "slices": [{"domainCount": 2, "valuesPerLevel": [{"universal": "n1"}],
                                    "podCounts": {"universal": 10**12}}]},
     "topologyAssignment.slices[0].podCounts.universal"),
    ({"levels": [HOST], "domains": [{"values": ["n1"], "count": 2},
                                    {"values": ["n2"], "count": 1}]},
     "topologyAssignment.domains[1].count"),
])
def test_assignment_counts_beyond_the_podset_are_refused_before_allocating(tmp_path, assignment,
                                                                           field):
    text = refused(tmp_path, admitted(assignment), f"{ASSIGNMENT}.{field}", "left to place")
    assert "pods of the podset's count" in text


def test_an_assignment_count_beyond_the_job_limit_is_refused(tmp_path):
    assignment = {"levels": [HOST], "domains": [{"values": ["n1"], "count": 3 * 10**8}]}
    refused(tmp_path, admitted(assignment, count=3 * 10**8), f"{ASSIGNMENT}.count",
            "must be at most 200,000")


def test_an_assignment_within_the_count_still_places_its_pods(tmp_path):
    values = [{"universal": "b0"}, {"individual": {"roots": ["n0", "n1"]}}]
    assignment = {"levels": LEVELS, "slices": [
        {"domainCount": 2, "podCounts": {"universal": 1}, "valuesPerLevel": values}]}
    inst = load_instance(write_docs(tmp_path, admitted(assignment)), warn=lambda _: None)
    assert inst.jobs[0].tasks[0].running == {0: "n0", 1: "n1"}


def test_leaf_domains_spread_over_their_nodes(tmp_path):
    assignment = {"levels": ["block"], "domains": [{"values": ["b1"], "count": 2}]}
    docs = admitted(assignment, cpu="3")
    inst = load_instance(write_docs(tmp_path, docs), warn=lambda _: None)
    assert inst.jobs[0].tasks[0].running == {0: "n2", 1: "n3"}  # 4 CPUs a node: one pod each


def with_topology(docs: list[dict], levels: list[str], name: str = "t") -> list[dict]:
    topology = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Topology",
                "metadata": {"name": name}, "spec": {"levels": [{"nodeLabel": k} for k in levels]}}
    return [*docs, topology]


def test_a_second_topology_of_the_same_name_is_refused(tmp_path):
    docs = with_topology(kueue_docs(LEVELS, workload([podset("main", 2)])), [HOST])
    refused(tmp_path, docs, "metadata.name", "Topology 't' is declared twice")


@pytest.mark.parametrize(("levels", "field", "words"), [
    (["bad label!", HOST], "spec.levels[0].nodeLabel", "not a valid qualified name"),
    ([f"l{i}" for i in range(100)] + [HOST], "spec.levels", "101 levels, more than the limit"),
    ([f"l{i}" for i in range(20_000)] + [HOST], "spec.levels", "20,001 levels"),
])
def test_bad_topology_levels_name_the_field(tmp_path, levels, field, words):
    text = refused(tmp_path, kueue_docs(levels, workload([podset("main", 2)])), field, words)
    assert "Topology/t" in text and "pydantic" not in text


def test_a_podset_group_of_one_podset_is_refused_as_kueue_does(tmp_path):
    request = {"required": "block", "podSetGroupName": "g"}
    docs = kueue_docs(LEVELS, workload([podset("main", 2, request), podset("other", 1)]))
    refused(tmp_path, docs, "spec.podSets[0].topologyRequest.podSetGroupName",
            "can only define groups of exactly 2 pod sets, got: 1 pod set(s)")


def batch_job(slice_size: str) -> dict:
    annotations = {"kueue.x-k8s.io/podset-slice-required-topology": "block",
                   "kueue.x-k8s.io/podset-slice-size": slice_size}
    template = {"metadata": {"annotations": annotations},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "train", "namespace": "default",
                         "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
            "spec": {"parallelism": 2, "template": template}}


@pytest.mark.parametrize("size", ["٢", "²", "2.0", "-2", "9" * 5000])
def test_slice_sizes_are_ascii_integers_as_kubernetes_reads_them(tmp_path, size):
    docs = kueue_docs(LEVELS, batch_job(size))
    refused(tmp_path, docs, "spec.template.metadata.annotations", "expected a positive integer")


def test_an_ascii_slice_size_is_read(tmp_path):
    inst = load_instance(write_docs(tmp_path, kueue_docs(LEVELS, batch_job("2"))),
                         warn=lambda _: None)
    assert inst.jobs[0].tasks[0].partition.partition_size == 2


def test_numeric_string_fields_take_ascii_digits_only():
    from toposolve.formats.k8s.fields import decimal

    assert [decimal(t) for t in ("2", "+2", "-2", "٢", "²", " 2", "9" * 20)] == [
        2, 2, -2, None, None, None, None]
    assert yaml.safe_load("x: ٢")["x"] == "٢"  # YAML leaves it a string for the readers above
