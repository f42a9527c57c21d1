"""Input Volcano accepts but partly ignores: one warning line each, never an error.

* A ``highestTierName`` that no HyperNode's ``tierName`` names: Volcano cannot translate it,
  leaves ``highestTierAllowed`` unset and so does not treat the spec as hard; the constraint is
  dropped (:func:`toposolve.core.problem.compile_problem` compiles it that way). One line per spec,
  naming the job, the name and the known tier names.
* A running pod whose ``spec.nodeName`` is not among the input's nodes (deleted, or filtered,
  between two ``kubectl get``): Volcano's cache keeps the task (its placeholder node is never
  ready), so the pod counts toward its gangs and its queue and uses no node's capacity. One line
  per node name.
* Queues with a ``spec.parent`` other than ``root`` (Volcano's hierarchical queues, which its
  capacity plugin uses): the hierarchy is read and shown, but capability, deserved shares and
  reclaim treat every queue alone, as the proportion plugin does. One line for the instance.
* A node whose running pods request more of a resource than it has (a device-plugin restart or
  a node shrunk under them): Kubernetes keeps the pods and lets a new pod in if every resource
  the new pod requests fits, so the node still takes pods that do not request that resource.
  One line per node.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from toposolve.core.instance import Instance, Job, NetworkTopology

ROOT_QUEUE = "root"  # Volcano's implicit top of the queue hierarchy


def warn_tolerated(instance: Instance, warn: Callable[[str], None],
                   origin: Mapping[str, str] | None = None) -> None:
    """Emit the warning lines for ``instance``; ``origin`` maps ``Kind/ns/name`` to its file."""
    origin = origin or {}

    def line(obj: str, field: str | None, text: str) -> None:
        parts = [origin.get(obj, instance.source), obj, *([field] if field else []), text]
        warn(": ".join(parts))

    known = sorted({h.tier_name for h in instance.hypernodes if h.tier_name})
    for job in instance.jobs:
        for field, spec in _specs(job):
            name = spec.highest_tier_name
            if name is not None and name not in known:
                line(
                    f"Job/{job.key}",
                    f"{field}.highestTierName",
                    f"no HyperNode has tierName {name!r} (known: {', '.join(known) or 'none'}); "
                    "the constraint is dropped, as Volcano does",
                )
    nested = [q for q in instance.queues if q.parent not in (None, ROOT_QUEUE)]
    if nested:
        line(
            f"Queue/{nested[0].name}",
            "spec.parent",
            f"{len(nested)} queue(s) have a parent queue; toposolve shows the hierarchy but "
            "applies "
            "capability, deserved shares and reclaim to each queue alone (proportion plugin, not "
            "the capacity plugin's hierarchy)",
        )
    nodes = {n.name for n in instance.nodes}
    absent: dict[str, list[str]] = {}
    for job in instance.jobs:
        for task in job.tasks:
            for index, node in sorted(task.running.items()):
                if node not in nodes:
                    absent.setdefault(node, []).append(
                        f"{job.namespace}/{task.pod_name(job.name, index)}")
    for node, pods in absent.items():
        example = pods[0] if len(pods) == 1 else f"{pods[0]} and {len(pods) - 1} more"
        line(
            f"Pod/{pods[0]}",
            "spec.nodeName",
            f"node {node!r} is not in the input; its {len(pods)} running pod(s) ({example}) "
            "count toward their gangs and use no capacity",
        )
    for node_name, resource, used, have in overcommitted(instance):
        line(f"Node/{node_name}", f"status.allocatable[{resource}]",
             f"running pods request {used}m, allocatable is {have}m; the node takes only pods "
             f"that do not request {resource}, as Kubernetes does")


def overcommitted(instance: Instance) -> list[tuple[str, str, int, int]]:
    """``(node, resource, requested, allocatable)`` for each node's first resource that its
    running pods request beyond its allocatable (milli-units), in input order."""
    used: dict[str, dict[str, int]] = {}
    for job in instance.jobs:
        for task in job.tasks:
            for node in task.running.values():
                on_node = used.setdefault(node, {})
                for resource, amount in task.requests.items():
                    on_node[resource] = on_node.get(resource, 0) + amount
    out: list[tuple[str, str, int, int]] = []
    for node in instance.nodes:
        over = [(r, amount, node.allocatable.get(r, 0))
                for r, amount in sorted(used.get(node.name, {}).items())
                if amount > node.allocatable.get(r, 0)]
        if over:
            out.append((node.name, *over[0]))
    return out


def _specs(job: Job) -> list[tuple[str, NetworkTopology]]:
    """``(manifest field, spec)`` of the job's and its SubGroup policies' network topologies."""
    out: list[tuple[str, NetworkTopology]] = []
    if job.network_topology is not None:
        out.append(("spec.networkTopology", job.network_topology))
    partitioned = {t.name: k for k, t in enumerate(job.tasks) if t.partition is not None}
    for p, policy in enumerate(job.subgroup_policies):
        if policy.network_topology is None:
            continue
        if policy.name in partitioned:  # a Volcano Job's partitionPolicy became this policy
            field = f"spec.tasks[{partitioned[policy.name]}].partitionPolicy.networkTopology"
        else:
            field = f"spec.subGroupPolicy[{p}].networkTopology"
        out.append((field, policy.network_topology))
    return out
