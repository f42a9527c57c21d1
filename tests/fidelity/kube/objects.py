"""Kubernetes objects of the ported kube-scheduler cases (nodes, a PodGroup, its pods, other
pods holding capacity), built from the compact case data of ``data/``."""

from __future__ import annotations

from typing import Any

from toposolve.core.instance import Instance
from toposolve.formats.load import instance_from_bodies

NAMESPACE = "default"
GROUP = "pg"


def node(n: dict[str, Any]) -> dict[str, Any]:
    """A Node; ``allocatable`` given whole, else ``cpu`` (default 4) and 16Gi memory."""
    allocatable = n.get("allocatable") or {"cpu": n.get("cpu", "4"), "memory": "16Gi"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": n["name"], "labels": n.get("labels", {})},
            "status": {"allocatable": allocatable}}


def pod(p: dict[str, Any], group: str | None = GROUP) -> dict[str, Any]:
    """A Pod of ``group`` (None: no PodGroup), bound to ``p["node"]`` when given (phase
    ``p["phase"]``, default Running) and requesting ``p["requests"]`` (default cpu ``p["cpu"]``
    or 1, memory 1Gi), nominated to ``p["nominated"]`` when given."""
    requests = p.get("requests") or {"cpu": p.get("cpu", "1"), "memory": "1Gi"}
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": requests}}]}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    if p.get("node"):
        spec["nodeName"] = p["node"]
    status = {"phase": p.get("phase", "Running" if p.get("node") else "Pending")}
    if p.get("nominated"):
        status["nominatedNodeName"] = p["nominated"]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": p["name"], "namespace": NAMESPACE},
            "spec": spec, "status": status}


def podgroup(policy: str | dict[str, int], key: str | None) -> dict[str, Any]:
    """The PodGroup ``default/pg``: ``basic`` or ``{minCount: n}`` (gang), topology ``key``."""
    spec: dict[str, Any] = {"schedulingPolicy": {"basic": {}} if policy == "basic"
                            else {"gang": {"minCount": policy["minCount"]}}}
    if key:
        spec["schedulingConstraints"] = {"topology": [{"key": key}]}
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": GROUP, "namespace": NAMESPACE}, "spec": spec}


def composite(tree: dict[str, Any], parent: str | None = None) -> list[dict[str, Any]]:
    """A CompositePodGroup hierarchy: ``tree`` with ``children`` is a CompositePodGroup
    (``policy`` ``basic`` or ``{minGroupCount: n}``), one without a PodGroup (``{minCount: n}``)
    with its ``pods``; ``key`` a topology key. Children are created in list order."""
    spec: dict[str, Any] = {"schedulingPolicy": {"basic": {}} if tree["policy"] == "basic"
                            else {"gang": dict(tree["policy"])}}
    if parent:
        spec["parentCompositePodGroupName"] = parent
    if tree.get("key"):
        spec["schedulingConstraints"] = {"topology": [{"key": tree["key"]}]}
    kind = "CompositePodGroup" if "children" in tree else "PodGroup"
    docs = [{"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": kind,
             "metadata": {"name": tree["name"], "namespace": NAMESPACE}, "spec": spec}]
    for child in tree.get("children", []):
        docs += composite(child, tree["name"])
    return docs + [pod(p, tree["name"]) for p in tree.get("pods", [])]


def tree_pods(tree: dict[str, Any]) -> list[str]:
    """The names of a hierarchy's pods."""
    return [p["name"] for p in tree.get("pods", [])] + [
        name for child in tree.get("children", []) for name in tree_pods(child)]


def placement_weights(fit: int, count: int) -> dict[str, Any]:
    """A KubeSchedulerConfiguration weighting the placement score plugins PlacementBinPacking
    and PodGroupPodsCount ``fit`` and ``count``; weight 0 disables the plugin (an enabled one
    with weight 0 would count as 1)."""
    weights = {"PlacementBinPacking": fit, "PodGroupPodsCount": count}
    points = {"enabled": [{"name": n, "weight": w} for n, w in weights.items() if w],
              "disabled": [{"name": n} for n, w in weights.items() if not w]}
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"plugins": {"placementScore": points}}]}


def load(scenario: dict[str, Any], warnings: list[str]) -> Instance:
    """The instance of a scenario: ``nodes``, ``policy``, ``key``, the group's ``pods`` (or a
    ``composite`` hierarchy instead), the ``others`` (pods of no PodGroup) and the placement
    score ``weights`` (a KubeSchedulerConfiguration)."""
    docs = [node(n) for n in scenario["nodes"]]
    if "weights" in scenario:
        docs.append(placement_weights(*scenario["weights"]))
    if "composite" in scenario:
        docs += composite(scenario["composite"])
    else:
        docs.append(podgroup(scenario.get("policy", "basic"), scenario.get("key")))
        docs += [pod(p) for p in scenario.get("pods", [])]
    docs += [pod(p, group=None) for p in scenario.get("others", [])]
    return instance_from_bodies([(d, "case.yaml") for d in docs], "case", warnings.append)
