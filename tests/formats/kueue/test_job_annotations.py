"""Pod-template annotations of a queued batch Job (issue 23 §1): the multi-layer slice
annotation is read, not ignored; kueue.x-k8s.io/ annotations the reader does not know warn."""

from __future__ import annotations

import json

import pytest
from scheduler_docs import kueue_docs, write_docs

import toposolve
from toposolve.check.checker import check_plan
from toposolve.core.errors import InputError
from toposolve.core.problem import compile_problem
from toposolve.formats.load import load_instance

SLICES = "kueue.x-k8s.io/podset-slice-required-topology-constraints"


def batch_job(annotations: dict[str, str], parallelism: int = 4) -> dict:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "default",
                     "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {"parallelism": parallelism, "suspend": True, "template": {
            "metadata": {"annotations": annotations},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]}}},
    }


def load(tmp_path, annotations, **kw):
    docs = kueue_docs(["block", "kubernetes.io/hostname"], batch_job(annotations, **kw))
    warnings: list[str] = []
    inst = load_instance(write_docs(tmp_path, docs), warn=warnings.append)
    return inst, warnings


def test_a_one_layer_slice_annotation_makes_slices(tmp_path):
    """Four 2-CPU pods in slices of 2 per block (two 4-CPU nodes per block): each slice in one
    block. Before, the annotation was ignored and the pods went anywhere."""
    inst, warnings = load(tmp_path, {SLICES: json.dumps([{"topology": "block", "size": "2"}])})
    assert warnings == []
    (job,) = inst.jobs
    problem = compile_problem(inst)
    assert [problem.subjobs[s].limit.tier for s in problem.jobs[0].subjobs
            if problem.subjobs[s].policy >= 0] == [2, 2]
    plan = toposolve.solve(inst, "kueue")
    blocks = {}
    for b in plan.bindings:
        index = int(b.pod.rsplit("-", 1)[1])
        blocks.setdefault(index // 2, set()).add(int(b.node[1:]) // 2)
    assert len(plan.bindings) == 4 and all(len(v) == 1 for v in blocks.values())
    assert job.name


def test_a_two_layer_slice_annotation_makes_a_gang_tree(tmp_path):
    """Block slices of 4 over host slices of 2: one GangGroup per block slice, one SubJob per
    host slice below it; the kueue engine puts each host slice on one node."""
    two = json.dumps([{"topology": "block", "size": 4}, {"topology": "kubernetes.io/hostname",
                                                          "size": 2}])
    inst, warnings = load(tmp_path, {SLICES: two})
    assert warnings == []
    problem = compile_problem(inst)
    assert problem.gang_depth(0) == 3
    (node,) = [problem.gang_nodes[n] for n in problem.jobs[0].gang_nodes]
    assert node.limit.tier == 2 and len(node.subjobs) == 2
    assert {problem.subjobs[s].limit.tier for s in node.subjobs} == {1}
    plan = toposolve.solve(inst, "kueue")
    hosts: dict[int, set[str]] = {}
    for b in plan.bindings:
        hosts.setdefault(int(b.pod.rsplit("-", 1)[1]) // 2, set()).add(b.node)
    assert len(plan.bindings) == 4 and all(len(v) == 1 for v in hosts.values())


@pytest.mark.parametrize(("layers", "match"), [
    ([("block", 4), ("kubernetes.io/hostname", 3)], "layer 1: size: must evenly divide the "
                                                    "parent layer size 4"),
    ([("block", 4), ("block", 2)], "layer 1: topology: duplicate level 'block'"),
    ([("block", 4)] * 4, "topology constraints must contain between 1 and 3 entries, got 4"),
])
def test_what_kueues_webhook_refuses_is_a_one_line_error(tmp_path, layers, match):
    text = json.dumps([{"topology": level, "size": size} for level, size in layers])
    with pytest.raises(InputError, match=f"{SLICES}: {match}"):
        load(tmp_path, {SLICES: text})


def test_an_inner_layer_above_the_outer_one_leaves_the_workload_pending(tmp_path):
    """The job webhook cannot check the order (no Topology at admission, kueue@ff69552
    ``jobframework/tas_validation.go:304-309``); Kueue's TAS then never places it."""
    text = json.dumps([{"topology": "kubernetes.io/hostname", "size": 4},
                       {"topology": "block", "size": 2}])
    inst, warnings = load(tmp_path, {SLICES: text})
    assert inst.jobs[0].network_topology.never_placed == (
        "additional slice layer topology block must be at a lower level than "
        "kubernetes.io/hostname")
    assert len(warnings) == 1
    plan = toposolve.solve(inst, "kueue")
    assert plan.bindings == [] and plan.jobs[0].scheduler_reason == (
        "couldn't assign flavors to pod set main: additional slice layer topology block must be "
        "at a lower level than kubernetes.io/hostname")


def test_malformed_annotations_are_one_line_errors(tmp_path):
    with pytest.raises(InputError, match=f"{SLICES}: not a JSON list"):
        load(tmp_path, {SLICES: "[{"})
    # Kueue's layer has no ``sizes`` (kueue@ff69552): decoded without ``size``, the size is 0,
    # which the job webhooks refuse
    with pytest.raises(InputError, match=f"{SLICES}: layer 0: size: must be greater than or "
                                         "equal to 1, got None"):
        load(tmp_path, {SLICES: json.dumps([{"topology": "block", "sizes": [1, 3]}])})


def test_a_layer_key_kueue_does_not_know_is_dropped_with_one_line(tmp_path):
    """Kueue's JSON decoding drops ``sizes`` (no uneven slices at kueue@ff69552) and keeps
    ``size``: the same slices as without it."""
    layers = [{"topology": "block", "size": 2, "sizes": [1, 3]}]
    inst, warnings = load(tmp_path, {SLICES: json.dumps(layers)})
    assert warnings == [f"{tmp_path / 'in.yaml'}: Job/default/train: podset 'main': {SLICES}: "
                        "layer 0: key 'sizes' ignored (Kueue's slice layer has only topology, "
                        "size)"]
    plain, _ = load(tmp_path, {SLICES: json.dumps([{"topology": "block", "size": 2}])})
    assert inst.jobs == plain.jobs
    plan = toposolve.solve(inst, "kueue")
    assert plan.bindings == toposolve.solve(plain, "kueue").bindings and len(plan.bindings) == 4
    assert check_plan(inst, plan) == []


def test_an_unknown_kueue_annotation_warns_once(tmp_path):
    _, warnings = load(tmp_path, {"kueue.x-k8s.io/podset-mystery": "x"})
    assert len(warnings) == 1
    assert "pod template annotation kueue.x-k8s.io/podset-mystery: not read" in warnings[0]


def test_a_jobset_slice_defaults_to_one_job(tmp_path):
    """KEP-2724 ("PodSet Slice size validation"): a JobSet that asks for slices without a slice
    size gets slices of one Job (its parallelism); any other job kind must give the size."""
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
        "metadata": {"name": "js", "namespace": "default",
                     "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {"suspend": True, "replicatedJobs": [{"name": "workers", "replicas": 2,
                 "template": {"spec": {"parallelism": 2, "template": {
                     "metadata": {"annotations": {
                         "kueue.x-k8s.io/podset-slice-required-topology": "block"}},
                     "spec": {"containers": [{"name": "c", "resources": {
                         "requests": {"cpu": "2"}}}]}}}}}]},
    }
    docs = kueue_docs(["block", "kubernetes.io/hostname"], jobset)
    inst = load_instance(write_docs(tmp_path, docs), warn=lambda _: None)
    problem = compile_problem(inst)
    sizes = [problem.subjobs[s].min_available for s in problem.jobs[0].subjobs
             if problem.subjobs[s].policy >= 0]
    assert sizes == [2, 2]  # two slices of one 2-pod Job each
    with pytest.raises(InputError, match="slice size not provided|podset-slice-size"):
        load(tmp_path, {"kueue.x-k8s.io/podset-slice-required-topology": "block"})
