"""Write an :class:`Instance` in the native format (:mod:`toposolve.formats.native.reader`).

The writer uses the explicit form: consecutive nodes with the same allocatable, labels and taints
whose names follow one ``{i}`` pattern become one node group (otherwise a node gets a group of its
own with its literal name); HyperNodes are listed one by one (``hyperNodes``, with name ranges);
each job gets its own entry. Reading the result back gives the same instance (``source`` aside).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from toposolve.core.instance import (
    HyperNode,
    Instance,
    Job,
    Member,
    Node,
    PodConstraints,
    PodDisruptionBudget,
    Task,
)
from toposolve.core.paths import write_file
from toposolve.core.quantity import format_quantities
from toposolve.formats.k8s.objects import disruption_budget_manifest
from toposolve.formats.k8s.specs import (
    label_requirement_manifest,
    label_selector_manifest,
    network_topology_manifest,
    partition_policy_manifest,
    refuse_gang_groups,
    subgroup_policy_manifest,
)
from toposolve.formats.native.names import compress_names, escape_braces, name_pattern
from toposolve.formats.native.reader import API_VERSION, KIND
from toposolve.formats.volcano.job import default_min_available, partition_subgroup_policy


def instance_to_native(instance: Instance, *, name: str | None = None) -> dict[str, Any]:
    """The native document of ``instance`` (a plain dict ready for YAML)."""
    doc: dict[str, Any] = {"apiVersion": API_VERSION, "kind": KIND}
    title = name or Path(instance.source).stem.strip("<>") or "instance"
    doc["metadata"] = {"name": title}
    doc["nodeGroups"] = node_groups(instance.nodes)
    topology = topology_section(instance.hypernodes)
    if topology:
        doc["topology"] = topology
    if instance.constraint_trees:
        doc["constraintTrees"] = [{"name": t.name, "topology": topology_section(t.hypernodes)}
                                  for t in instance.constraint_trees]
    if instance.queues:
        doc["queues"] = [_queue(q) for q in instance.queues]
    if instance.priority_classes:
        doc["priorityClasses"] = [
            {"name": pc.name, "value": pc.value,
             **({"globalDefault": True} if pc.global_default else {})}
            for pc in instance.priority_classes
        ]
    if instance.disruption_budgets:
        doc["podDisruptionBudgets"] = [_budget(b) for b in instance.disruption_budgets]
    doc["jobs"] = [job_entry(job, position) for position, job in enumerate(instance.jobs)]
    if instance.device_resource is not None:
        doc["deviceResource"] = instance.device_resource
    return doc


def _budget(pdb: PodDisruptionBudget) -> dict[str, Any]:
    spec = disruption_budget_manifest(pdb)["spec"]
    return {"name": pdb.name, **({"namespace": pdb.namespace}
                                 if pdb.namespace != "default" else {}), **spec}


def write_native(instance: Instance, path: str | Path, *, header: str = "") -> None:
    """Write ``instance`` as a native YAML file (``header`` lines become ``#`` comments)."""
    write_file(path, dump_native(instance_to_native(instance), header=header))


def dump_native(doc: dict[str, Any], *, header: str = "") -> str:
    """YAML text of a native document: block style at the top, one flow line per list item."""
    comments = "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines())
    return comments + yaml.dump(_flow_items(doc), Dumper=_NativeDumper, sort_keys=False,
                                width=1 << 16,
                                allow_unicode=True)


# -- YAML style -------------------------------------------------------------------------------


class _Flow(dict):
    """A mapping written on one line."""


class _NativeDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # libyaml when available
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_flow(dumper: Any, data: _Flow) -> yaml.Node:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=True)


def _represent_dict(dumper: Any, data: dict) -> yaml.Node:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items())


_NativeDumper.add_representer(_Flow, _represent_flow)
_NativeDumper.add_representer(dict, _represent_dict)


