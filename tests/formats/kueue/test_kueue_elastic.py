"""Elastic workload slices: a pending Workload that replaces an admitted slice keeps the replaced
slice's pods where they run and places only the delta — read, respected by every engine, and
checked."""

from __future__ import annotations

import pytest
import yaml

import toposolve
from tests.fidelity.kueue.cases import documents, load_cases
from tests.kueue_elastic_dump import elastic_dump as _docs
from toposolve.check.checker import check_plan
from toposolve.core.errors import InputError
from toposolve.formats.kueue.elastic import REPLACEMENT_FOR
from toposolve.formats.kueue.writer import PREVIOUS_SLICE, kueue_documents
from toposolve.formats.load import load_instance


def _write(tmp_path, docs):
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


def _load(tmp_path, docs, warnings=None):
    sink = warnings.append if warnings is not None else lambda _: None
    return load_instance(_write(tmp_path, docs), warn=sink)


def test_scale_up_keeps_the_replaced_pods_and_leaves_the_delta_pending(tmp_path):
    inst = _load(tmp_path, _docs())
    assert [j.key for j in inst.jobs] == ["default/w-2"]  # the replaced slice is no job
    (task,) = inst.jobs[0].tasks
    assert task.replicas == 4
    assert task.running == {0: "x1", 1: "x1"}  # its pods (the Pods of w-1) are counted once


def test_scale_down_keeps_the_first_pods_in_assignment_order(tmp_path):
    inst = _load(tmp_path, _docs(count=3, previous=(("x2", 2), ("x1", 2))))
    (task,) = inst.jobs[0].tasks
    assert task.replicas == 3
    assert task.running == {0: "x2", 1: "x2", 2: "x1"}  # Kueue's TruncateAssignment


def test_stale_previous_assignment_places_the_slice_afresh(tmp_path):
    warnings: list[str] = []
    inst = _load(tmp_path, _docs(previous=(("gone", 2),)), warnings)
    assert [j.key for j in inst.jobs] == ["default/w-2"]
    assert inst.jobs[0].tasks[0].running == {}
    assert any("not in the input: placed afresh" in w for w in warnings)


def test_reference_to_no_admitted_workload_is_a_new_workload_with_a_warning(tmp_path):
    warnings: list[str] = []
    inst = _load(tmp_path, _docs(reference="default/w-0"), warnings)
    assert sorted(j.key for j in inst.jobs) == ["default/w-1", "default/w-2"]
    (new,) = [j for j in inst.jobs if j.key == "default/w-2"]
    assert new.tasks[0].running == {}
    assert any(REPLACEMENT_FOR in w and "placed as a new Workload" in w for w in warnings)


@pytest.mark.parametrize("reference", ["w-1", "default/", "/w-1", "a/b/c"])
def test_malformed_reference_is_a_one_line_error_naming_the_annotation(tmp_path, reference):
    with pytest.raises(InputError) as err:
        _load(tmp_path, _docs(reference=reference))
    text = str(err.value)
    assert "\n" not in text and "default/w-2" in text
    assert f"metadata.annotations.{REPLACEMENT_FOR}" in text and "<namespace>/<name>" in text


@pytest.mark.parametrize("engine", ["kueue", "cpsat", "volcano", "kai"])
def test_every_engine_places_only_the_delta_and_passes_the_checker(tmp_path, engine):
    inst = _load(tmp_path, _docs())
    plan = toposolve.solve(inst, engine=engine)
    assert check_plan(inst, plan) == []
    (job,) = plan.jobs
    assert job.placed
    new_pods = [b for b in plan.bindings if b.pod.startswith("default/w-2")]
    assert len(new_pods) == 2  # the delta; the two kept pods stay on x1
    assert all(b.node != "x1" for b in new_pods)  # x1 is full with the kept pods


def test_required_podset_keeps_no_previous_pods(tmp_path):
    docs = _docs()
    (new,) = [d for d in docs if d["metadata"]["name"] == "w-2"]
    new["spec"]["podSets"][0]["topologyRequest"] = {"required": "block"}
    inst = _load(tmp_path, docs)
    assert [j.key for j in inst.jobs] == ["default/w-2"]
    # Kueue takes a previous assignment for unconstrained podsets only: all 4 pods are pending
    assert inst.jobs[0].tasks[0].running == {}


def test_a_slice_is_replaced_once_the_second_claimant_is_a_new_workload(tmp_path):
    docs = _docs()
    (new,) = [d for d in docs if d["metadata"]["name"] == "w-2"]
    docs.append({**new, "metadata": {**new["metadata"], "name": "w-3"}})
    warnings: list[str] = []
    inst = _load(tmp_path, docs, warnings)
    running = {j.name: j.tasks[0].running for j in inst.jobs}
    assert running == {"w-2": {0: "x1", 1: "x1"}, "w-3": {}}  # the kept pods are counted once
    assert any("default/w-3" in w and "replaced by w-2 already" in w for w in warnings)


ELASTIC_CASES = [c for c in load_cases() if c["name"].startswith("elastic workload")]


@pytest.mark.parametrize("engine", ["kueue", "cpsat", "volcano", "kai"])
@pytest.mark.parametrize("case", ELASTIC_CASES, ids=[c["name"][:60] for c in ELASTIC_CASES])
def test_every_engine_keeps_the_kept_pods_on_kueues_elastic_cases(tmp_path, engine, case):
    """Kueue's 8 elastic cases (leader groups, scale-down, stale) through every engine: each plan
    passes the checker and binds only the new slice's pending pods."""
    inst = _load(tmp_path, documents(case))
    (job,) = [j for j in inst.jobs if j.name == "w"]
    pending = sum(t.replicas - len(t.running) for t in job.tasks)
    plan = toposolve.solve(inst, engine=engine)
    assert check_plan(inst, plan) == []
    assert len([b for b in plan.bindings if b.pod.startswith("default/w-")]) == pending


def test_writer_gives_a_partly_running_job_back_as_an_elastic_slice(tmp_path):
    inst = _load(tmp_path, _docs(count=5))
    docs = kueue_documents(inst, warn=lambda _: None)
    workloads = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Workload"}
    assert set(workloads) == {"w-2", f"w-2{PREVIOUS_SLICE}"}
    assert workloads["w-2"]["metadata"]["annotations"] == {
        REPLACEMENT_FOR: f"default/w-2{PREVIOUS_SLICE}"}
    back = load_instance(_write(tmp_path, docs), warn=lambda _: None)
    (job,) = back.jobs
    assert job.key == "default/w-2" and job.tasks[0].replicas == 5
    assert sorted(job.tasks[0].running.values()) == ["x1", "x1"]
    plan = toposolve.solve(back, engine="kueue")
    assert check_plan(back, plan) == [] and plan.jobs[0].placed


def test_hostile_count_of_the_replaced_slice_is_refused_before_anything_is_built(tmp_path):
    docs = _docs()
    (old,) = [d for d in docs if d["metadata"]["name"] == "w-1"]
    assignment = old["status"]["admission"]["podSetAssignments"][0]
    assignment["count"] = 10**15
    assignment["topologyAssignment"]["domains"][0]["count"] = 10**15
    with pytest.raises(InputError) as err:
        _load(tmp_path, docs)
    text = str(err.value)
    assert "default/w-1" in text and "podSetAssignments[0].count: must be at most" in text
