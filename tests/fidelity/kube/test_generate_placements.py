"""kube-scheduler's ``TestGeneratePlacements`` table (data/README.md) against the kube reader
and the engine's candidate placements (of a PodGroup, or of a CompositePodGroup hierarchy's
root).

toposolve's parent placement is always the whole cluster (the workload cycle's top level); the
upstream cases give a smaller parent placement, which the harness applies as upstream does: the
candidate domains' nodes are intersected with the parent's, and empty ones dropped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from toposolve.core.problem import compile_problem
from toposolve.engines.kube.composite import hierarchy
from toposolve.engines.kube.placement import Domains, candidates, placements_of
from toposolve.formats.load import instance_from_bodies

DATA = Path(__file__).parent / "data" / "generate_placements.yaml"
TABLE = yaml.safe_load(DATA.read_text())["cases"]
CASES = [c for c in TABLE if "listed" not in c]
ALL = "test-placement"  # upstream's name of the parent placement


def _node(n: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": n["name"], "labels": n.get("labels", {})},
            "status": {"allocatable": {"cpu": "4"}}}


def _pod(name: str, node: str | None, group: str = "pg") -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingGroup": {"podGroupName": group},
                            "containers": [{"name": "c",
                                            "resources": {"requests": {"cpu": "1"}}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns"},
            "spec": spec, "status": {"phase": "Running" if node else "Pending"}}


def case_objects(case: dict[str, Any]) -> list[dict[str, Any]]:
    """Nodes, the PodGroup ``ns/pg``, its scheduled pods and one pending pod."""
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": 1}}}
    if case["key"] is not None:
        spec["schedulingConstraints"] = {"topology": [{"key": case["key"]}]}
    docs = [_node(n) for n in case["placement_nodes"] + case.get("other_nodes", [])]
    docs.append({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                 "metadata": {"name": "pg", "namespace": "ns"}, "spec": spec})
    docs += [_pod(f"pod{i}", n) for i, n in enumerate(case.get("scheduled", []))]
    return [*docs, _pod("pending", None)]


def composite_objects(case: dict[str, Any]) -> list[dict[str, Any]]:
    """Nodes, the CompositePodGroup ``ns/cpg``, the CompositePodGroups and PodGroups on its
    scheduled pods' paths, those pods, and one pending pod in ``ns/pending`` below cpg."""

    def group(kind: str, name: str, parent: str, key: str | None = None) -> dict[str, Any]:
        policy = {"minGroupCount": 1} if kind == "CompositePodGroup" else {"minCount": 1}
        spec: dict[str, Any] = {"schedulingPolicy": {"gang": policy}}
        if parent:
            spec["parentCompositePodGroupName"] = parent
        if key is not None:
            spec["schedulingConstraints"] = {"topology": [{"key": key}]}
        return {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": kind,
                "metadata": {"name": name, "namespace": "ns"}, "spec": spec}

    docs = [_node(n) for n in case["placement_nodes"] + case.get("other_nodes", [])]
    docs += [group("CompositePodGroup", "cpg", "", case["key"]),
             group("PodGroup", "pending", "cpg")]
    made = set()
    for i, item in enumerate(case.get("scheduled", [])):
        pg, mid = item["path"]
        if mid not in made:
            docs.append(group("CompositePodGroup", mid, "cpg"))
        if pg not in made:
            docs.append(group("PodGroup", pg, mid))
        made |= {pg, mid}
        docs.append(_pod(f"pod{i}", item["node"], pg))
    return [*docs, _pod("waiting", None, "pending")]


def generated(case: dict[str, Any]) -> dict[str, list[str]] | str:
    """Placements as {domain value: node names within the parent placement}, or "error"."""
    warnings: list[str] = []
    objects = composite_objects(case) if case.get("composite") else case_objects(case)
    instance = instance_from_bodies([(d, "case.yaml") for d in objects], "case", warnings.append)
    if not instance.jobs:
        assert any("no node carries topology key" in w for w in warnings), warnings
        return {}
    problem = compile_problem(instance)
    domains = Domains(problem)
    if case.get("composite"):  # the placements of the hierarchy's root: cpg
        root = hierarchy(problem, 0)
        found = placements_of(problem, domains, root.limit, root.groups)
    else:
        found = candidates(problem, domains, 0)
    if isinstance(found, str):
        return "error"
    parent = {n["name"] for n in case["placement_nodes"]}
    names = problem.topology.node_names
    labels = {n.name: n.labels for n in instance.nodes}
    out: dict[str, list[str]] = {}
    for d in found:
        nodes = [names[n] for n in domains.nodes(d, None) if names[n] in parent]
        if nodes:
            out[ALL if d is None else labels[nodes[0]][case["key"]]] = nodes
    return out


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_generate_placements(case):
    assert generated(case) == case["want"]


def test_every_upstream_case_is_ported_or_listed():
    assert len(TABLE) == 18 and len(CASES) == 18
