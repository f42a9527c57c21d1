"""``export --as templates`` for a queued LeaderWorkerSet and PyTorchJob (issue 21): the
patches validate against the pinned upstream CRDs (tests/data/schemas/), confine each podset to
its planned domain (the groups of an LWS, sharing one template, to the union of theirs) and lead
Kueue there once merged into the object."""

from __future__ import annotations

import copy

import pytest
from export_schemas import errors
from scheduler_docs import gated_lws_pod, kueue_docs, lws, write_docs

from toposolve.cli.main import main
from toposolve.core.errors import InputError
from toposolve.formats.export.forms import export_plan
from toposolve.formats.export.source import load_export_source
from toposolve.solve import solve

LEVELS = ["block", "kubernetes.io/hostname"]
AFFINITY = "requiredDuringSchedulingIgnoredDuringExecution"


def pytorch_job() -> dict:
    """A queued PyTorchJob: one Master and one Worker of 3 CPUs, in one block."""
    def spec(replicas: int) -> dict:
        return {"replicas": replicas, "template": {
            "metadata": {"annotations": {"kueue.x-k8s.io/podset-required-topology": "block"}},
            "spec": {"containers": [{"name": "pytorch",
                                     "resources": {"requests": {"cpu": "3"}}}]}}}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "train", "namespace": "default",
                         "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
            "spec": {"runPolicy": {"suspend": True},
                     "pytorchReplicaSpecs": {"Master": spec(1), "Worker": spec(1)}}}


def _exported(tmp_path, *objects: dict):
    path = write_docs(tmp_path, kueue_docs(LEVELS, objects[0]) + list(objects[1:]))
    source = load_export_source([str(path)], lambda _: None)
    plan = solve(source.instance, "kueue")
    return source, plan, export_plan(plan, "templates", source)


def _terms(template: dict) -> list[dict]:
    return template["spec"]["affinity"]["nodeAffinity"][AFFINITY]["nodeSelectorTerms"]


def _blocks(source, plan) -> dict[tuple[str, str], set[str]]:
    """(job, podset) → the blocks of its planned nodes."""
    out: dict[tuple[str, str], set[str]] = {}
    for b in plan.bindings:
        job, task = source.job_of(b.pod)
        out.setdefault((job.name, task.name), set()).add(source.nodes[b.node].labels["block"])
    return out


def test_lws_groups_share_one_patch_confined_to_the_union_of_their_domains(tmp_path):
    source, plan, exported = _exported(tmp_path, lws(replicas=2, size=2))
    (obj,) = exported.objects  # one object for the LWS, not one per group
    assert errors(obj) == []
    assert obj["apiVersion"] == "leaderworkerset.x-k8s.io/v1"
    blocks = _blocks(source, plan)
    per_group = [blocks[(f"leaderworkerset-infer-{g}", p)] for g in range(2)
                 for p in ("leader", "worker")]
    assert all(len(b) == 1 for b in per_group) and len(set().union(*per_group)) == 2
    lwt = obj["spec"]["leaderWorkerTemplate"]
    for name in ("leaderTemplate", "workerTemplate"):
        assert _terms(lwt[name]) == [{"matchExpressions": [
            {"key": "block", "operator": "In", "values": ["b0", "b1"]}]}]
        assert lwt[name]["metadata"]["annotations"] == {
            "kueue.x-k8s.io/podset-required-topology": "block"}
    comment = exported.items[0][0]
    assert comment[0].startswith("LeaderWorkerSet default/infer (2 jobs, one per group")
    assert any("union of the groups' planned domains" in line for line in comment)
    assert any("LeaderWorkerSet webhook" in note for note in exported.notes)
    assert "&id" not in exported.text()  # no YAML aliases between the two templates


