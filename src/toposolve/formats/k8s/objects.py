"""Kubernetes objects every writer emits the same way: metadata, Nodes, PriorityClasses and
pod specs (the Volcano, Kueue and KAI writers share them)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from toposolve.core.disruption import NOT_READY, STARTING
from toposolve.core.instance import Node, PodConstraints, PodDisruptionBudget, PriorityClass, Task
from toposolve.core.quantity import format_quantities
from toposolve.formats.k8s.pods import NODE_AFFINITY_TERMS
from toposolve.formats.k8s.specs import label_requirement_manifest, label_selector_manifest

CONTAINER_IMAGE = "registry.k8s.io/pause:3.9"
_TIME_ZERO = datetime(2024, 1, 1, tzinfo=UTC)


def creation_timestamp(index: int) -> str:
    """The ``creationTimestamp`` written for a job's creation index.

    Parameters
    ----------
    index
        The job's ``creation_index``.

    Returns
    -------
    str
        2024-01-01T00:00:00Z plus ``index`` seconds, in RFC 3339.
    """
    return (_TIME_ZERO + timedelta(seconds=index)).strftime("%Y-%m-%dT%H:%M:%SZ")


def object_metadata(name: str, namespace: str | None = None, **extra: Any) -> dict[str, Any]:
    """An object's ``metadata``.

    Parameters
    ----------
    name, namespace
        The object's name and namespace (None: cluster-scoped, no ``namespace`` key).
    **extra
        Further keys (labels, annotations, creationTimestamp); empty values are left out.

    Returns
    -------
    dict
        The ``metadata`` mapping.
    """
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta.update({k: v for k, v in extra.items() if v})
    return meta


def node_manifest(node: Node) -> dict[str, Any]:
    """A ``v1 Node`` with the node's labels, taints and allocatable (also as capacity).

    Parameters
    ----------
    node
        The node to write.

    Returns
    -------
    dict
        The Node object.
    """
    spec: dict[str, Any] = {}
    if node.unschedulable:
        spec["unschedulable"] = True
    if node.taints:
        spec["taints"] = [
            {"key": t.key, **({"value": t.value} if t.value else {}), "effect": t.effect}
            for t in node.taints
        ]
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": object_metadata(node.name, labels=dict(node.labels)),
    }
    if spec:
        doc["spec"] = spec
    amounts = format_quantities(node.allocatable)
    doc["status"] = {"capacity": dict(amounts), "allocatable": amounts}
    return doc


def priority_class_manifest(pc: PriorityClass) -> dict[str, Any]:
    """A ``scheduling.k8s.io/v1 PriorityClass``.

    Parameters
    ----------
    pc
        The priority class to write.

    Returns
    -------
    dict
        The PriorityClass object.
    """
    doc: dict[str, Any] = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": object_metadata(pc.name),
        "value": pc.value,
    }
    if pc.global_default:
        doc["globalDefault"] = True
    return doc


def disruption_budget_manifest(pdb: PodDisruptionBudget) -> dict[str, Any]:
    """A ``policy/v1 PodDisruptionBudget`` (a None selector is left out: it selects no pod).

    Parameters
    ----------
    pdb
        The budget to write.

    Returns
    -------
    dict
        The PodDisruptionBudget object.
    """
    spec: dict[str, Any] = {}
    if pdb.selector is not None:
        spec["selector"] = label_selector_manifest(pdb.selector)
    if pdb.min_available is not None:
        spec["minAvailable"] = pdb.min_available
    if pdb.max_unavailable is not None:
        spec["maxUnavailable"] = pdb.max_unavailable
    if pdb.unhealthy_pod_eviction_policy is not None:
        spec["unhealthyPodEvictionPolicy"] = pdb.unhealthy_pod_eviction_policy
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": object_metadata(pdb.name, pdb.namespace), "spec": spec}


def pod_status(task: Task, index: int) -> dict[str, Any]:
    """A pod's ``status``: ``Running`` on its node (with ``Ready: False`` when not Ready),
    ``Pending`` when not bound or bound but still starting (``Task.unready``)."""
    if index not in task.running or task.health_of(index) == STARTING:
        return {"phase": "Pending"}
    if task.health_of(index) == NOT_READY:
        return {"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}]}
    return {"phase": "Running"}


def pod_spec_manifest(requests: dict[str, int], constraints: PodConstraints) -> dict[str, Any]:
    """A pod ``spec``: one container with the requests, then the pod's placement constraints.

    Parameters
    ----------
    requests
        Resource requests in milli-units.
    constraints
        Priority class, node selector, (preferred) node affinity and tolerations.

    Returns
    -------
    dict
        The pod spec.
    """
    container: dict[str, Any] = {"name": "main", "image": CONTAINER_IMAGE}
    if requests:
        container["resources"] = {"requests": format_quantities(requests)}
    spec: dict[str, Any] = {"containers": [container]}
    if constraints.priority_class is not None:
        spec["priorityClassName"] = constraints.priority_class
    if constraints.node_selector:
        spec["nodeSelector"] = dict(constraints.node_selector)
    if constraints.affinity_terms:
        terms = [
            {"matchExpressions": [label_requirement_manifest(r) for r in term]}
            for term in constraints.affinity_terms
        ]
        node_affinity_path = NODE_AFFINITY_TERMS.split(".")  # affinity.nodeAffinity.required….terms
        nested: Any = terms
        for key in reversed(node_affinity_path):
            nested = {key: nested}
        spec.update(nested)
    if constraints.tolerations:
        spec["tolerations"] = [
            {
                **({"key": t.key} if t.key else {}),
                "operator": t.operator,
                **({"value": t.value} if t.value else {}),
                **({"effect": t.effect} if t.effect else {}),
            }
            for t in constraints.tolerations
        ]
    if constraints.preferred_affinity:
        node_affinity = spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
        node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {
                "weight": t.weight,
                "preference": {
                    "matchExpressions": [label_requirement_manifest(r) for r in t.requirements]
                },
            }
            for t in constraints.preferred_affinity
        ]
    return spec
