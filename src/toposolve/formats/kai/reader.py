"""KAI-Scheduler objects → topology, queues and jobs.

Kinds read (any version): ``kai.scheduler Topology``, ``scheduling.run.ai PodGroup`` (v2alpha2:
minMember, minSubGroup, queue, priorityClassName, topologyConstraint, subGroups),
``scheduling.run.ai Queue`` and the Pods that name a PodGroup by annotation ``pod-group-name``.

The Topology's levels become the HyperNode tree (Topologies with different levels: a forest, each
constraint kept in its Topology's subtree, :mod:`toposolve.core.topology_forest`; a Topology
crossing the forest over the same nodes: a ``ConstraintTree`` its constraints are measured in);
``requiredTopologyLevel`` (a level's nodeLabel or alias) is hard at that level's tier,
``preferredTopologyLevel`` the preferred tier. A pod joins
the SubGroup its label ``kai.scheduler/subgroup-name`` names; leaf SubGroups are SubJobs,
SubGroups with children are GangGroups (gang trees up to ``MAX_GANG_DEPTH`` SubGroups deep). A
Queue's GPU limit is the capability of ``nvidia.com/gpu``, its GPU quota the deserved share. The
full rules are in ``docs/formats.md``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from toposolve.core.instance import (
    TASK_SPEC_LABEL,
    ConstraintTree,
    GangGroup,
    HyperNode,
    Job,
    LabelSelector,
    NetworkTopology,
    Node,
    Queue,
    SubGroupPolicy,
    nesting_problem,
)
from toposolve.core.label_levels import LabelTopologyError
from toposolve.core.parents import find_parent_cycle, nesting_depths
from toposolve.core.quantity import MilliUnits
from toposolve.core.topology_forest import topology_forest
from toposolve.formats.k8s.fields import Document, Field, build, unread_annotations, unread_line
from toposolve.formats.k8s.levels import read_level_aliases, read_levels
from toposolve.formats.k8s.part import SchedulerPart, rank_jobs
from toposolve.formats.k8s.specs import FINISHED_PHASES, object_name, object_namespace
from toposolve.formats.kai.fractions import (
    GPU_MEMORY,
    GPU_MEMORY_LABEL,
    device_memory,
    fraction_tasks,
    with_running_devices,
)
from toposolve.formats.volcano.podgroup import read_pod

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
SUBGROUP_POLICY = "subgroup"
# the GangGroup standing for a root minSubGroup below the top SubGroups' number
ROOT_GROUP = "~root"


@dataclass
class Constraint:
    where: Field
    topology: str | None
    required: str | None
    preferred: str | None
    # the names, under ``where``, of the required and the preferred level
    names: tuple[str, str] = ("requiredTopologyLevel", "preferredTopologyLevel")


def _constraint(field: Field, annotations_field: Field | None = None) -> Constraint | None:
    """The constraint of ``topologyConstraint`` or else of the PodGroup's topology annotations."""
    annotations = annotations_field.string_map() if annotations_field is not None else None
    if field.present:
        c = Constraint(
            field,
            field["topology"].text("") or None,
            field["requiredTopologyLevel"].text("") or None,
            field["preferredTopologyLevel"].text("") or None,
        )
    elif annotations and TOPOLOGY_ANNOTATION in annotations:
        assert annotations_field is not None
        c = Constraint(annotations_field, annotations[TOPOLOGY_ANNOTATION],
                       annotations.get(REQUIRED_ANNOTATION),
                       annotations.get(PREFERRED_ANNOTATION),
                       (REQUIRED_ANNOTATION, PREFERRED_ANNOTATION))
    else:
        return None
    return c if c.required or c.preferred else None


