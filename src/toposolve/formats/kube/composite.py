"""``scheduling.k8s.io`` CompositePodGroups (v1alpha3, KEP-5732 multi-level placements) →
one job per root CompositePodGroup, its hierarchy as the job's gang tree.

Every CompositePodGroup is a GangGroup (``gang.minGroupCount`` of its direct children; the
``basic`` policy one, as GangScheduling counts it, kept as ``GangGroup.basic``; its topology key
a hard level); its leaf PodGroups are SubJobs (a
SubGroupPolicy matching :data:`LEAF_LABEL` = the PodGroup's name, ``gang.minCount`` pods, its
own key). The root's GangGroup is the job's one top member. Hierarchies deeper than upstream's
4 levels, parent cycles and missing parents are skipped with one warning line (upstream marks
them Invalid); leaf PodGroups without live pods or short of their ``minCount`` are left out of
the tree with one warning (they can never succeed). Rules: ``docs/kube-fidelity.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from toposolve.core.instance import (
    KUBE_PODGROUP_LABEL,
    TASK_SPEC_LABEL,
    GangGroup,
    Job,
    LabelSelector,
    NetworkTopology,
    SubGroupPolicy,
)
from toposolve.formats.k8s.fields import Document, Field, build
from toposolve.formats.k8s.specs import creation_order, creation_time, object_name
from toposolve.formats.volcano.podgroup import PodRecord, distinct_task_names, tasks_from_pods

LEAF_LABEL = KUBE_PODGROUP_LABEL  # the model's label naming a pod's PodGroup
LEAF_POLICY = "podgroup"
MAX_LEVELS = 4  # CompositePodGroup hierarchy depth upstream accepts (status reason Invalid)
PARENT = "spec.parentCompositePodGroupName"


@dataclass
class Node:
    """One CompositePodGroup or PodGroup of a hierarchy, its children in creation order."""

    doc: Document
    composite: bool
    children: list[Node] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.doc.name


def parent_name(doc: Document) -> str | None:
    """``spec.parentCompositePodGroupName`` (None: a root)."""
    return Field.root(doc, doc.object_name(namespaced=True)).at(PARENT).text("") or None


def group_policy(doc: Document) -> tuple[str, int]:
    """(``basic`` or ``gang``, the gang minimum) of a PodGroup or CompositePodGroup."""
    root = Field.root(doc, doc.object_name(namespaced=True))
    policy = root.at("spec.schedulingPolicy")
    given = [name for name in ("basic", "gang") if policy[name].present]
    if len(given) != 1:
        raise policy.fail(f"exactly one of basic, gang must be set (found {len(given)})")
    if given[0] == "basic":
        return "basic", 1  # GangScheduling's getMinCount: one member
    key = "minGroupCount" if doc.kind == "CompositePodGroup" else "minCount"
    minimum = policy.at(f"gang.{key}").integer(required=True, minimum=1)
    assert minimum is not None
    return "gang", minimum


def hierarchies(cpgs: list[Document], pgs: list[Document],
                warn: Callable[[str], None]) -> list[Node]:
    """The root CompositePodGroups with their trees; objects of a broken hierarchy (missing
    parent, cycle, deeper than 4 levels) are left out with one warning line per root."""
    nodes = {(d.namespace, d.name): Node(d, True) for d in cpgs}
    roots: list[Node] = []
    for doc in sorted([*cpgs, *pgs], key=lambda d: creation_order(
            creation_time(Field.root(d, d.name)), d.position)):
        parent = parent_name(doc)
        node = nodes.get((doc.namespace, doc.name)) if doc.kind == "CompositePodGroup" else None
        node = node or Node(doc, False)
        if parent is None:
            if node.composite:
                roots.append(node)
            continue
        up = nodes.get((doc.namespace, parent))
        if up is None:
            warn(f"{doc.file}: {doc.object_name(namespaced=True)}: skipped (parent "
                 f"CompositePodGroup {parent!r} is not in the input)")
            continue
        up.children.append(node)
    reached = {id(n) for r in roots for n in _subtree(r)}
    for node in nodes.values():
        if id(node) not in reached and parent_name(node.doc) in {d.name for d in cpgs}:
            warn(f"{node.doc.file}: {node.doc.object_name(namespaced=True)}: skipped (its "
                 "parents form a cycle: no root CompositePodGroup)")
    return [r for r in roots if _valid(r, warn)]


def _subtree(node: Node) -> list[Node]:
    return [node, *(n for child in node.children for n in _subtree(child))]


def _valid(root: Node, warn: Callable[[str], None]) -> bool:
    depth = _depth(root, 1)
    if depth > MAX_LEVELS:
        warn(f"{root.doc.file}: {root.doc.object_name(namespaced=True)}: skipped (its hierarchy "
             f"has {depth} levels; kube-scheduler accepts at most {MAX_LEVELS})")
        return False
    return True


def _depth(node: Node, level: int) -> int:
    return max((_depth(c, level + 1) for c in node.children), default=level)


def leaves(node: Node) -> list[Node]:
    """The PodGroups of a hierarchy, depth first in child order."""
    if not node.composite:
        return [node]
    return [leaf for child in node.children for leaf in leaves(child)]


def prune(node: Node, keep: Callable[[Node], bool]) -> bool:
    """Drop the subtrees ``keep`` refuses and the CompositePodGroups left without a leaf; True
    when ``node`` keeps a leaf."""
    if not keep(node):
        return False
    if not node.composite:
        return True
    node.children = [c for c in node.children if prune(c, keep)]
    return bool(node.children)


def composite_job(root: Node, members: dict[tuple[str, str], list[PodRecord]],
                  topology: Callable[[Document], NetworkTopology | None]) -> Job:
    """The job of a root CompositePodGroup (see the module doc); ``topology``: the hard
    level of an object's topology key, None without one."""
    groups: list[GangGroup] = []
    policies: list[SubGroupPolicy] = []
    pods: list[PodRecord] = []
    minimum = _walk(root, None, members, topology, groups, policies, pods)
    for pod in pods:
        pod.labels = {**pod.labels, TASK_SPEC_LABEL: pod.labels[LEAF_LABEL]}
    doc = Field.root(root.doc, root.doc.object_name(namespaced=True))
    priority = doc.at("spec.priorityClassName").text("") or None
    if priority is None:
        priority = pods[0].root.at("spec.priorityClassName").text("") or None
    return build(Job, doc, {"tasks": "", "gang_groups": "spec", "subgroup_policies": "spec"},
                 namespace=root.doc.namespace, name=object_name(doc),
                 min_available=max(minimum, 1), queue="default", priority_class=priority,
                 tasks=distinct_task_names(tasks_from_pods(pods, scoring=True)),
                 gang_groups=groups,
                 subgroup_policies=policies)


def _walk(node: Node, parent: str | None, members, topology, groups, policies, pods) -> int:
    """Add ``node``'s subtree to the lists; the fewest pods that satisfy it."""
    kind, count = group_policy(node.doc)
    if not node.composite:
        mine = members[(node.doc.namespace, node.name)]
        for pod in mine:
            pod.labels = {**pod.labels, LEAF_LABEL: node.name}
        pods += mine
        size = count
        policies.append(SubGroupPolicy(
            name=LEAF_POLICY, sub_group_size=size,
            label_selector=LabelSelector(match_labels={LEAF_LABEL: node.name}),
            match_label_keys=[LEAF_LABEL], network_topology=topology(node.doc), parent=parent))
        return size
    groups.append(GangGroup(name=node.name, parent=parent, min_members=count,
                            network_topology=topology(node.doc), basic=kind == "basic"))
    minima = sorted(_walk(c, node.name, members, topology, groups, policies, pods)
                    for c in node.children)
    return sum(minima[:count])
