"""A Kueue Workload's ``status.admission`` for a planned job, in either API version.

Fields as in kueue@ff69552 ``apis/kueue/v1beta2/workload_types.go`` (``Admission``,
``PodSetAssignment``, ``TopologyAssignment`` with ``slices``: ``domainCount``,
``valuesPerLevel[].individual.roots``, ``podCounts.individual``) and
``apis/kueue/v1beta1/workload_types.go`` (``TopologyAssignment.domains[]``: ``values``,
``count``). As Kueue does, a Topology whose lowest level is ``kubernetes.io/hostname`` is
assigned at that level alone (``levels: [kubernetes.io/hostname]``); otherwise a domain is the
node's values of every level, top first.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from toposolve.core.instance import Job, Node, Task
from toposolve.core.label_levels import HOSTNAME_LABEL
from toposolve.formats.export.source import hostname

KUEUE_APIS = ("v1beta2", "v1beta1")


def _domain(node: Node, levels: list[str]) -> tuple[str, ...]:
    if levels == [HOSTNAME_LABEL]:
        return (hostname(node),)
    return tuple(node.labels.get(key, "") for key in levels)


def topology_assignment(nodes: list[Node], levels: list[str], api: str) -> dict[str, Any]:
    """The ``topologyAssignment`` of pods placed on ``nodes`` (one entry per pod).

    Parameters
    ----------
    nodes
        The node of each pod of the podset.
    levels
        The Topology's level labels, top first.
    api
        ``v1beta2`` (compact ``slices``) or ``v1beta1`` (``domains``).
    """
    used = [HOSTNAME_LABEL] if levels and levels[-1] == HOSTNAME_LABEL else list(levels)
    counts = Counter(_domain(n, used) for n in nodes)
    domains = sorted(counts)
    if api == "v1beta1":
        return {"levels": used,
                "domains": [{"values": list(d), "count": counts[d]} for d in domains]}
    return {"levels": used, "slices": [{
        "domainCount": len(domains),
        "valuesPerLevel": [{"individual": {"roots": [d[i] for d in domains]}}
                           for i in range(len(used))],
        "podCounts": {"individual": [counts[d] for d in domains]},
    }]}


def admission_patch(job: Job, planned: dict[str, list[Node]], flavor: str | None,
                    levels: list[str], api: str) -> dict[str, Any]:
    """The Workload of ``job`` with only ``status.admission``: every podset, in spec order, with
    its flavor for each resource it requests, its planned pod count and, when that is not 0,
    its topology assignment.

    As Kueue's flavor assigner does, a podset without planned pods (``count: 0``) still has its
    entry, with no topology assignment: the Workload CRD requires as many ``podSetAssignments``
    as ``spec.podSets`` once quota is reserved (kueue@ff69552, ``Assignment.ToAPI``).

    Parameters
    ----------
    job
        The Kueue job (its ``queue`` is the ClusterQueue).
    planned
        Podset name → the node of each of its planned pods.
    flavor
        The ClusterQueue's TAS ResourceFlavor (None: left out of ``flavors``).
    levels
        The Topology's level labels, top first.
    api
        ``v1beta2`` or ``v1beta1``.
    """
    assignments = []
    for task in job.tasks:
        nodes = planned.get(task.name, [])
        entry: dict[str, Any] = {"name": task.name}
        if flavor is not None:
            entry["flavors"] = {r: flavor for r in _resources(task)}
        entry["count"] = len(nodes)
        if nodes:  # Kueue leaves TAS out for a podset of count 0
            entry["topologyAssignment"] = topology_assignment(nodes, levels, api)
        assignments.append(entry)
    return {
        "apiVersion": f"kueue.x-k8s.io/{api}",
        "kind": "Workload",
        "metadata": {"name": job.name, "namespace": job.namespace},
        "status": {"admission": {"clusterQueue": job.queue, "podSetAssignments": assignments}},
    }


def _resources(task: Task) -> list[str]:
    return sorted(r for r, amount in task.requests.items() if amount)