class _Levels:
    """The Topologies of the input and the ones constraints name (their trees: one, or a forest
    when their levels differ, :mod:`toposolve.core.topology_forest`). A constraint may name a
    level by its nodeLabel or by its alias in the Topology the constraint names (as KAI resolves
    aliases per Topology before scheduling)."""

    def __init__(self, docs: Sequence[Document]) -> None:
        self.docs: dict[str, Document] = {}
        self.by_name: dict[str, list[str]] = {}
        self.aliases: dict[str, dict[str, str]] = {}  # Topology → alias → nodeLabel
        for doc in docs:
            root = Field.root(doc, doc.object_name(namespaced=False))
            name = object_name(root)
            if name in self.by_name:
                raise root.at("metadata.name").fail(f"Topology {name!r} is declared twice")
            self.docs[name] = doc
            self.by_name[name] = read_levels(root.at("spec.levels"))
            self.aliases[name] = read_level_aliases(root.at("spec.levels"), self.by_name[name])
        self.named: dict[str, list[str]] = {}  # Topologies constraints name, first use first
        self.made: list[tuple[NetworkTopology, str]] = []  # each constraint and its Topology

    def topology(self, c: Constraint) -> NetworkTopology:
        name = c.topology
        if name is None or name not in self.by_name:
            raise c.where.fail(f"Topology {name!r} is not in the input")
        self.named.setdefault(name, self.by_name[name])
        aliases = self.aliases[name]
        required = self._tier(c.required, c, c.names[0], aliases)
        preferred = self._tier(c.preferred, c, c.names[1], aliases)
        if required is not None and preferred is not None and preferred > required:
            raise c.where.fail("the preferred level is above the required level")
        if required is None:
            nt = NetworkTopology(mode="soft", highest_tier_allowed=preferred,
                                 preferred_tier=preferred)
        else:
            nt = NetworkTopology(mode="hard", highest_tier_allowed=required,
                                 preferred_tier=preferred)
        self.made.append((nt, name))
        return nt

    def forest(self, nodes: Sequence[Node], warn: Callable[[str], None],
               ) -> tuple[list[HyperNode], list[ConstraintTree]]:
        """The HyperNodes of the named Topologies (of the only one when none is named) and the
        trees of those crossing them over the same nodes; with several trees, each constraint
        keeps its pods under its Topology's tree and is measured in it."""
        named = self.named or (self.by_name if len(self.by_name) == 1 else {})
        try:
            forest = topology_forest(nodes, named, crossing=True)
        except LabelTopologyError as exc:
            doc = self.docs[next(reversed(named))]
            raise Field.root(doc, doc.object_name(namespaced=False)).at("spec.levels").fail(
                str(exc)) from None
        for nt, name in self.made:
            nt.within_hypernode = forest.within.get(name)
            if name in forest.tree_of:  # only crossing Topologies: an assignment is validated
                nt.tree = forest.tree_of[name]
        for tree, outside in forest.outside.items():
            warn(f"{len(outside)} node(s) lack a level label of Topology {tree!r} and stay "
                 f"outside it (first: {outside[0]})")
        trees = [ConstraintTree(name=name, hypernodes=hypernodes)
                 for name, hypernodes in forest.crossing.items()]
        return forest.hypernodes, trees

    def _tier(self, level: str | None, c: Constraint, name: str,
              aliases: dict[str, str]) -> int | None:
        """The tier of a level named by nodeLabel or alias; an error naming ``name`` if neither."""
        if level is None:
            return None
        key = aliases.get(level, level)  # an alias resolves to its label, anything else is kept
        levels = self.by_name[c.topology or ""]
        if key not in levels:
            known = ", ".join([*levels, *aliases])
            raise c.where[name].fail(
                f"{level!r} is neither a level nor a level alias of Topology {c.topology!r} "
                f"(known: {known})")
        return len(levels) - levels.index(key)


def read_queue(doc: Document) -> Queue:
    root = Field.root(doc, doc.object_name(namespaced=False))
    gpu = root.at("spec.resources.gpu")
    limit, quota = _gpus(gpu["limit"]), _gpus(gpu["quota"])
    capability = {GPU: limit} if limit is not None else {}
    deserved = {GPU: quota} if quota else {}
    return build(Queue, root, name=object_name(root), capability=MilliUnits(capability),
                 deserved=MilliUnits(deserved))


def _gpus(field: Field) -> int | None:
    """A Queue's GPU amount in milli-GPUs; None when absent or negative (-1: unlimited). A
    number beyond ``MAX_QUANTITY``, infinite or not a number is an input error."""
    value = field.value
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool) and -math.inf < value < 0:
        return None
    return field.quantity()


@dataclass
class _Tree:
    """A PodGroup's SubGroup tree as the model holds it: leaf SubGroups as policies (SubJobs),
    SubGroups with children as GangGroups; ``minimum``: the fewest pods that satisfy the root."""

    policies: list[SubGroupPolicy]
    groups: list[GangGroup]
    minimum: int


