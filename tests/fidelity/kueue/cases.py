"""Harness for Kueue's TAS test table: build the Kueue objects of a case, run the mirror, read
back each podset's assignment at the wanted levels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from toposolve.check.checker import check_plan
from toposolve.core.assignment import to_plan
from toposolve.core.problem import compile_problem
from toposolve.engines.kueue import run_kueue
from toposolve.formats.kueue.elastic import REPLACEMENT_FOR
from toposolve.formats.load import load_instance

DATA = Path(__file__).parent / "data" / "tas_find_topology_assignments.yaml"
GROUP = "kueue.x-k8s.io/v1beta2"


def load_cases() -> list[dict[str, Any]]:
    return yaml.safe_load(DATA.read_text())["cases"]


def _node(n: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {"unschedulable": True} if n.get("unschedulable") else {}
    if n.get("taints"):
        spec["taints"] = n["taints"]
    ready = "False" if n.get("ready") is False else "True"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": n["name"], "labels": n["labels"]},
        "spec": spec,
        "status": {
            "allocatable": n["allocatable"],
            "conditions": [{"type": "Ready", "status": ready}],
        },
    }


def _pod(p: dict[str, Any]) -> dict[str, Any]:
    """A non-TAS pod (no Workload): it holds capacity where it is bound, as in Kueue's cache."""
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": p["requests"]}}]}
    if p.get("nodeName"):
        spec["nodeName"] = p["nodeName"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": p["name"], "namespace": p["namespace"]},
        "spec": spec,
        "status": {"phase": p.get("phase", "Pending")},
    }


def _queue_objects(name: str, flavor: dict[str, Any]) -> list[dict[str, Any]]:
    """A ResourceFlavor and the ClusterQueue using it (no nominal quota: quota plays no part
    here)."""
    return [
        {"apiVersion": GROUP, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": flavor},
        {
            "apiVersion": GROUP,
            "kind": "ClusterQueue",
            "metadata": {"name": f"cq-{name}"},
            "spec": {
                "resourceGroups": [
                    {"coveredResources": [], "flavors": [{"name": name, "resources": []}]}
                ]
            },
        },
    ]


def _prior_workload(case: dict[str, Any], k: int, usage: dict[str, Any]) -> dict[str, Any]:
    """Usage held before the case (``priorOwnUsage`` / ``priorFlavorUsage``) as an admitted
    Workload."""
    levels = case["levels"][-len(usage["values"]) :]
    flavor = "tas" if usage["flavor"] == "own" else "sibling"
    template = {
        "spec": {"containers": [{"name": "c", "resources": {"requests": usage["requests"]}}]}
    }
    assignment = {
        "name": "main",
        "count": usage["count"],
        "topologyAssignment": {
            "levels": levels,
            "domains": [{"values": usage["values"], "count": usage["count"]}],
        },
    }
    return {
        "apiVersion": GROUP,
        "kind": "Workload",
        "metadata": {"name": f"prior-{k}", "namespace": "default"},
        "spec": {
            "queueName": "lq",
            "podSets": [{"name": "main", "count": usage["count"], "template": template}],
        },
        "status": {
            "admission": {"clusterQueue": f"cq-{flavor}", "podSetAssignments": [assignment]}
        },
    }


def _podset(ps: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "resources": {"requests": ps["requests"]}}]
    }
    for key in ("nodeSelector", "tolerations"):
        if ps.get(key):
            spec[key] = ps[key]
    if ps.get("nodeAffinity"):
        spec["affinity"] = {"nodeAffinity": ps["nodeAffinity"]}
    entry: dict[str, Any] = {"name": ps["name"], "count": ps["count"], "template": {"spec": spec}}
    if ps.get("topologyRequest"):
        entry["topologyRequest"] = ps["topologyRequest"]
    return entry


def _workload(case: dict[str, Any]) -> dict[str, Any]:
    """The workload ``w`` of the case's podsets; admitted (owners, assignment, unhealthy nodes)
    when the case replaces a node of a running workload."""
    wl: dict[str, Any] = {
        "apiVersion": GROUP,
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {"queueName": "lq", "podSets": [_podset(ps) for ps in case["podSets"]]},
    }
    admitted = case.get("admitted")
    if admitted:
        wl["metadata"]["ownerReferences"] = [
            {**o, "name": f"owner-{k}", "uid": f"uid-{k}"} for k, o in enumerate(admitted["owners"])
        ]
        if admitted.get("annotations"):
            wl["metadata"]["annotations"] = admitted["annotations"]
        assignments = [
            {
                "name": a["name"],
                "count": a["count"],
                "topologyAssignment": {"levels": a["levels"], "domains": a["domains"]},
            }
            for a in admitted["podSetAssignments"]
        ]
        wl["status"] = {
            "admission": {"clusterQueue": "cq-tas", "podSetAssignments": assignments},
            "unhealthyNodes": [{"name": n} for n in admitted["unhealthyNodes"]],
        }
    return wl