def _flow_items(doc: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``doc`` whose list items (nodeGroups, jobs, …) are each written on one line."""
    doc = dict(doc)
    for key in ("nodeGroups", "queues", "priorityClasses", "podDisruptionBudgets", "jobs"):
        if key in doc:
            doc[key] = [_Flow(item) for item in doc[key]]
    topology = doc["topology"] = dict(doc.get("topology", {}))
    if not topology:
        del doc["topology"]
    for key in ("levels", "hyperNodes"):
        if key in topology:
            topology[key] = [_Flow(item) for item in topology[key]]
    if "tierNames" in topology:
        topology["tierNames"] = _Flow(topology["tierNames"])
    return doc


# -- nodes ------------------------------------------------------------------------------------


def _node_shape(node: Node) -> tuple:
    return (tuple(sorted(node.allocatable.items())), tuple(sorted(node.labels.items())),
            tuple((t.key, t.value, t.effect) for t in node.taints))


def node_groups(nodes: Sequence[Node]) -> list[dict[str, Any]]:
    """Consecutive nodes of one shape whose names follow one pattern share a group."""
    groups: list[dict[str, Any]] = []
    i = 0
    while i < len(nodes):
        first = nodes[i]
        parsed = name_pattern(first.name)
        j = i + 1
        if parsed is not None:
            pattern, start = parsed
            shape = _node_shape(first)
            while (
                j < len(nodes)
                and nodes[j].name == pattern.format(i=start + j - i)
                and _node_shape(nodes[j]) == shape
            ):
                j += 1
        if j - i == 1:
            pattern, start = escape_braces(first.name), 0
        group: dict[str, Any] = {"name": pattern}
        if j - i > 1:
            group["count"] = j - i
        if start:
            group["start"] = start
        group["allocatable"] = _resources(first.allocatable)
        if first.labels:
            group["labels"] = dict(first.labels)
        if first.taints:
            group["taints"] = [t.model_dump(exclude_defaults=True) for t in first.taints]
        cordoned = [k for k in range(j - i) if nodes[i + k].unschedulable]
        if cordoned:
            group["unschedulable"] = True if len(cordoned) == j - i else cordoned
        groups.append(group)
        i = j
    return groups


def _resources(amounts: dict[str, int]) -> dict[str, Any]:
    """Quantities, whole numbers as YAML integers (``8``, not ``"8"``)."""
    return {k: int(t) if t.isdigit() and len(t) < 16 else t
            for k, t in format_quantities(amounts).items()}


# -- topology ---------------------------------------------------------------------------------


def topology_section(hypernodes: Sequence[HyperNode]) -> dict[str, Any]:
    if not hypernodes:
        return {}
    by_tier: dict[int, set[str | None]] = {}
    for hn in hypernodes:
        by_tier.setdefault(hn.tier, set()).add(hn.tier_name)
    tier_names = {
        tier: next(iter(names))
        for tier, names in sorted(by_tier.items())
        if len(names) == 1 and None not in names
    }
    entries = []
    for hn in hypernodes:
        entry: dict[str, Any] = {"name": hn.name, "tier": hn.tier}
        if hn.tier_name is not None and hn.tier not in tier_names:
            entry["tierName"] = hn.tier_name
        entry.update(_members(hn.members))
        entries.append(entry)
    section: dict[str, Any] = {}
    if tier_names:
        section["tierNames"] = tier_names
    section["hyperNodes"] = entries
    return section


def _members(members: Sequence[Member]) -> dict[str, Any]:
    """``nodes`` + ``children`` when the members are exact nodes then exact HyperNodes."""
    exact = [m.selector.exact_match for m in members]
    kinds = [m.type for m in members]
    split = kinds.index("HyperNode") if "HyperNode" in kinds else len(kinds)
    if None not in exact and all(k == "HyperNode" for k in kinds[split:]) and len(
        set(exact)) == len(exact):
        out: dict[str, Any] = {}
        if split:
            out["nodes"] = compress_names(exact[:split])
        if split < len(exact):
            out["children"] = compress_names(exact[split:])
        # a name that looks like a range would be expanded on reading: keep such lists literal
        if all(".." not in name for name in exact):  # type: ignore[operator]
            return out
    return {"members": [_member(m) for m in members]}


def _member(m: Member) -> dict[str, Any]:
    out: dict[str, Any] = {"type": m.type}
    sel = m.selector
    if sel.exact_match is not None:
        out["exactMatch"] = sel.exact_match
    elif sel.regex_match is not None:
        out["regexMatch"] = sel.regex_match
    else:
        assert sel.label_match is not None
        out["labelMatch"] = label_selector_manifest(sel.label_match)
    return out


# -- queues -----------------------------------------------------------------------------------


def _queue(q) -> dict[str, Any]:
    out: dict[str, Any] = {"name": q.name}
    if q.weight != 1:
        out["weight"] = q.weight
    for key, amounts in (("capability", q.capability), ("deserved", q.deserved),
                         ("guarantee", q.guarantee)):
        if amounts:
            out[key] = _resources(amounts)
    if not q.reclaimable:
        out["reclaimable"] = False
    if q.priority:
        out["priority"] = q.priority
    if q.parent:
        out["parent"] = q.parent
    if q.flavors:
        out["flavors"] = list(q.flavors)
    return out


# -- jobs -------------------------------------------------------------------------------------


def job_entry(job: Job, position: int) -> dict[str, Any]:
    """One ``jobs`` entry; fields equal to what the reader derives are left out."""
    out: dict[str, Any] = {"name": escape_braces(job.name)}
    if job.namespace != "default":
        out["namespace"] = job.namespace
    if job.queue != "default":
        out["queue"] = job.queue
    if job.priority_class is not None:
        out["priorityClass"] = job.priority_class
    if job.min_available != default_min_available(job.tasks):
        out["minAvailable"] = job.min_available
    if job.network_topology is not None:
        out["networkTopology"] = network_topology_manifest(job.network_topology)
    if job.creation_index != position:
        out["creationIndex"] = job.creation_index
    refuse_gang_groups(job, "native YAML")
    derived = [partition_subgroup_policy(t) for t in job.tasks if t.partition is not None]
    if job.subgroup_policies != derived:
        out["subGroupPolicies"] = [subgroup_policy_manifest(p) for p in job.subgroup_policies]
    if job.min_task_member:
        out["minTaskMember"] = dict(job.min_task_member)
    if job.min_resources:
        out["minResources"] = _resources(job.min_resources)
    if job.node_pool:
        out["nodePool"] = dict(job.node_pool)
    if job.parallelism is not None:
        out["parallelism"] = job.parallelism
    if not job.movable:
        out["movable"] = False
    if job.move_cost is not None:
        out["moveCost"] = job.move_cost
    if job.topology_name is not None:
        out["topologyName"] = job.topology_name
    if job.flavor is not None:  # Kueue's words for a missing level name it
        out["flavor"] = job.flavor
    out["tasks"] = [_task(t) for t in job.tasks]
    return out


def _task(t: Task) -> dict[str, Any]:
    out: dict[str, Any] = {"name": t.name, "replicas": t.replicas}
    if t.role is not None:
        out["role"] = t.role
    if t.min_available is not None:
        out["minAvailable"] = t.min_available
    if t.requests:
        out["requests"] = _resources(t.requests)
    if t.score_requests is not None:
        out["scoreRequests"] = _resources(t.score_requests)
    if t.labels:
        out["labels"] = dict(t.labels)
    if t.partition is not None:
        out["partition"] = partition_policy_manifest(t.partition)
    out.update(_constraints(t.constraints))
    if t.pod_names is not None:
        out["podNames"] = _literal_or_compressed(t.pod_names)
    if t.pod_labels:
        out["podLabels"] = {i: dict(labels) for i, labels in sorted(t.pod_labels.items())}
    if t.running:
        out["running"] = _running(t)
    if t.unready:
        out["unready"] = dict(sorted(t.unready.items()))
    if not t.task_spec_label:
        out["taskSpecLabel"] = False
    if t.device_share is not None:
        out["deviceShare"] = t.device_share.model_dump(exclude_none=True)
    if t.device_use:
        out["deviceUse"] = {i: dict(sorted(use.items())) for i, use in sorted(t.device_use.items())}
    return out


def _literal_or_compressed(names: Sequence[str]) -> list[str | None]:
    return list(names) if any(".." in n for n in names) else compress_names(names)


def _running(t: Task) -> list[str | None] | dict[int, str]:
    """A list in pod order when every pod up to the last running one runs, else a mapping."""
    last = max(t.running)
    names = [t.running.get(i) for i in range(last + 1)]
    if None in names or any(".." in n for n in names):  # type: ignore[operator]
        return dict(sorted(t.running.items()))
    return compress_names(names)


def _constraints(c: PodConstraints) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if c.node_selector:
        out["nodeSelector"] = dict(c.node_selector)
    if c.affinity_terms:
        out["affinity"] = [
            {"matchExpressions": [label_requirement_manifest(r) for r in term]}
            for term in c.affinity_terms
        ]
    if c.tolerations:
        out["tolerations"] = [tol.model_dump(exclude_defaults=True) for tol in c.tolerations]
    if c.preferred_affinity:
        out["preferredAffinity"] = [
            {"weight": t.weight,
             "matchExpressions": [label_requirement_manifest(r) for r in t.requirements]}
            for t in c.preferred_affinity
        ]
    if c.priority_class is not None:
        out["priorityClass"] = c.priority_class
    return out
