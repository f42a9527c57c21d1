"""The CEL rules of the pinned CRDs (tests/export_cel.py): each one compiles and is listed in
tests/data/schemas/README.md, an object breaking one is refused (transition rules only as an
update of a stored object), and Kueue admissions hold them all once merged onto their Workloads
with quota reserved, as an admitting controller writes them."""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path

import pytest
import yaml
from export_cel import failure, is_transition, program, rule_errors, rules
from export_schemas import CRDS, SCHEMAS, crd_version_schema, errors

from toposolve.formats.export.forms import export_plan
from toposolve.formats.export.source import load_export_source
from toposolve.solve import solve

KUEUE = str(Path(__file__).resolve().parents[3] / "instances" / "kueue-gke.yaml")
VERSIONS = [("kueue.x-k8s.io", "v1beta2"), ("kueue.x-k8s.io", "v1beta1"),
            ("jobset.x-k8s.io", "v1alpha2"), ("kubeflow.org", "v1"),
            ("leaderworkerset.x-k8s.io", "v1"), ("scheduling.run.ai", "v1alpha2")]
QUOTA_RESERVED = {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
                  "message": "admitted by toposolve's plan",
                  "lastTransitionTime": "2026-01-01T00:00:00Z"}


def test_the_versions_cover_every_pinned_crd():
    assert {group for group, _ in VERSIONS} == set(CRDS)


@pytest.mark.parametrize(("group", "version"), VERSIONS)
def test_every_rule_is_listed_in_the_readme_and_compiles(group, version):
    readme = (SCHEMAS / "README.md").read_text()
    for path, rule in rules(crd_version_schema(group, version)):
        program(rule["rule"])  # raises on a rule that is not CEL
        # transition rules run where a test gives the stored object: Kueue admissions
        evaluated = ("yes" if not is_transition(rule) else "on update" if group == "kueue.x-k8s.io"
                     else "no: transition rule")
        row = f"| {group} {version} | `{path or '(root)'}` | `{rule['message']}` | {evaluated} |"
        assert row in readme


@cache
def _pending_workloads() -> dict[str, dict]:
    source = load_export_source([KUEUE], lambda _: None)
    return {d.body["metadata"]["name"]: d.body for d in source.docs
            if d.body["kind"] == "Workload"}


@cache
def _admitted_workloads(api: str) -> list[dict]:
    """Each exported admission merged onto its Workload from the dump, with the QuotaReserved
    condition an admitting controller sets beside it."""
    source = load_export_source([KUEUE], lambda _: None)
    objects = export_plan(solve(source.instance, "kueue"), "kueue-admission", source,
                          kueue_api=api).objects
    merged = []
    for obj in objects:
        workload = copy.deepcopy(_pending_workloads()[obj["metadata"]["name"]])
        workload["apiVersion"] = obj["apiVersion"]
        status = workload.setdefault("status", {})
        status["admission"] = obj["status"]["admission"]
        status["conditions"] = [c for c in status.get("conditions", [])
                                if c["type"] != "QuotaReserved"] + [QUOTA_RESERVED]
        merged.append(workload)
    assert merged
    return merged


@pytest.mark.parametrize("api", ["v1beta2", "v1beta1"])
def test_exported_admissions_hold_every_rule_on_their_admitted_workloads(api):
    workloads = _admitted_workloads(api)
    schema = crd_version_schema("kueue.x-k8s.io", api)
    for workload in workloads:
        name = workload["metadata"]["name"]
        assert rule_errors(workload, schema) == [], name
        # and as the update of the pending Workload it is, transition rules included
        stored = {**_pending_workloads()[name], "apiVersion": workload["apiVersion"]}
        assert rule_errors(workload, schema, stored) == [], name


@pytest.mark.parametrize("api", ["v1beta2", "v1beta1"])
def test_a_queue_change_of_a_workload_with_quota_reserved_is_refused_as_an_update(api):
    stored = _admitted_workloads(api)[0]
    moved = copy.deepcopy(stored)
    moved["spec"]["queueName"] += "-other"
    schema = crd_version_schema("kueue.x-k8s.io", api)
    assert rule_errors(moved, schema) == []  # a create: transition rules do not run
    assert rule_errors(moved, schema, stored) == [
        ": queueName is immutable while workload quota reserved (false)"]


@pytest.mark.parametrize("api", ["v1beta2", "v1beta1"])
def test_an_admission_whose_podset_count_contradicts_the_spec_is_refused(api):
    workload = copy.deepcopy(_admitted_workloads(api)[0])
    workload["spec"]["podSets"].append({**copy.deepcopy(workload["spec"]["podSets"][0]),
                                        "name": "extra"})
    assert rule_errors(workload, crd_version_schema("kueue.x-k8s.io", api)) == [
        ": podSetAssignments must have the same number of podSets as the spec (false)"]


def _slice(workload: dict) -> dict:
    return workload["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"][
        "slices"][0]


def test_a_slice_whose_pod_counts_contradict_its_domain_count_is_refused():
    # slices and valuesPerLevel are v1beta2's form; v1beta1's domains carry no rule
    workload = copy.deepcopy(_admitted_workloads("v1beta2")[0])
    _slice(workload)["domainCount"] += 1
    found = errors(workload)
    where = "status.admission.podSetAssignments.0.topologyAssignment.slices.0"
    assert f"{where}: podCounts.individual must have length equal to domainCount (false)" \
        in found
    assert any(e.startswith(f"{where}: valuesPerLevel.individual, if set, must have roots")
               for e in found)


