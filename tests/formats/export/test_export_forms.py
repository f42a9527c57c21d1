"""Each scheduler's export form on the bundled dumps: the objects validate against the upstream
schemas (tests/data/schemas/) and lead the scheduler to the plan; forms that do not fit the
input are refused in one line."""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path

import pytest
import yaml
from export_schemas import errors

from toposolve.cli.main import main
from toposolve.core.errors import InputError
from toposolve.core.plan import Binding
from toposolve.defrag import defrag
from toposolve.formats.export.forms import export_plan
from toposolve.formats.export.source import ExportSource, load_export_source
from toposolve.formats.k8s.fields import Document
from toposolve.formats.load import instance_from_bodies
from toposolve.generate.defrag import TARGET, defrag_family
from toposolve.solve import solve

ROOT = Path(__file__).resolve().parents[3] / "instances"
DEFAULT, KUEUE, KAI = (str(ROOT / f) for f in ("default.yaml", "kueue-gke.yaml", "kai-eks.yaml"))


def _source(bodies: list[dict]) -> ExportSource:
    docs = [(b, "dump.yaml") for b in bodies]
    instance = instance_from_bodies(docs, "dump.yaml", lambda _: None)
    return ExportSource(instance, [Document(b, "dump.yaml", i) for i, b in enumerate(bodies)])


def _valid(objects: list[dict]) -> None:
    assert objects
    for obj in objects:
        assert errors(obj) == [], (obj["kind"], obj["metadata"])


def _matches(node, requirements) -> bool:
    return all(node.labels.get(r["key"], node.name if r["key"] == "kubernetes.io/hostname"
                               else None) in r["values"] for r in requirements)


@pytest.fixture(scope="module")
def kueue():
    source = load_export_source([KUEUE], lambda _: None)
    return source, solve(source.instance, "kueue")


def _solved_and_exported(path: str, engine: str, form: str):
    """The dump's source, the engine's plan, and its objects in ``form`` (checked valid)."""
    source = load_export_source([path], lambda _: None)
    plan = solve(source.instance, engine)
    objects = export_plan(plan, form, source).objects
    _valid(objects)
    return source, plan, objects


def _placements(plan) -> list[tuple[str, str]]:
    return [(b.pod, b.node) for b in plan.bindings if not b.nominated]


def test_volcano_bindings_validate_and_bind_each_planned_pod():
    _, plan, objects = _solved_and_exported(DEFAULT, "volcano", "bindings")
    assert [(f"{o['metadata']['namespace']}/{o['metadata']['name']}", o["target"]["name"])
            for o in objects] == _placements(plan)
    assert export_plan(plan, "bindings", None).objects == objects  # no instance: the same


@pytest.mark.parametrize("api", ["v1beta2", "v1beta1"])
def test_kueue_admission_validates_and_reads_back_as_the_plan(kueue, api):
    source, plan = kueue
    objects = export_plan(plan, "kueue-admission", source, kueue_api=api).objects
    _valid(objects)
    # apply each status to its Workload and read the dump again: Kueue's view of the
    # admitted Workloads is the plan, pod for pod per node
    bodies = [copy.deepcopy(d.body) for d in source.docs]
    by_name = {(b["metadata"]["name"]): b for b in bodies if b["kind"] == "Workload"}
    for obj in objects:
        workload = by_name[obj["metadata"]["name"]]
        workload["apiVersion"] = obj["apiVersion"]
        workload.setdefault("status", {})["admission"] = obj["status"]["admission"]
    again = _source(bodies).instance
    planned = Counter((b.pod.rsplit("-", 2)[0].split("/")[1], b.node) for b in plan.bindings)
    admitted = Counter((job.name, node) for job in again.jobs for t in job.tasks
                       for node in t.running.values() if job.name in {o["metadata"]["name"]
                                                                     for o in objects})
    assert admitted == planned


