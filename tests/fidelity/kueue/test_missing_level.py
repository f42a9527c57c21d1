"""A workload requesting a level no flavor's Topology has (data/missing_level.yaml): Kueue leaves
it pending with its NoMatchingFlavor message, reproduced word for word by the ``kueue`` engine;
every other engine leaves it pending too, with toposolve's own reason."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from scheduler_docs import write_docs

import toposolve
from toposolve.engines.common.missing_level import missing_level_reason
from toposolve.engines.registry import engine_names
from toposolve.formats.load import load_instance

DATA = yaml.safe_load((Path(__file__).parent / "data" / "missing_level.yaml").read_text())
API = "kueue.x-k8s.io/v1beta2"


def _obj(kind: str, name: str, spec: dict, namespace: str | None = None) -> dict:
    meta = {"name": name} | ({"namespace": namespace} if namespace else {})
    return {"apiVersion": API, "kind": kind, "metadata": meta, "spec": spec}


def case_docs(case: dict) -> list[dict]:
    """The Go test's objects as a user's dump: the node, Topology, flavor, queues, workload."""
    node, topology, flavor, cq = (case[k] for k in ("node", "topology", "flavor",
                                                     "cluster_queue"))
    podsets = [{"name": p["name"], "count": p["count"],
                "topologyRequest": {"required": p["required"]},
                "template": {"spec": {"containers": [
                    {"name": "c", "resources": {"requests": {"cpu": p["cpu"]}}}]}}}
               for p in case["podsets"]]
    return [
        {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": node["name"], "labels": node["labels"]},
         "status": {"allocatable": node["allocatable"],
                    "conditions": [{"type": "Ready", "status": "True"}]}},
        _obj("Topology", topology["name"],
             {"levels": [{"nodeLabel": k} for k in topology["levels"]]}),
        _obj("ResourceFlavor", flavor["name"], {"nodeLabels": flavor["nodeLabels"],
                                                "topologyName": flavor["topologyName"]}),
        _obj("ClusterQueue", cq["name"], {"resourceGroups": [{
            "coveredResources": ["cpu"],
            "flavors": [{"name": cq["flavor"],
                         "resources": [{"name": "cpu", "nominalQuota": cq["cpu"]}]}]}]}),
        _obj("LocalQueue", cq["name"], {"clusterQueue": cq["name"]}, "default"),
        _obj("Workload", "foo", {"queueName": cq["name"], "podSets": podsets}, "default"),
    ]


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda c: c["test"])
def test_kueue_leaves_it_pending_with_kueues_message(tmp_path, case):
    lines: list[str] = []
    inst = load_instance(write_docs(tmp_path, case_docs(case)), warn=lines.append)
    level = case["podsets"][0]["required"]
    assert any("Workload/default/foo" in x and repr(level) in x for x in lines)
    plan = toposolve.solve(inst, "kueue")  # checked inside
    (entry,) = plan.jobs
    assert entry.placed is case["want_admitted"] and not plan.bindings
    assert entry.scheduler_reason == case["want"]
    assert entry.reason == missing_level_reason(level)


@pytest.mark.parametrize("engine", [e for e in engine_names(aliases=False) if e != "kueue"])
def test_every_other_engine_leaves_it_pending_with_toposolves_reason(tmp_path, engine):
    (case,) = DATA["cases"]
    inst = load_instance(write_docs(tmp_path, case_docs(case)), warn=lambda _: None)
    plan = toposolve.solve(inst, engine)
    (entry,) = plan.jobs
    assert not entry.placed and not plan.bindings
    assert entry.reason == missing_level_reason(case["podsets"][0]["required"])
    assert entry.scheduler_reason is None