def test_a_level_with_both_universal_and_individual_values_is_refused():
    # slices and valuesPerLevel are v1beta2's form; v1beta1's domains carry no rule
    workload = copy.deepcopy(_admitted_workloads("v1beta2")[0])
    _slice(workload)["valuesPerLevel"][0]["universal"] = "x"
    assert errors(workload) == [
        "status.admission.podSetAssignments.0.topologyAssignment.slices.0.valuesPerLevel.0: "
        "exactly one of the fields in [universal individual] must be set (false)"]


def test_defaults_apply_before_the_rules_and_a_missing_field_fails_a_rule():
    schema = crd_version_schema("kueue.x-k8s.io", "v1beta2")
    podset = {"name": "main", "minCount": 2, "template": {"spec": {"containers": []}}}
    workload = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
                "metadata": {"name": "w"}, "spec": {"podSets": [podset]}}
    # count defaults to 1, so minCount 2 exceeds it
    assert rule_errors(workload, schema) == [
        "spec.podSets.0: minCount should be positive and less or equal to count (false)"]
    assert rule_errors({**workload, "spec": {"podSets": [{**podset, "count": 2}]}},
                       schema) == []
    # a rule reading a field the object lacks is an error, which the API server refuses
    ref = {"podSets": [{**podset, "count": 2}], "priority": 1,
           "priorityClassRef": {"name": "p", "kind": "PriorityClass"}}
    found = rule_errors({**workload, "spec": ref}, schema)
    assert len(found) == 2 and all(e.startswith("spec.priorityClassRef: only the ")
                                   and "(error: " in e for e in found)


def test_a_kubernetes_library_function_the_evaluator_lacks_fails_the_rule():
    # no pinned rule calls one (README); a CRD update that does fails loudly, not silently
    assert failure("self.isSorted()", [1, 2]).startswith("error: undeclared reference")
    assert failure("self.all(x, x > 0)", [1, 2]) is None
    assert failure("size(self) == 3", [1, 2]) == "false"


def test_a_podset_of_count_0_gets_its_assignment_so_the_admitted_workload_holds_the_rules(
        tmp_path):
    docs = list(yaml.safe_load_all(Path(KUEUE).read_text()))
    workload = next(d for d in docs if d["kind"] == "Workload"
                    and d["metadata"]["name"] == "job-005")  # one podset, no slices
    assert "admission" not in workload.get("status", {})
    idle = {**copy.deepcopy(workload["spec"]["podSets"][0]), "name": "idle", "count": 0}
    idle.pop("topologyRequest", None)
    workload["spec"]["podSets"].append(idle)
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump_all(docs))
    source = load_export_source([str(dump)], lambda _: None)
    plan = solve(source.instance, "kueue")
    for api in ("v1beta2", "v1beta1"):
        exported = next(o for o in export_plan(plan, "kueue-admission", source,
                                               kueue_api=api).objects
                        if o["metadata"]["name"] == "job-005")
        entries = exported["status"]["admission"]["podSetAssignments"]
        assert [(e["name"], e["count"], "topologyAssignment" in e) for e in entries] == [
            ("worker", 2, True), ("idle", 0, False)]  # as Kueue writes them
        admitted = {**copy.deepcopy(workload), "apiVersion": exported["apiVersion"]}
        admitted["status"] = {"admission": exported["status"]["admission"],
                              "conditions": [QUOTA_RESERVED]}
        # the dump's spec is v1beta2's (priorityClassRef): the rules alone for v1beta1
        assert rule_errors(admitted, crd_version_schema("kueue.x-k8s.io", api)) == []
        # read back, the admitted Workload holds its two planned pods and nothing for idle
        docs_again = [admitted if d is workload else d for d in docs]
        dump.write_text(yaml.safe_dump_all(docs_again))
        job = next(j for j in load_export_source([str(dump)], lambda _: None).instance.jobs
                   if j.name == "job-005")
        assert [(t.name, len(t.running)) for t in job.tasks] == [("worker", 2), ("idle", 0)]


def test_an_update_pairs_list_map_items_by_their_keys_not_their_places():
    schema = crd_version_schema("jobset.x-k8s.io", "v1alpha2")

    def jobset(*jobs: dict) -> dict:
        return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                "metadata": {"name": "j"}, "spec": {"replicatedJobs": list(jobs)}}

    launcher = {"name": "launcher", "template": {}}
    workers = {"name": "workers", "template": {},
               "dependsOn": [{"name": "launcher", "status": "Ready"}]}
    changed = {**workers, "dependsOn": [{"name": "launcher", "status": "Complete"}]}
    stored = jobset(launcher, workers)
    assert rule_errors(jobset(workers, launcher), schema, stored) == []  # reordered only
    assert rule_errors(jobset(changed, launcher), schema, stored) == [
        "spec.replicatedJobs.0.dependsOn: Value is immutable (false)"]
    assert rule_errors(jobset(changed, launcher), schema) == []  # a create
