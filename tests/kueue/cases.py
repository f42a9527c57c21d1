"""Harness for Kueue's TAS test table: build the Kueue objects of a case, run the mirror, read
back each podset's assignment at the wanted levels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from toposolve.engines.kueue import run_kueue
from toposolve.io.load import load_instance
from toposolve.problem import compile_problem

DATA = Path(__file__).parent / "data" / "tas_find_topology_assignments.yaml"
GROUP = "kueue.x-k8s.io/v1beta2"


def load_cases() -> list[dict[str, Any]]:
    return yaml.safe_load(DATA.read_text())["cases"]


def documents(case: dict[str, Any]) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": n["name"], "labels": n["labels"]},
         "spec": {"unschedulable": True} if n.get("unschedulable") else {},
         "status": {"allocatable": n["allocatable"]}}
        for n in case["nodes"]
    ]
    docs += [
        {"apiVersion": GROUP, "kind": "Topology", "metadata": {"name": "default"},
         "spec": {"levels": [{"nodeLabel": k} for k in case["levels"]]}},
        {"apiVersion": GROUP, "kind": "ResourceFlavor", "metadata": {"name": "tas"}, "spec": {"topologyName": "default"}},
        {"apiVersion": GROUP, "kind": "ClusterQueue", "metadata": {"name": "cq"}, "spec": {"resourceGroups": []}},
        {"apiVersion": GROUP, "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": "default"}, "spec": {"clusterQueue": "cq"}},
    ]
    podsets = []
    for ps in case["podSets"]:
        spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": ps["requests"]}}]}
        if ps.get("nodeSelector"):
            spec["nodeSelector"] = ps["nodeSelector"]
        entry: dict[str, Any] = {"name": ps["name"], "count": ps["count"], "template": {"spec": spec}}
        if ps.get("topologyRequest"):
            entry["topologyRequest"] = ps["topologyRequest"]
        podsets.append(entry)
    docs.append({"apiVersion": GROUP, "kind": "Workload", "metadata": {"name": "w", "namespace": "default"},
                 "spec": {"queueName": "lq", "podSets": podsets}})
    return docs


def run_case(case: dict[str, Any], tmp_path: Path) -> tuple[dict[str, list[tuple[tuple[str, ...], int]]], str | None]:
    """(podset -> sorted [(values at the wanted levels, pods)], pending reason or None)."""
    path = tmp_path / "case.yaml"
    path.write_text(yaml.safe_dump_all(documents(case)))
    instance = load_instance(path, warn=lambda _: None)
    problem = compile_problem(instance)
    gates = case.get("featureGates", {})
    assignment = run_kueue(problem, least_free_capacity=gates.get("TASProfileMixed", True))
    wanted_levels = {ps["name"]: (ps.get("want") or {}).get("levels", case["levels"][-1:]) for ps in case["podSets"]}
    nodes = {n.name: n for n in instance.nodes}
    out: dict[str, dict[tuple[str, ...], int]] = {}
    for g, per_node in assignment.counts.items():
        task = problem.group_task[g]
        for n, count in per_node.items():
            labels = nodes[problem.topology.node_names[n]].labels
            key = tuple(labels.get(level, "") for level in wanted_levels[task])
            out.setdefault(task, {})
            out[task][key] = out[task].get(key, 0) + count
    reason = assignment.reasons.get(0)
    return {t: sorted(d.items()) for t, d in out.items()}, reason