def _with_owners(source: ExportSource, placed: set[str]) -> tuple[list[dict], str]:
    """The Kueue dump with each pending Workload owned by a suspended JobSet, and one of them
    (of the ``placed`` ones) replaced by a queued batch Job (no Workload yet); returns the
    bodies and that Job's name."""
    bodies, queued = [], None
    for doc in source.docs:
        body = copy.deepcopy(doc.body)
        if body["kind"] != "Workload" or "admission" in body.get("status", {}):
            bodies.append(body)
            continue
        meta, podsets = body["metadata"], body["spec"]["podSets"]
        if (queued is None and len(podsets) == 1 and "topologyRequest" in podsets[0]
                and meta["name"] in placed):
            queued = meta["name"]
            template = copy.deepcopy(podsets[0]["template"])
            request = podsets[0]["topologyRequest"]
            level = request.get("required") or request.get("preferred")
            kind = "required" if "required" in request else "preferred"
            template["metadata"] = {"annotations": {
                f"kueue.x-k8s.io/podset-{kind}-topology": level}}
            bodies.append({"apiVersion": "batch/v1", "kind": "Job", "metadata": {
                "name": queued, "namespace": meta["namespace"],
                "creationTimestamp": meta["creationTimestamp"],  # its place in the queue
                "labels": {"kueue.x-k8s.io/queue-name": body["spec"]["queueName"],
                           "kueue.x-k8s.io/priority-class":
                               body["spec"]["priorityClassRef"]["name"]}},
                "spec": {"suspend": True, "parallelism": podsets[0]["count"],
                         "template": template}})
            continue
        meta["ownerReferences"] = [{"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                                    "name": meta["name"], "uid": "u", "controller": True}]
        bodies += [body, {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                          "metadata": {"name": meta["name"], "namespace": meta["namespace"]},
                          "spec": {"suspend": True, "replicatedJobs": [
                              {"name": p["name"], "replicas": 1, "template": {"spec": {
                                  "parallelism": p["count"], "template": p["template"]}}}
                              for p in podsets]}}]
    assert queued is not None
    return bodies, queued


def test_kueue_templates_confine_each_podset_and_lead_kueue_to_the_domain(kueue):
    placed = {j.job.split("/")[1] for j in kueue[1].jobs if j.placed}
    bodies, queued = _with_owners(kueue[0], placed)
    source = _source(bodies)
    plan = solve(source.instance, "kueue")
    exported = export_plan(plan, "templates", source)
    jobs = [o for o in exported.objects if o["kind"] == "Job"]
    assert len(jobs) == 1 and jobs[0]["metadata"]["name"] == queued
    _valid(jobs)  # the batch/v1 Job apply configuration
    _valid([o for o in exported.objects if o["kind"] == "JobSet"])  # jobset's CRD
    assert {o["kind"] for o in exported.objects} == {"Job", "JobSet"}
    planned: dict[str, list] = {}
    for b in plan.bindings:
        job, task = source.job_of(b.pod)
        planned.setdefault((job.name, task.name), []).append(source.nodes[b.node])
    for obj in exported.objects:
        templates = ({"main": obj["spec"]["template"]} if obj["kind"] == "Job" else
                     {rj["name"]: rj["template"]["spec"]["template"]
                      for rj in obj["spec"]["replicatedJobs"]})
        name = f"job-{queued}" if obj["kind"] == "Job" else obj["metadata"]["name"]
        for podset, template in templates.items():
            terms = template["spec"]["affinity"]["nodeAffinity"][
                "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
            nodes = planned[(name, podset)]
            assert all(_matches(n, terms[0]["matchExpressions"]) for n in nodes)
    # the queued Job patched as kubectl would: Kueue places it inside the planned domain
    job = next(b for b in bodies if b["kind"] == "Job")
    job["spec"]["template"]["spec"]["affinity"] = jobs[0]["spec"]["template"]["spec"]["affinity"]
    job["spec"]["template"]["metadata"]["annotations"].update(
        jobs[0]["spec"]["template"].get("metadata", {}).get("annotations", {}))
    requirements = job["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0][
        "matchExpressions"]
    again = _source(bodies)
    replanned = solve(again.instance, "kueue")
    nodes = [again.nodes[b.node] for b in replanned.bindings
             if b.pod.startswith(f"default/job-{queued}-")]
    assert nodes and all(_matches(n, requirements) for n in nodes)


def test_kai_bindrequests_validate_and_name_each_pending_pod_and_its_node():
    source, plan, objects = _solved_and_exported(KAI, "kai", "kai-bindrequests")
    assert [(f"{o['metadata']['namespace']}/{o['spec']['podName']}", o["spec"]["selectedNode"])
            for o in objects] == _placements(plan)
    assert all(source.pods[f"default/{o['spec']['podName']}"].body["spec"].get("nodeName")
               is None for o in objects)
    for o in objects:  # whole GPUs, as the pod asks for them
        containers = source.pods[f"default/{o['spec']['podName']}"].body["spec"]["containers"]
        asked = sum(int(c["resources"]["requests"].get("nvidia.com/gpu", 0)) for c in containers)
        assert o["spec"]["receivedGPU"] == {"count": asked, "portion": "1.00"}


def test_evictions_validate_come_in_plan_order_and_carry_their_command():
    source = load_export_source([KAI], lambda _: None)
    plan = solve(source.instance, "kai")
    running = [f"default/{d.name}" for d in source.by_kind[("", "Pod")]
               if d.body["spec"].get("nodeName")][:3]
    plan.evictions = [Binding(p, "dgx-0000") for p in running]
    exported = export_plan(plan, "evictions", source)
    _valid(exported.objects)
    assert [f"default/{o['metadata']['name']}" for o in exported.objects] == running
    assert exported.items[0][0][1].startswith(
        f"kubectl create --raw /api/v1/namespaces/default/pods/{running[0][8:]}/eviction")
    assert "--as evictions" in export_plan(plan, "kai-bindrequests", source).notes[0]


@pytest.mark.parametrize("instance, form, words", [
    (KUEUE, "bindings", "pod default/job-000-worker-0 is not in the dump (not created yet); "
                        "its job's pods are made after admission: export --as templates"),
    (KUEUE, "templates", "no owner object to patch"),
    (KUEUE, "kai-bindrequests", "needs a KAI-Scheduler input"),
    (KAI, "kueue-admission", "needs a Kueue input"),
    (KAI, "templates", "its pods exist already"),
    (None, "templates", "needs the instance the plan was made from"),
])
def test_a_form_that_does_not_fit_is_one_line_exit_2(tmp_path, capsys, instance, form, words):
    plan_file, out = tmp_path / "plan.json", tmp_path / "objects.yaml"
    engine = "kai" if instance == KAI else "kueue"
    source = load_export_source([instance or KUEUE], lambda _: None)
    solve(source.instance, engine).write(plan_file)
    args = ["export", str(plan_file), *([instance] if instance else []), "--as", form,
            "-o", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err
    assert not out.exists()


def test_cli_writes_commented_objects_kubectl_reads(tmp_path, kueue):
    plan_file, out = tmp_path / "plan.json", tmp_path / "objects.yaml"
    kueue[1].write(plan_file)
    assert main(["export", str(plan_file), KUEUE, "--as", "kueue-admission", "--kueue-api",
                 "v1beta1", "-o", str(out)]) == 0
    text = out.read_text()
    assert "kubectl apply --server-side --subresource status" in text
    docs = list(yaml.safe_load_all(text))
    assert all(d["apiVersion"] == "kueue.x-k8s.io/v1beta1" for d in docs)
    with pytest.raises(InputError):
        export_plan(kueue[1], "kueue-admission", None)


def test_moves_of_a_defrag_plan_are_evictions_in_plan_order(tmp_path, capsys):
    fam = defrag_family(3, seed=1, k=6, lo=3, hi=4)
    plan = defrag(fam.instance, [TARGET], free={1: 1})  # a rack left idle: several moves
    assert len(plan.moves) >= 2 and plan.bindings
    exported = export_plan(plan, "moves", None)
    _valid(exported.objects)
    assert [o["kind"] for o in exported.objects] == ["Eviction"] * len(plan.moves)
    assert [f"{o['metadata']['namespace']}/{o['metadata']['name']}"
            for o in exported.objects] == [m.pod for m in plan.moves]
    for (comment, _), move in zip(exported.items, plan.moves, strict=True):
        assert comment[0].endswith(f"evict it from {move.source}; its controller's replacement "
                                   f"must go to {move.to}")
        assert comment[1].startswith("kubectl create --raw /api/v1/namespaces/")
    assert "--as bindings" in exported.notes[0]
    assert "--as moves" in export_plan(plan, "evictions", None).notes[0]
    plan_file, out = tmp_path / "plan.json", tmp_path / "moves.yaml"
    plan.write(plan_file)
    assert main(["export", str(plan_file), "--as", "moves", "-o", str(out)]) == 0
    text = out.read_text()
    assert "Evicting alone only frees the old node" in text
    docs = [d for d in yaml.safe_load_all(text) if d]
    assert docs == exported.objects
