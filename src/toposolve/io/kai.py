"""KAI-Scheduler objects → topology, queues and jobs.

Kinds read (any version): ``kai.scheduler Topology`` (``spec.levels[].nodeLabel``, top first),
``scheduling.run.ai PodGroup`` (v2alpha2: ``minMember``, ``minSubGroup``, ``queue``,
``priorityClassName``, ``topologyConstraint`` {``topology``, ``requiredTopologyLevel``,
``preferredTopologyLevel``}, ``subGroups[]`` {``name``, ``minMember``, ``minSubGroup``,
``parent``, ``topologyConstraint``}), ``scheduling.run.ai Queue`` and the Pods that name a
PodGroup by annotation ``pod-group-name``.

Rules and simplifications:

* The Topology's levels become the HyperNode tree (:mod:`toposolve.io.label_topology`).
  ``requiredTopologyLevel`` → hard at that level's tier; ``preferredTopologyLevel`` →
  ``preferred_tier`` (soft at it when nothing is required). Without a ``topologyConstraint`` the
  PodGroup's annotations ``kai.scheduler/topology``, ``kai.scheduler/topology-required-placement``
  and ``kai.scheduler/topology-preferred-placement`` are read (what the pod grouper copies from the
  workload).
* A pod joins the SubGroup its label ``kai.scheduler/subgroup-name`` names (task = SubGroup); each
  leaf SubGroup is a SubJob whose gang is its ``minMember``. A SubGroup with children is kept only
  when it adds nothing (no topology constraint, all children required): then the tree is exactly
  its leaves. Otherwise — a deeper gang hierarchy than job → SubJob — one-line input error naming
  the depth. ``minSubGroup`` below the number of children is refused the same way.
* Queue: ``spec.resources.gpu.limit`` (whole GPUs, -1 = unlimited) → capability of
  ``nvidia.com/gpu``; ``gpu.quota`` → deserved. CPU and memory quotas are not modelled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..model.instance import (
    TASK_SPEC_LABEL,
    Job,
    LabelSelector,
    NetworkTopology,
    Node,
    Queue,
    SubGroupPolicy,
)
from ..quantity import MilliUnits
from .label_topology import hypernodes_from_levels
from .manifest_fields import Document, Field, build
from .podgroup import read_pod, tasks_from_pods
from .specs import object_name, object_namespace

KAI_TOPOLOGY = ("kai.scheduler", "Topology")
KAI_PODGROUP = ("scheduling.run.ai", "PodGroup")
KAI_QUEUE = ("scheduling.run.ai", "Queue")
KAI_KINDS = (KAI_TOPOLOGY, KAI_PODGROUP, KAI_QUEUE)
PODGROUP_ANNOTATION = "pod-group-name"
SUBGROUP_LABEL = "kai.scheduler/subgroup-name"
DEFAULT_SUBGROUP = "default"
TOPOLOGY_ANNOTATION = "kai.scheduler/topology"
REQUIRED_ANNOTATION = "kai.scheduler/topology-required-placement"
PREFERRED_ANNOTATION = "kai.scheduler/topology-preferred-placement"
GPU = "nvidia.com/gpu"
SUPPORTED_DEPTH = 2
SUBGROUP_POLICY = "subgroup"


@dataclass
class Constraint:
    where: Field
    topology: str | None
    required: str | None
    preferred: str | None


def _constraint(field: Field, annotations: dict[str, str] | None = None) -> Constraint | None:
    if field.present:
        c = Constraint(
            field,
            field["topology"].text("") or None,
            field["requiredTopologyLevel"].text("") or None,
            field["preferredTopologyLevel"].text("") or None,
        )
    elif annotations and TOPOLOGY_ANNOTATION in annotations:
        c = Constraint(field, annotations[TOPOLOGY_ANNOTATION], annotations.get(REQUIRED_ANNOTATION),
                       annotations.get(PREFERRED_ANNOTATION))
    else:
        return None
    return c if c.required or c.preferred else None


class _Levels:
    """The Topologies of the input; one level list is used for the whole instance."""

    def __init__(self, docs: Sequence[Document]) -> None:
        self.by_name: dict[str, list[str]] = {}
        for doc in docs:
            root = Field.root(doc, doc.object_name(namespaced=False))
            levels = [lv["nodeLabel"].required_text() for lv in root.at("spec.levels").elements()]
            if not levels:
                raise root.at("spec.levels").fail("a Topology needs at least one level")
            self.by_name[object_name(root)] = levels
        self.name: str | None = None
        self.levels: list[str] = []

    def topology(self, c: Constraint) -> NetworkTopology:
        name = c.topology
        if name is None or name not in self.by_name:
            raise c.where.fail(f"Topology {name!r} is not in the input")
        if self.name is None:
            self.name, self.levels = name, self.by_name[name]
        elif self.by_name[name] != self.levels:
            raise c.where.fail(f"Topology {name!r} has other levels than {self.name!r}: one tree per input")
        required = self._tier(c.required, c, "requiredTopologyLevel")
        preferred = self._tier(c.preferred, c, "preferredTopologyLevel")
        if required is not None and preferred is not None and preferred > required:
            raise c.where.fail("the preferred level is above the required level")
        if required is None:
            return NetworkTopology(mode="soft", highest_tier_allowed=preferred, preferred_tier=preferred)
        return NetworkTopology(mode="hard", highest_tier_allowed=required, preferred_tier=preferred)

    def _tier(self, level: str | None, c: Constraint, name: str) -> int | None:
        if level is None:
            return None
        if level not in self.levels:
            raise c.where[name].fail(f"{level!r} is not a level of Topology {self.name!r}")
        return len(self.levels) - self.levels.index(level)


def read_queue(doc: Document) -> Queue:
    root = Field.root(doc, doc.object_name(namespaced=False))
    gpu = root.at("spec.resources.gpu")
    limit = gpu["limit"].value
    quota = gpu["quota"].value
    capability = {GPU: int(float(limit) * 1000)} if isinstance(limit, (int, float)) and limit >= 0 else {}
    deserved = {GPU: int(float(quota) * 1000)} if isinstance(quota, (int, float)) and quota > 0 else {}
    return build(Queue, root, name=object_name(root), capability=MilliUnits(capability), deserved=MilliUnits(deserved))


def _subgroup_tree(spec: Field, levels: _Levels) -> list[SubGroupPolicy]:
    """Leaf SubGroups as policies; refuse a tree deeper than job → SubJob."""
    groups = spec["subGroups"].elements()
    names = [g["name"].required_text() for g in groups]
    children: dict[str, list[str]] = {}
    for g, name in zip(groups, names, strict=True):
        parent = g["parent"].text("") or None
        if parent is not None:
            if parent not in names:
                raise g["parent"].fail(f"parent SubGroup {parent!r} does not exist")
            children.setdefault(parent, []).append(name)
    policies: list[SubGroupPolicy] = []
    for g, name in zip(groups, names, strict=True):
        depth, cur = 2, g["parent"].text("") or None
        while cur is not None:
            depth += 1
            cur = groups[names.index(cur)]["parent"].text("") or None
            if depth > len(names) + 2:
                raise g["parent"].fail("SubGroup parents form a cycle")
        kids = children.get(name, [])
        if kids:
            min_sub = g["minSubGroup"].integer(len(kids), minimum=0)
            if _constraint(g["topologyConstraint"]) is not None or (min_sub or 0) < len(kids):
                raise g.fail(
                    f"gang hierarchy of depth {depth + 1} (job → SubGroup {name!r} → its SubGroups) "
                    f"is not supported yet (toposolve models depth {SUPPORTED_DEPTH})"
                )
            continue
        c = _constraint(g["topologyConstraint"])
        policies.append(
            SubGroupPolicy(
                name=SUBGROUP_POLICY,  # SubJob id: <job>/subgroup-<name>
                sub_group_size=max(g["minMember"].integer(1, minimum=0) or 0, 1),
                label_selector=LabelSelector(match_labels={SUBGROUP_LABEL: name}),
                match_label_keys=[SUBGROUP_LABEL],
                network_topology=levels.topology(c) if c else None,
                min_sub_groups=1 if (g["minMember"].integer(1, minimum=0) or 0) > 0 else 0,
            )
        )
    return policies


def read_podgroup_job(doc: Document, pods: list, levels: _Levels) -> Job:
    root = Field.root(doc, doc.object_name(namespaced=True))
    spec = root["spec"]
    annotations = root.at("metadata.annotations").string_map()
    c = _constraint(spec["topologyConstraint"], annotations)
    policies = _subgroup_tree(spec, levels)
    top_min = spec["minSubGroup"].integer(None, minimum=0)
    if top_min is not None and top_min < len(policies):
        raise spec["minSubGroup"].fail(
            f"minSubGroup {top_min} of {len(policies)} SubGroups is not supported yet (all are required)"
        )
    for pod in pods:
        pod.labels = {**pod.labels, TASK_SPEC_LABEL: pod.labels.get(SUBGROUP_LABEL, DEFAULT_SUBGROUP)}
    tasks = tasks_from_pods(pods)
    minimum = spec["minMember"].integer(0, minimum=0) or 0
    minimum = max(minimum, sum(p.sub_group_size or 0 for p in policies if p.min_sub_groups))
    for p in policies:  # one policy per SubGroup: each needs its own SubJob
        p.min_sub_groups = 1 if p.min_sub_groups else 0
    pods_total = sum(t.replicas for t in tasks)
    if minimum > pods_total:
        raise spec["minMember"].fail(f"minMember ({minimum}) exceeds the PodGroup's pods in the input ({pods_total})")
    return build(
        Job,
        root,
        {"tasks": "", "subgroup_policies": "spec.subGroups", "min_available": "spec.minMember"},
        namespace=object_namespace(root),
        name=object_name(root),
        min_available=minimum,
        queue=spec["queue"].text("") or "default",
        priority_class=spec["priorityClassName"].text("") or None,
        network_topology=levels.topology(c) if c else None,
        tasks=tasks,
        subgroup_policies=policies,
    )


def read_kai_part(
    by_kind: dict[tuple[str, str], list[Document]],
    nodes: Sequence[Node],
    known_classes: set[str],
    pods: Sequence[Document],
    warn: Callable[[str], None],
):
    from .scheduler_input import SchedulerPart, rank_jobs

    levels = _Levels(by_kind.get(KAI_TOPOLOGY, []))
    part = SchedulerPart("kai")
    part.queues = [read_queue(d) for d in by_kind.get(KAI_QUEUE, [])]
    members: dict[tuple[str, str], list] = {}
    groups = by_kind.get(KAI_PODGROUP, [])
    keys = {(d.namespace, d.name) for d in groups}
    for doc in pods:
        key = (doc.namespace, doc.annotations.get(PODGROUP_ANNOTATION))
        phase = (doc.body.get("status") or {}).get("phase")
        if key in keys:
            part.consumed_pods.add((doc.namespace, doc.name))
            if phase not in ("Succeeded", "Failed"):
                members.setdefault(key, []).append(read_pod(Field.root(doc, doc.object_name(namespaced=True)), doc.position))
    read = []
    for doc in groups:
        key = (doc.namespace, doc.name)
        if not members.get(key):
            warn(f"{doc.file}: {doc.object_name(namespaced=True)}: skipped (no live pod in the input)")
            continue
        read.append((read_podgroup_job(doc, members[key], levels), doc))
    if levels.name is None and len(levels.by_name) == 1:
        levels.name, levels.levels = next(iter(levels.by_name.items()))
    if levels.levels:
        part.hypernodes, outside = hypernodes_from_levels(nodes, levels.levels)
        if outside:
            warn(f"{len(outside)} node(s) lack a level label of Topology {levels.name!r} and stay outside it (first: {outside[0]})")
    rank_jobs(read)
    part.jobs = [j for j, _ in read]
    return part