def test_a_one_group_lws_is_confined_to_its_block_and_kueue_places_it_there(tmp_path):
    source, plan, exported = _exported(tmp_path, lws(replicas=1, size=2))
    (obj,) = exported.objects
    assert errors(obj) == []
    (block,) = set().union(*_blocks(source, plan).values())
    patch = obj["spec"]["leaderWorkerTemplate"]
    assert _terms(patch["workerTemplate"])[0]["matchExpressions"] == [
        {"key": "block", "operator": "In", "values": [block]}]
    # merged into the manifest (JSON merge patch: maps merge, the terms list is replaced)
    merged = lws(replicas=1, size=2)
    for name in ("leaderTemplate", "workerTemplate"):
        template = merged["spec"]["leaderWorkerTemplate"][name]
        template["spec"]["affinity"] = patch[name]["spec"]["affinity"]
        template["metadata"]["annotations"].update(patch[name]["metadata"]["annotations"])
    again, replanned, _ = _exported(tmp_path, merged)
    assert len(replanned.bindings) == 2
    assert set().union(*_blocks(again, replanned).values()) == {block}


def test_pytorchjob_patch_validates_and_confines_each_replica_type(tmp_path):
    source, plan, exported = _exported(tmp_path, pytorch_job())
    (obj,) = exported.objects
    assert errors(obj) == []
    specs = obj["spec"]["pytorchReplicaSpecs"]
    assert sorted(specs) == ["Master", "Worker"]  # the owner's replica types, as written
    planned: dict[str, list] = {}
    for b in plan.bindings:
        planned.setdefault(source.job_of(b.pod)[1].name, []).append(source.nodes[b.node])
    assert sorted(planned) == ["master", "worker"]
    for role, spec in specs.items():
        requirements = _terms(spec["template"])[0]["matchExpressions"]
        assert all(n.labels[r["key"]] in r["values"] for n in planned[role.lower()]
                   for r in requirements)
        assert spec["template"]["metadata"]["annotations"] == {
            "kueue.x-k8s.io/podset-required-topology": requirements[-1]["key"]}
    broken = copy.deepcopy(obj)
    broken["spec"]["pytorchReplicaSpecs"]["Master"]["tempalte"] = {}
    assert any("'tempalte' was unexpected" in e for e in errors(broken))


def test_an_lws_whose_pods_exist_is_refused_in_one_line(tmp_path, capsys):
    objects = [lws(replicas=1), gated_lws_pod(0, 0), gated_lws_pod(0, 1)]
    path = write_docs(tmp_path, kueue_docs(LEVELS, objects[0]) + objects[1:])
    source = load_export_source([str(path)], lambda _: None)
    plan = solve(source.instance, "kueue")
    with pytest.raises(InputError, match="its pods exist already"):
        export_plan(plan, "templates", source)
    plan_file = tmp_path / "plan.json"
    plan.write(plan_file)
    assert main(["export", str(plan_file), str(path), "--as", "templates"]) == 2
    err = capsys.readouterr().err.strip()
    assert "pod default/infer-0" in err and "kueue-admission" in err and "\n" not in err


def _lws_patch(template: dict) -> dict:
    return {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
            "metadata": {"name": "x"},
            "spec": {"leaderWorkerTemplate": {"leaderTemplate": template}}}


def _pytorch_patch(template: dict) -> dict:
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "x"},
            "spec": {"pytorchReplicaSpecs": {"Worker": {"template": template}}}}


@pytest.mark.parametrize("patch", [_lws_patch, _pytorch_patch])
def test_the_crds_refuse_a_misspelled_field_and_a_requirement_without_operator(patch):
    def template(expression: dict) -> dict:
        return {"spec": {"affinity": {"nodeAffinity": {AFFINITY: {"nodeSelectorTerms": [
            {"matchExpressions": [expression]}]}}}}}
    good = patch(template({"key": "block", "operator": "In", "values": ["b0"]}))
    assert errors(good) == []  # a partial template: no containers, no workerTemplate
    assert any("'metdata' was unexpected" in e for e in errors({**good, "metdata": {}}))
    assert any("'operator' is a required property" in e
               for e in errors(patch(template({"key": "block", "values": ["b0"]}))))
