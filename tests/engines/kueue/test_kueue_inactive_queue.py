"""Workloads of a ClusterQueue Kueue marks inactive (a flavor naming a Topology the input lacks,
``TopologyNotFound``; issue 23) stay pending in every engine; the kueue engine words them as
Kueue's scheduler does (kueue@ff69552 ``pkg/scheduler/scheduler.go:680``, asserted in
``test/integration/singlecluster/controller/core/workload_controller_test.go:802``)."""

from __future__ import annotations

import pytest
from scheduler_docs import inactive_queue_docs, write_docs

import toposolve
from toposolve.check.checker import check_plan
from toposolve.engines.common.missing_level import never_placed_reason
from toposolve.engines.registry import engine_names
from toposolve.formats.load import load_instance

WHY = "ClusterQueue cq2 is inactive"


def _load(tmp_path, missing="gone", without_w2=False):
    docs = [d for d in inactive_queue_docs(missing)
            if not (without_w2 and d["metadata"]["name"] == "w2")]
    path = write_docs(tmp_path, docs, f"{missing}-{without_w2}.yaml")
    return load_instance(path, warn=lambda _: None)


def _own(plan, job):
    pods = {f"default/{job}-main-{i}" for i in range(4)}
    return sorted((b.pod, b.node) for b in plan.bindings if b.pod in pods)


@pytest.mark.parametrize("engine", engine_names(aliases=False))
def test_every_engine_leaves_the_workload_pending_and_places_the_other_as_alone(tmp_path,
                                                                                engine):
    plan = toposolve.solve(_load(tmp_path), engine)
    job = plan.job("default/w2")
    assert not job.placed and job.reason == never_placed_reason(WHY)
    # the same workload in an active queue is placed
    assert toposolve.solve(_load(tmp_path, missing=None), engine).job("default/w2").placed
    alone = toposolve.solve(_load(tmp_path, without_w2=True), engine)
    assert _own(plan, "w") == _own(alone, "w") and len(_own(plan, "w")) == 4


def test_kueue_says_the_cluster_queue_is_inactive(tmp_path):
    job = toposolve.solve(_load(tmp_path), "kueue").job("default/w2")
    assert job.scheduler_reason == WHY


def test_the_checker_refuses_a_pod_of_the_inactive_queue(tmp_path):
    placed = toposolve.solve(_load(tmp_path, missing=None), "kueue")
    found = {str(v) for v in check_plan(_load(tmp_path), placed)}
    assert {f"tier: Pod/default/w2-main-{i}: its constraint is never placed: {WHY}"
            for i in range(2)} <= found


@pytest.mark.parametrize("engine", engine_names(aliases=False))
def test_an_admitted_workload_of_the_inactive_queue_keeps_its_running_pods(tmp_path, engine):
    docs = inactive_queue_docs()
    docs[-1]["status"] = {"admission": {"clusterQueue": "cq2", "podSetAssignments": [
        {"name": "main", "count": 2, "topologyAssignment": {
            "levels": ["kubernetes.io/hostname"],
            "domains": [{"values": ["n2"], "count": 2}]}}]}}
    inst = load_instance(write_docs(tmp_path, docs), warn=lambda _: None)
    (w2,) = [job for job in inst.jobs if job.name == "w2"]
    assert w2.tasks[0].running == {0: "n2", 1: "n2"}
    plan = toposolve.solve(inst, engine)  # checked: running pods are no violation
    assert not [b for b in plan.bindings if b.pod.startswith("default/w2-")]
    assert not plan.evictions and len(_own(plan, "w")) == 4
