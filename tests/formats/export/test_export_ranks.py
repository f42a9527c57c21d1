"""``export --as ranks`` on every path the parallelism annotation is read from: a Volcano
PodGroup and a KAI PodGroup (pods exist: rank labels), a Kueue Workload and a Kueue queued
JobSet (pods not created yet: a ConfigMap keyed by pod index), each solved with ``--ranks``."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml
from export_schemas import errors

from toposolve.cli.main import main
from toposolve.core.errors import InputError
from toposolve.core.plan import Plan
from toposolve.formats.export.forms import export_plan
from toposolve.formats.export.ranks import NODE_RANK_LABEL, RANK_LABEL
from toposolve.formats.export.source import load_export_source
from toposolve.policy.ranks import assign_ranks

ROOT = Path(__file__).resolve().parents[3] / "instances"
ANNOTATION = "toposolve.io/parallelism"


def _bodies(name: str) -> list[dict]:
    docs = [d for d in yaml.safe_load_all((ROOT / name).read_text()) if d]
    return docs[0]["items"] if docs[0].get("kind") == "List" else docs


def _annotated(bodies: list[dict], kind: str, name: str, layout: str) -> list[dict]:
    bodies = copy.deepcopy(bodies)
    (target,) = [b for b in bodies if b["kind"] == kind and b["metadata"]["name"] == name]
    target["metadata"].setdefault("annotations", {})[ANNOTATION] = layout
    return bodies


def _queued_jobset(bodies: list[dict], name: str, layout: str, jobs: int) -> list[dict]:
    """The Kueue dump with Workload ``name`` replaced by a queued JobSet of ``jobs`` Jobs (no
    Workload yet: Kueue will name it ``jobset-<name>``), annotated with ``layout``."""
    out = [b for b in bodies if not (b["kind"] == "Workload" and b["metadata"]["name"] == name)]
    (workload,) = [b for b in bodies if b["kind"] == "Workload" and b["metadata"]["name"] == name]
    (podset,) = workload["spec"]["podSets"]
    meta = workload["metadata"]
    out.append({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {
        "name": name, "namespace": meta["namespace"],
        "creationTimestamp": meta["creationTimestamp"],
        "labels": {"kueue.x-k8s.io/queue-name": workload["spec"]["queueName"],
                   "kueue.x-k8s.io/priority-class": workload["spec"]["priorityClassRef"]["name"]},
        "annotations": {ANNOTATION: layout}},
        "spec": {"suspend": True, "replicatedJobs": [{
            "name": podset["name"], "replicas": jobs, "template": {"spec": {
                "parallelism": podset["count"] // jobs, "completions": podset["count"] // jobs,
                "template": podset["template"]}}}]}})
    return out


def _solve_and_export(tmp_path, bodies: list[dict], engine: str):
    """Solve the dump with ``--ranks`` and export ``--as ranks``: the plan, its source and the
    objects (each checked against the strict Kubernetes schema)."""
    dump, plan_path, out = tmp_path / "dump.yaml", tmp_path / "plan.json", tmp_path / "ranks.yaml"
    dump.write_text(yaml.safe_dump_all(bodies))
    assert main(["solve", str(dump), "--engine", engine, "--ranks", "-o", str(plan_path)]) == 0
    assert main(["export", str(plan_path), str(dump), "--as", "ranks", "-o", str(out)]) == 0
    objects = [o for o in yaml.safe_load_all(out.read_text()) if o]
    for obj in objects:
        assert errors(obj) == [], obj
    assert out.read_text().startswith("# Rank order per job")
    return Plan.read(plan_path), load_export_source([str(dump)], lambda _: None), objects


def _check_pod_labels(plan, job: str, objects, per_pod: int) -> None:
    """Every labelled pod carries its plan rank; ``job``'s pods all do, with node rank."""
    labelled = {f"{o['metadata']['namespace']}/{o['metadata']['name']}": o["metadata"]["labels"]
                for o in objects if o["kind"] == "Pod"}
    every = {pod: rank for ranks in plan.ranks.values() for pod, rank in ranks.items()}
    assert all(labels[RANK_LABEL] == str(every[pod]) for pod, labels in labelled.items())
    ranks = plan.ranks[job]
    assert set(ranks) <= set(labelled)
    for pod, rank in ranks.items():
        assert labelled[pod] == {RANK_LABEL: str(rank), NODE_RANK_LABEL: str(rank // per_pod)}
    assert sorted(ranks.values()) == list(range(0, per_pod * len(ranks), per_pod))


@pytest.mark.parametrize("dump,kind,name,layout,engine", [
    ("h100-dump.yaml", "PodGroup", "rlhf-reward", "tp=8,pp=2,dp=2", "volcano"),
    ("kai-eks.yaml", "PodGroup", "job-000", "tp=8,pp=2,dp=8", "kai"),
])
def test_pod_groups_whose_pods_exist_get_rank_labels(tmp_path, dump, kind, name, layout,
                                                     engine):
    bodies = _annotated(_bodies(dump), kind, name, layout)
    plan, source, objects = _solve_and_export(tmp_path, bodies, engine)
    (job,) = [j.key for j in source.instance.jobs if j.name == name]
    assert source.jobs[job].parallelism == layout
    _check_pod_labels(plan, job, objects, 8)


def _table_ranks(table: dict, keys: dict[str, str]) -> dict[str, int]:
    return {pod: int(table["data"][f"{key}.rank"]) for pod, key in keys.items()}


def test_kueue_workload_gets_a_rank_table_by_podset_index(tmp_path):
    bodies = _annotated(_bodies("kueue-gke.yaml"), "Workload", "job-000", "tp=8,pp=4,dp=4")
    plan, source, objects = _solve_and_export(tmp_path, bodies, "kueue")
    (table,) = [o for o in objects if o["metadata"]["name"] == "job-000-ranks"]
    job = source.jobs["default/job-000"]
    keys = {f"default/{job.tasks[0].pod_name(job.name, i)}": f"worker-{i}" for i in range(16)}
    assert _table_ranks(table, keys) == plan.ranks["default/job-000"]
    data = table["data"]
    assert (data["world-size"], data["ranks-per-pod"]) == ("128", "8")
    assert data[f"{data['master']}.rank"] == "0"
    nodes = {b.pod: b.node for b in plan.bindings}
    assert all(data[f"{key}.node"] == nodes[pod] for pod, key in keys.items())
    assert all(int(data[f"{k}.node-rank"]) * 8 == int(data[f"{k}.rank"]) for k in keys.values())


def test_queued_jobset_gets_a_rank_table_by_job_and_completion_index(tmp_path):
    bodies = _queued_jobset(_bodies("kueue-gke.yaml"), "job-014", "tp=8,pp=4,dp=8", jobs=4)
    plan, source, objects = _solve_and_export(tmp_path, bodies, "kueue")
    job = source.jobs["default/jobset-job-014"]
    assert job.parallelism == "tp=8,pp=4,dp=8"
    (table,) = [o for o in objects if o["metadata"]["name"] == "job-014-ranks"]
    keys = {f"default/{job.tasks[0].pod_name(job.name, i)}": f"worker-{i // 8}-{i % 8}"
            for i in range(32)}
    assert _table_ranks(table, keys) == plan.ranks["default/jobset-job-014"]
    text = (tmp_path / "ranks.yaml").read_text()
    assert "JobSet job-014, keyed by <replicatedJob>-<jobset.sigs.k8s.io/job-index>-" in text


def test_a_plan_without_ranks_gets_them_computed_with_a_note(tmp_path, capsys):
    bodies = _annotated(_bodies("kai-eks.yaml"), "PodGroup", "job-000", "tp=8,pp=2,dp=8")
    dump, plan_path = tmp_path / "dump.yaml", tmp_path / "plan.json"
    dump.write_text(yaml.safe_dump_all(bodies))
    assert main(["solve", str(dump), "--engine", "kai", "-o", str(plan_path)]) == 0
    assert "ranks" not in json.loads(plan_path.read_text())
    assert main(["export", str(plan_path), str(dump), "--as", "ranks"]) == 0
    captured = capsys.readouterr()
    assert "carries no ranks for" in captured.err and "computed with policy/ranks" in captured.err
    objects = [o for o in yaml.safe_load_all(captured.out) if o]
    source = load_export_source([str(dump)], lambda _: None)
    plan = Plan.read(plan_path)
    plan.ranks = assign_ranks(source.instance, plan)  # what export computed
    _check_pod_labels(plan, "default/job-000", objects, 8)


def test_ranks_need_the_instance_and_a_plan_s_bad_ranks_are_refused(tmp_path, capsys):
    bodies = _annotated(_bodies("kai-eks.yaml"), "PodGroup", "job-000", "tp=8,pp=2,dp=8")
    plan, source, _ = _solve_and_export(tmp_path, bodies, "kai")
    assert main(["export", str(tmp_path / "plan.json"), "--as", "ranks"]) == 2
    assert "--as ranks needs the instance" in capsys.readouterr().err
    plan.ranks = {"default/job-000": {p: 0 for p in plan.ranks["default/job-000"]}}
    with pytest.raises(InputError, match="ranks.default/job-000: rank 0 of pod default/job-000-"):
        export_plan(plan, "ranks", source)


@pytest.mark.parametrize("api_version,kind,keys,numbering", [
    ("batch/v1", "Job", ["0", "1", "2", "3"], "JOB_COMPLETION_INDEX"),
    ("kubeflow.org/v1", "PyTorchJob", [f"worker-{i}" for i in range(4)],
     "<replica type, lower case>-<training.kubeflow.org/replica-index>"),
    ("batch.volcano.sh/v1alpha1", "Job", [f"worker-{i}" for i in range(4)],
     "<task>-<VC_TASK_INDEX>"),
    ("jobset.x-k8s.io/v1alpha2", "JobSet", [f"worker-{i}" for i in range(4)],
     "<podset>-<pod index>"),
])
def test_each_owner_numbers_its_pods_as_its_controller_does(api_version, kind, keys, numbering):
    """A JobSet without its object in the dump has no parallelism to split the index by, so it
    falls back to the podset index like any other owner."""
    from builders import gang

    from toposolve.formats.export.ranks import index_keys
    from toposolve.formats.export.source import Owner

    job = gang("a", 4)
    got, words = index_keys(job, Owner(api_version, kind, "a", "default"))
    assert list(got.values()) == keys
    assert words == numbering