def _replaced_slice(case: dict[str, Any]) -> dict[str, Any] | None:
    """The admitted slice ``w-old`` whose ``previousAssignment`` the case's ``w`` extends (Kueue's
    elastic workload slices); None when no podset has one."""
    previous = [ps for ps in case["podSets"] if ps.get("previousAssignment")]
    if not previous:
        return None
    assignments = [
        {
            "name": ps["name"],
            "count": sum(d["count"] for d in ps["previousAssignment"]["domains"]),
            "topologyAssignment": ps["previousAssignment"],
        }
        for ps in previous
    ]
    podsets = [
        {**_podset(ps), "count": a["count"]} for ps, a in zip(previous, assignments, strict=True)
    ]
    return {
        "apiVersion": GROUP,
        "kind": "Workload",
        "metadata": {"name": "w-old", "namespace": "default"},
        "spec": {"queueName": "lq", "podSets": podsets},
        "status": {"admission": {"clusterQueue": "cq-tas", "podSetAssignments": assignments}},
    }


def documents(case: dict[str, Any]) -> list[dict[str, Any]]:
    """The case as Kueue objects: nodes, a Topology, the TAS flavor (with the case's node labels)
    and its ClusterQueue, the workload ``w``, non-TAS pods and prior usage as admitted Workloads."""
    docs = [_node(n) for n in case["nodes"]]
    docs.append(
        {
            "apiVersion": GROUP,
            "kind": "Topology",
            "metadata": {"name": "default"},
            "spec": {"levels": [{"nodeLabel": k} for k in case["levels"]]},
        }
    )
    docs += _queue_objects(
        "tas", {"topologyName": "default", "nodeLabels": case.get("nodeLabels") or {}}
    )
    if any(u["flavor"] == "sibling" for u in case.get("priorUsage", [])):
        docs += _queue_objects("sibling", {"topologyName": "default"})
    docs.append(
        {
            "apiVersion": GROUP,
            "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": "default"},
            "spec": {"clusterQueue": "cq-tas"},
        }
    )
    docs.append(_workload(case))
    old = _replaced_slice(case)
    if old is not None:
        docs[-1]["metadata"]["annotations"] = {REPLACEMENT_FOR: "default/w-old"}
        docs.append(old)
    docs += [_prior_workload(case, k, u) for k, u in enumerate(case.get("priorUsage", []))]
    docs += [_pod(p) for p in case.get("pods", [])]
    return docs


def run_case(
    case: dict[str, Any], tmp_path: Path
) -> tuple[dict[str, list[tuple[tuple[str, ...], int]]], str | None, str | None]:
    """(podset -> sorted [(values at the wanted levels, pods)], pending reason or None, Kueue's
    wording of it or None)."""
    path = tmp_path / "case.yaml"
    path.write_text(yaml.safe_dump_all(documents(case)))
    instance = load_instance(path, warn=lambda _: None)
    problem = compile_problem(instance)
    gates = case.get("featureGates", {})
    assignment = run_kueue(
        problem,
        least_free_capacity=gates.get("TASProfileMixed", True),
        balanced_placement=gates.get("TASBalancedPlacement", False),
        node_affinity_preferred=gates.get("TASRespectNodeAffinityPreferred", False),
    )
    assert (
        check_plan(instance, to_plan(problem, assignment, engine="kueue", status="FEASIBLE")) == []
    )
    wanted_levels = {
        ps["name"]: (ps.get("want") or {}).get("levels", case["levels"][-1:])
        for ps in case["podSets"]
    }
    nodes = {n.name: n for n in instance.nodes}
    out: dict[str, dict[tuple[str, ...], int]] = {}
    w = next(cj.index for cj in problem.jobs if cj.key == "default/w")
    kept = [
        (p.group, {p.node: 1}) for p in problem.running if p.job == w
    ]  # an admitted w's pods that stay
    for g, per_node in [*assignment.counts.items(), *kept]:
        task = problem.group_task[g]
        for n, count in per_node.items():
            labels = nodes[problem.topology.node_names[n]].labels
            key = tuple(labels.get(level, "") for level in wanted_levels[task])
            out.setdefault(task, {})
            out[task][key] = out[task].get(key, 0) + count
    got = {t: sorted(d.items()) for t, d in out.items()}
    return got, assignment.reasons.get(w), assignment.scheduler_reasons.get(w)
