"""Pending reasons in Kueue's own words: messages asserted by Kueue's scheduler tests.

Each case re-creates a scenario of ``pkg/scheduler/scheduler_tas_test.go`` (kueue @ ff69552e, the
line of its ``wantEvents`` message given) as Kueue objects; the plan's ``scheduler_reason`` must
be that message, while ``reason`` stays toposolve's own blocker.
"""

from __future__ import annotations

import pytest
import yaml

from toposolve.core.assignment import to_plan
from toposolve.core.plan import Plan
from toposolve.core.problem import compile_problem
from toposolve.engines.kueue import run_kueue
from toposolve.formats.load import load_instance

GROUP = "kueue.x-k8s.io/v1beta2"
RACK = "cloud.provider.com/topology-rack"
HOST = "kubernetes.io/hostname"


def _node(name: str, allocatable: dict, rack: str | None = None) -> dict:
    labels = {"tas-node": "true", HOST: name, **({RACK: rack} if rack else {})}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": allocatable,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def _podset(name: str, count: int, cpu: str, level: str = HOST, kind: str = "required") -> dict:
    template = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}
    return {"name": name, "count": count, "template": template,
            "topologyRequest": {kind: level}}


def _cluster(topology: str, levels: list[str]) -> list[dict]:
    flavor = {"nodeLabels": {"tas-node": "true"}, "topologyName": topology}
    quota = [{"name": "cpu", "nominalQuota": "50"}]
    return [
        {"apiVersion": GROUP, "kind": "Topology", "metadata": {"name": topology},
         "spec": {"levels": [{"nodeLabel": k} for k in levels]}},
        {"apiVersion": GROUP, "kind": "ResourceFlavor", "metadata": {"name": "tas-default"},
         "spec": flavor},
        {"apiVersion": GROUP, "kind": "ClusterQueue", "metadata": {"name": "tas-main"},
         "spec": {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
             {"name": "tas-default", "resources": quota}]}]}},
        {"apiVersion": GROUP, "kind": "LocalQueue",
         "metadata": {"name": "tas-main", "namespace": "default"},
         "spec": {"clusterQueue": "tas-main"}},
    ]


def _workload(name: str, podsets: list[dict], on: str | None = None) -> dict:
    wl = {"apiVersion": GROUP, "kind": "Workload",
          "metadata": {"name": name, "namespace": "default"},
          "spec": {"queueName": "tas-main", "podSets": podsets}}
    if on is not None:  # admitted on node ``on`` (one pod)
        assignment = {"name": podsets[0]["name"], "count": 1, "topologyAssignment": {
            "levels": [HOST], "domains": [{"values": [on], "count": 1}]}}
        wl["status"] = {"admission": {"clusterQueue": "tas-main",
                                      "podSetAssignments": [assignment]}}
    return wl


SMALL = {"cpu": "1", "memory": "1Gi", "pods": "10"}
SINGLE = _cluster("tas-single-level", [HOST])
CASES = {
    # line 2135: 2 pods of 1 cpu on a 1-cpu node
    "fits only 1 of 2": (
        [*SINGLE, _node("x1", SMALL), _workload("foo", [_podset("one", 2, "1")])],
        'couldn\'t assign flavors to pod set one: topology "tas-single-level" allows to fit only '
        "1 out of 2 pod(s)",
    ),
    # line 2176: the node's cpu is held by an admitted TAS workload
    "node used by another TAS workload": (
        [*SINGLE, _node("x1", SMALL), _workload("foo", [_podset("one", 1, "1")]),
         _workload("bar-admitted", [_podset("one", 1, "1")], on="x1")],
        'couldn\'t assign flavors to pod set one: topology "tas-single-level" doesn\'t allow to '
        'fit any of 1 pod(s). Total nodes: 1; excluded: resource "cpu": 1',
    ),
    # line 2246: a running non-TAS pod takes the cpu and the one pod slot (cpu wins the tie)
    "node used by a non-TAS pod": (
        [*SINGLE, _node("x1", {**SMALL, "pods": "1"}), _workload("foo", [_podset("one", 1, "1")]),
         {"apiVersion": "v1", "kind": "Pod",
          "metadata": {"name": "test-pending", "namespace": "test-ns"},
          "spec": {"nodeName": "x1", "containers": [
              {"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]},
          "status": {"phase": "Running"}}],
        'couldn\'t assign flavors to pod set one: topology "tas-single-level" doesn\'t allow to '
        'fit any of 1 pod(s). Total nodes: 1; excluded: resource "cpu": 1',
    ),
    # line 2353: the second podset asks 7 cpu, each node has 3
    "second podset too large": (
        [*_cluster("tas-two-level", [RACK, HOST]),
         _node("x1", {"cpu": "3", "pods": "10"}, "r1"),
         _node("y1", {"cpu": "3", "pods": "10"}, "r1"),
         _workload("foo", [_podset("launcher", 1, "1", kind="preferred"),
                           _podset("worker", 1, "7", kind="preferred")])],
        'couldn\'t assign flavors to pod set worker: topology "tas-two-level" doesn\'t allow to '
        'fit any of 1 pod(s). Total nodes: 2; excluded: resource "cpu": 2',
    ),
}


def _plan(docs: list[dict], tmp_path) -> Plan:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    problem = compile_problem(load_instance(path, warn=lambda _: None))
    return to_plan(problem, run_kueue(problem), engine="kueue", status="FEASIBLE")


@pytest.mark.parametrize("name", list(CASES))
def test_kueue_event_message(name, tmp_path):
    docs, message = CASES[name]
    plan = _plan(docs, tmp_path)
    job = next(j for j in plan.jobs if j.job == "default/foo")
    assert not job.placed
    assert job.scheduler_reason == message
    assert job.reason is not None and "couldn't assign" not in job.reason


def test_scheduler_reason_round_trips_and_is_optional(tmp_path):
    docs, message = CASES["node used by another TAS workload"]
    plan = _plan(docs, tmp_path)
    data = plan.to_dict()
    entry = next(j for j in data["jobs"] if j["job"] == "default/foo")
    assert entry["scheduler_reason"] == message
    assert Plan.from_dict(data).jobs == plan.jobs
    del entry["scheduler_reason"]  # a plan written before the field: still reads
    old = next(j for j in Plan.from_dict(data).jobs if j.job == "default/foo")
    assert old.scheduler_reason is None and old.reason == entry["reason"]
    placed = _plan(SINGLE + [_node("x1", SMALL), _workload("foo", [_podset("one", 1, "1")])],
                   tmp_path)
    assert all("scheduler_reason" not in j for j in placed.to_dict()["jobs"])