def _subgroup_tree(spec: Field, levels: _Levels) -> _Tree:
    """Leaf SubGroups as policies, SubGroups with children as GangGroups (nested at most
    ``MAX_GANG_DEPTH`` deep); a root ``minSubGroup`` below the number of top SubGroups becomes one
    more GangGroup above them."""
    by_name, parent_of, children = _subgroup_links(spec["subGroups"])
    top_min = spec["minSubGroup"].integer(None, minimum=0)
    tops = len(children.get(None, []))
    if top_min is not None and top_min > tops:  # as KAI's PodGroup webhook refuses it
        raise spec["minSubGroup"].fail(f"minSubGroup {top_min} exceeds the {tops} top SubGroups")
    root = ROOT_GROUP if top_min is not None and top_min < tops else None
    need: dict[str | None, int | None] = {None: None, ROOT_GROUP: top_min}
    home: dict[str, str | None] = {}  # the GangGroup (None: the job) each SubGroup hangs under
    for name in _parents_first(children):
        g, kids = by_name[name], children.get(name, [])
        parent = parent_of[name]
        up = root if parent is None else home[parent] if parent not in need else parent
        home[name] = up
        if kids:
            given = g["minSubGroup"].integer(None, minimum=0)
            if given is not None and given > len(kids):
                raise g["minSubGroup"].fail(
                    f"minSubGroup {given} exceeds the {len(kids)} child SubGroups")
            all_needed = given is None or given == len(kids)
            # kept when it adds a gang or a domain; else its children join its parent (same gangs)
            if not (all_needed and need[up] is None
                    and _constraint(g["topologyConstraint"]) is None):
                need[name] = None if all_needed else given
    return _build_tree(by_name, children, home, need, root, levels)


def _subgroup_links(field: Field) -> tuple[dict[str, Field], dict[str, str | None],
                                           dict[str | None, list[str]]]:
    """SubGroups by name, the parent of each and the children of each (None: the PodGroup), as
    KAI's webhook checks them: names unique, parents existing, no cycle; linear time."""
    by_name: dict[str, Field] = {}
    for g in field.elements():
        name = g["name"].required_text()
        if name in by_name:
            raise g["name"].fail(f"duplicate SubGroup name {name!r}")
        by_name[name] = g
    parent_of = {name: g["parent"].text("") or None for name, g in by_name.items()}
    children: dict[str | None, list[str]] = {}
    for name, g in by_name.items():
        parent = parent_of[name]
        if parent is not None and parent not in parent_of:
            raise g["parent"].fail(f"parent SubGroup {parent!r} does not exist")
        children.setdefault(parent, []).append(name)
    cycle = find_parent_cycle(parent_of)
    if cycle:
        raise by_name[cycle[0]]["parent"].fail(
            f"SubGroup parents form a cycle: {' -> '.join([*cycle, cycle[0]])}")
    too_deep = nesting_problem(nesting_depths(parent_of), "SubGroup")
    if too_deep:
        raise by_name[too_deep[0]]["parent"].fail(too_deep[1])
    return by_name, parent_of, children


def _build_tree(by_name, children, home, need, root, levels: _Levels) -> _Tree:
    tree = _Tree([], [GangGroup(name=root, min_members=need[root])] if root else [], 0)
    minima: dict[str | None, list[int]] = {}
    for name in reversed(_parents_first(children)):  # children before their parent
        g, up = by_name[name], home[name]
        c = _constraint(g["topologyConstraint"])
        topology = levels.topology(c) if c else None
        if name in need:
            count = need[name]
            mins = sorted(minima.pop(name, []))
            minima.setdefault(up, []).append(sum(mins if count is None else mins[:count]))
            tree.groups.append(
                GangGroup(name=name, parent=up, min_members=count, network_topology=topology))
            continue
        if children.get(name):
            continue  # folded into its parent
        minimum = g["minMember"].integer(1, minimum=0) or 0
        minima.setdefault(up, []).append(minimum)
        tree.policies.append(
            SubGroupPolicy(
                name=SUBGROUP_POLICY,  # SubJob id: <job>/subgroup-<name>
                sub_group_size=max(minimum, 1),
                label_selector=LabelSelector(match_labels={SUBGROUP_LABEL: name}),
                match_label_keys=[SUBGROUP_LABEL],
                network_topology=topology,
                min_sub_groups=1 if minimum > 0 and up is None else 0,
                parent=up,
            )
        )
    order = {name: position for position, name in enumerate(by_name)}
    tree.policies.sort(key=lambda p: order[p.label_selector.match_labels[SUBGROUP_LABEL]])
    tree.groups.sort(key=lambda g: -1 if g.name == root else order[g.name])
    if root is not None:
        mins = sorted(minima.pop(root, []))
        minima.setdefault(None, []).append(sum(mins[: need[root]]))
    tree.minimum = sum(minima.get(None, []))
    return tree


def _parents_first(children: dict[str | None, list[str]]) -> list[str]:
    """SubGroup names, every parent before its children (breadth-first from the top)."""
    order = list(children.get(None, []))
    for name in order:
        order += children.get(name, [])
    return order


