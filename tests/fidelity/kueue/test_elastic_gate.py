"""Kueue's elastic Workload cases (data/elastic_gate.yaml): with
``ElasticJobsViaWorkloadSlicesWithTAS`` on, a podset with a required or preferred topology holds
the Workload pending with Kueue's podset error; off (Kueue's default), it is placed."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import toposolve
from toposolve.core.assignment import to_plan
from toposolve.core.problem import compile_problem
from toposolve.engines.kueue import run_kueue
from toposolve.formats.load import load_instance

DATA = yaml.safe_load((Path(__file__).parent / "data" / "elastic_gate.yaml").read_text())
GROUP = "kueue.x-k8s.io/v1beta2"
HOST = "kubernetes.io/hostname"


def _documents(podsets: list[dict]) -> list[dict]:
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "x1", "labels": {"tas": "true", HOST: "x1"}},
            "status": {"allocatable": {"cpu": "4", "pods": "10"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}
    quota = [{"name": "cpu", "nominalQuota": "4"}]
    sets = [{"name": p["name"], "count": p["count"],
             "template": {"spec": {"containers": [{"name": "c", "resources": {
                 "requests": {"cpu": "1"}}}]}},
             **({"topologyRequest": {p["kind"]: HOST}} if p["kind"] != "unconstrained" else
                {"topologyRequest": {"unconstrained": True}})} for p in podsets]
    return [
        {"apiVersion": GROUP, "kind": "Topology", "metadata": {"name": "default"},
         "spec": {"levels": [{"nodeLabel": HOST}]}},
        {"apiVersion": GROUP, "kind": "ResourceFlavor", "metadata": {"name": "tas"},
         "spec": {"nodeLabels": {"tas": "true"}, "topologyName": "default"}},
        {"apiVersion": GROUP, "kind": "ClusterQueue", "metadata": {"name": "cq"},
         "spec": {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
             {"name": "tas", "resources": quota}]}]}},
        {"apiVersion": GROUP, "kind": "LocalQueue", "metadata": {"name": "lq",
                                                                 "namespace": "default"},
         "spec": {"clusterQueue": "cq"}},
        node,
        {"apiVersion": GROUP, "kind": "Workload",
         "metadata": {"name": "wl", "namespace": "default",
                      "annotations": {"kueue.x-k8s.io/elastic-job": "true"}},
         "spec": {"queueName": "lq", "podSets": sets}},
    ]


def _entry(case: dict, tmp_path, gate: bool):
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(_documents(case["podsets"])))
    problem = compile_problem(load_instance(path, warn=lambda _: None))
    plan = to_plan(problem, run_kueue(problem, elastic_slices=gate), engine="kueue",
                   status="FEASIBLE")
    return plan.job("default/wl")


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda c: c["test"])
def test_elastic_workload_with_the_gate_on(case, tmp_path):
    entry = _entry(case, tmp_path, gate=True)
    if case["error"] is None:
        assert entry.placed
        return
    want = case["error"]
    assert not entry.placed
    assert entry.scheduler_reason == (
        f"failed to assign flavors to pod set {want['podset']}: {want['text']}")
    assert entry.reason == f"podset {want['podset']!r}: {want['text']}"


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda c: c["test"])
def test_elastic_workload_with_the_gate_off_is_placed(case, tmp_path):
    assert _entry(case, tmp_path, gate=False).placed


def test_the_gate_comes_from_a_profile(tmp_path):
    case = DATA["cases"][0]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(_documents(case["podsets"])))
    profile = tmp_path / "profile.yaml"
    profile.write_text("kueue:\n  feature_gates:\n    ElasticJobsViaWorkloadSlicesWithTAS: true\n")
    instance = load_instance(path, warn=lambda _: None)
    held = toposolve.solve(instance, "kueue", toposolve.load_profile(profile)).job("default/wl")
    assert not held.placed and "ElasticJobsViaWorkloadSlices" in held.scheduler_reason
    assert toposolve.solve(instance, "kueue").job("default/wl").placed  # Kueue's default: off
