"""Kueue admission with several Topologies: each Workload's topologyAssignment names the levels
of its own flavor's Topology."""

from __future__ import annotations

from pathlib import Path

import yaml
from export_schemas import errors

from toposolve.core.plan import Binding, JobPlacement, Plan
from toposolve.formats.export.forms import export_plan
from toposolve.formats.export.source import load_export_source

DUMP = Path(__file__).resolve().parents[3] / "instances" / "kueue-two-flavors.yaml"
ZONE = "topology.kubernetes.io/zone"


def test_each_admission_names_its_flavors_topology_levels(tmp_path):
    docs = list(yaml.safe_load_all(DUMP.read_text(encoding="utf-8")))
    for doc in docs:  # cpu-topology without a hostname level: its domains are zones
        if doc["kind"] == "Topology" and doc["metadata"]["name"] == "cpu-topology":
            doc["spec"]["levels"] = [{"nodeLabel": ZONE}]
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump_all(docs), encoding="utf-8")
    source = load_export_source([str(path)], lambda _: None)
    plan = Plan(engine="test", status="FEASIBLE",
                bindings=[Binding(pod=f"default/etl-worker-{i}", node=n)
                          for i, n in enumerate(["cpu-0", "cpu-0", "cpu-1"])]
                + [Binding(pod=f"default/train-worker-{i}", node=f"gpu-{4 + i}")
                   for i in range(4)],
                jobs=[JobPlacement(job="default/etl", placed=True),
                      JobPlacement(job="default/train", placed=True)])
    objects = {o["metadata"]["name"]: o for o in export_plan(plan, "kueue-admission",
                                                             source).objects}
    assert all(errors(o) == [] for o in objects.values())

    def assignment(name: str) -> dict:
        return objects[name]["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]

    assert assignment("etl")["levels"] == [ZONE]
    assert assignment("train")["levels"] == ["kubernetes.io/hostname"]
