"""Kueue's NoMatchingFlavor wording (``engines/kueue/no_flavor.py``) for workloads of several
podsets: only the podsets naming a level their flavor's Topology lacks are listed, in podset
order, and the workload stays pending whole."""

from __future__ import annotations

from scheduler_docs import kueue_docs, podset, workload, write_docs

import toposolve
from toposolve.engines.kueue.no_flavor import NO_LEVEL
from toposolve.formats.load import load_instance

LEVELS = ["block", "kubernetes.io/hostname"]


def solve(tmp_path, podsets):
    inst = load_instance(write_docs(tmp_path, kueue_docs(LEVELS, workload(podsets))),
                         warn=lambda _: None)
    return toposolve.solve(inst, "kueue")  # checked inside


def test_only_the_podset_naming_the_missing_level_is_listed(tmp_path):
    plan = solve(tmp_path, [podset("a", 2, {"required": "block"}),
                            podset("b", 2, {"required": "rack"}),
                            podset("c", 1)])
    (entry,) = plan.jobs
    assert not entry.placed and not plan.bindings  # the other podsets wait with it
    assert entry.scheduler_reason == ("couldn't assign flavors to pod set b: "
                                      + NO_LEVEL.format(flavor="f"))


def test_each_failing_podset_gets_its_own_clause(tmp_path):
    plan = solve(tmp_path, [podset("a", 2, {"required": "rack"}),
                            podset("b", 2, {"preferred": "zone"})])
    clauses = plan.jobs[0].scheduler_reason.split("; ")
    assert clauses == [f"couldn't assign flavors to pod set {p}: " + NO_LEVEL.format(flavor="f")
                       for p in ("a", "b")]


def test_a_podset_group_with_a_missing_level_lists_both_podsets(tmp_path):
    group = {"required": "rack", "podSetGroupName": "g"}
    plan = solve(tmp_path, [podset("leader", 1, group), podset("workers", 3, group)])
    assert [c.split(":")[0] for c in plan.jobs[0].scheduler_reason.split("; ")] == [
        "couldn't assign flavors to pod set leader", "couldn't assign flavors to pod set workers"]


def test_an_admitted_workload_naming_a_missing_level_keeps_its_pods(tmp_path):
    """Its admission stands (an admission is not re-checked against the request): the running pods
    hold their node and nothing is placed."""
    status = {"admission": {"clusterQueue": "cq", "podSetAssignments": [{
        "name": "main", "count": 2, "topologyAssignment": {
            "levels": ["kubernetes.io/hostname"], "domains": [{"values": ["n1"], "count": 2}]}}]}}
    docs = kueue_docs(LEVELS, workload([podset("main", 2, {"required": "rack"})], status))
    inst = load_instance(write_docs(tmp_path, docs), warn=lambda _: None)
    (job,) = inst.jobs
    assert job.network_topology.missing_level == "rack"
    assert sorted(job.tasks[0].running.values()) == ["n1", "n1"]
    for engine in ("kueue", "volcano", "cpsat"):
        plan = toposolve.solve(inst, engine)
        assert not plan.bindings and not [j for j in plan.jobs if j.reason]