def read_podgroup_job(doc: Document, pods: list, levels: _Levels,
                      memory: int | None = None) -> Job:
    root = Field.root(doc, doc.object_name(namespaced=True))
    spec = root["spec"]
    c = _constraint(spec["topologyConstraint"], root.at("metadata.annotations"))
    made = len(levels.made)
    tree = _subgroup_tree(spec, levels)
    named = [c.topology] if c else [name for _, name in levels.made[made:]]
    policies = tree.policies
    for pod in pods:
        pod.labels = {**pod.labels,
                      TASK_SPEC_LABEL: pod.labels.get(SUBGROUP_LABEL, DEFAULT_SUBGROUP)}
    tasks = fraction_tasks(pods, memory)
    minimum = spec["minMember"].integer(0, minimum=0) or 0
    if tree.groups:  # KAI ignores the PodGroup's minMember once SubGroups hold the pods
        minimum = tree.minimum
    else:
        minimum = max(minimum, sum(p.sub_group_size or 0 for p in policies if p.min_sub_groups))
    pods_total = sum(t.replicas for t in tasks)
    if minimum > pods_total:
        raise spec["minMember"].fail(
            f"minMember ({minimum}) exceeds the PodGroup's pods in the input ({pods_total})")
    return build(
        Job,
        root,
        {"tasks": "", "subgroup_policies": "spec.subGroups", "gang_groups": "spec.subGroups",
         "min_available": "spec.minMember"},
        namespace=object_namespace(root),
        name=object_name(root),
        min_available=minimum,
        queue=spec["queue"].text("") or "default",
        priority_class=spec["priorityClassName"].text("") or None,
        network_topology=levels.topology(c) if c else None,
        tasks=tasks,
        subgroup_policies=policies,
        gang_groups=tree.groups,
        topology_name=named[0] if named else None,
    )


KAI_PREFIX = "kai.scheduler/"
KNOWN_ANNOTATIONS = frozenset({TOPOLOGY_ANNOTATION, REQUIRED_ANNOTATION, PREFERRED_ANNOTATION})


def _warn_unknown_annotations(groups: Sequence[Document], warn: Callable[[str], None]) -> None:
    """One line per ``kai.scheduler/`` PodGroup annotation this reader does not read (naming the
    first PodGroup that carries it)."""
    first: dict[str, Document] = {}
    for doc in groups:
        for key in unread_annotations(doc.annotations, KAI_PREFIX, KNOWN_ANNOTATIONS):
            first.setdefault(key, doc)
    for key, doc in sorted(first.items()):
        warn(unread_line(doc, key))


def read_kai_part(
    by_kind: dict[tuple[str, str], list[Document]],
    nodes: Sequence[Node],
    known_classes: set[str],
    pods: Sequence[Document],
    warn: Callable[[str], None],
) -> SchedulerPart:
    levels = _Levels(by_kind.get(KAI_TOPOLOGY, []))
    part = SchedulerPart("kai")
    part.queues = [read_queue(d) for d in by_kind.get(KAI_QUEUE, [])]
    members: dict[tuple[str, str], list] = {}
    groups = by_kind.get(KAI_PODGROUP, [])
    keys = {(d.namespace, d.name) for d in groups}
    memory = device_memory(nodes)
    memory_warned = memory is not None  # gpu-memory is read; else one line
    for doc in pods:
        key = (doc.namespace, doc.annotations.get(PODGROUP_ANNOTATION))
        phase = (doc.body.get("status") or {}).get("phase")
        if key in keys:
            part.consumed_pods.add((doc.namespace, doc.name))
            if phase not in FINISHED_PHASES:
                if GPU_MEMORY in doc.annotations and not memory_warned:
                    # needs one GPU memory on every GPU node (one line, its first pod named)
                    warn(unread_line(doc, GPU_MEMORY) + f"; the GPU nodes do not all give one "
                         f"{GPU_MEMORY_LABEL}: such pods are read without a GPU")
                    memory_warned = True
                members.setdefault(key, []).append(
                    read_pod(Field.root(doc, doc.object_name(namespaced=True)), doc.position))
    _warn_unknown_annotations(groups, warn)
    read = []
    for doc in groups:
        key = (doc.namespace, doc.name)
        if not members.get(key):
            warn(f"{doc.file}: {doc.object_name(namespaced=True)}: skipped (no live pod in the "
                 "input)")
            continue
        read.append((read_podgroup_job(doc, members[key], levels, memory), doc))
    part.hypernodes, part.constraint_trees = levels.forest(nodes, warn)
    rank_jobs(read)
    part.jobs = with_running_devices([j for j, _ in read])
    return part

