"""kube-scheduler's Workload API objects (``scheduling.k8s.io`` Workload / PodGroup) → jobs.

Kinds read (any version of ``scheduling.k8s.io``): ``PodGroup`` (``spec.schedulingPolicy``
``gang.minCount`` or ``basic``, ``spec.schedulingConstraints.topology[0].key``,
``spec.priorityClassName``), ``Workload`` (accepted; its templates are not used: the scheduler
reads only the PodGroup, which its controller copied from the template) and the Pods naming a
PodGroup in ``spec.schedulingGroup.podGroupName`` (same namespace).

* A PodGroup with a topology key is a job hard-constrained at that key's level; the levels are
  the keys the PodGroups name, ordered top first by their number of distinct values (fewest
  first, then by key). The HyperNode tree is built from those node labels with value identity (a
  label value is one domain wherever it appears, as the plugin groups nodes by value) and
  ``missing="keep"`` (a node lacking a lower key stays in its upper keys' domains); keys that
  do not nest are a one-line input error.
* ``gang.minCount`` is the job's ``minAvailable``; ``basic`` is ``minAvailable`` 1 (the cycle
  succeeds once one pod is scheduled).
* Skipped with one warning line: a PodGroup whose key no node carries (no candidate placement),
  a pod naming a PodGroup missing from the input (it waits in kube-scheduler).
* Tasks keep their pods' scoring requests and nominated nodes. CompositePodGroups: one job per
  hierarchy (``formats/kube/composite.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from toposolve.core.errors import InputError
from toposolve.core.instance import Job, NetworkTopology, Node
from toposolve.core.label_levels import LabelLevel, LabelTopologyError, hypernodes_from_labels
from toposolve.formats.k8s.fields import Document, Field, build
from toposolve.formats.k8s.part import SchedulerPart, rank_jobs
from toposolve.formats.k8s.specs import FINISHED_PHASES, object_name, object_namespace
from toposolve.formats.kube.composite import composite_job, hierarchies, parent_name, prune
from toposolve.formats.volcano.podgroup import (
    PodRecord,
    distinct_task_names,
    read_pod,
    tasks_from_pods,
)

KUBE_GROUP = "scheduling.k8s.io"
KUBE_PODGROUP = (KUBE_GROUP, "PodGroup")
KUBE_WORKLOAD = (KUBE_GROUP, "Workload")
KUBE_COMPOSITE = (KUBE_GROUP, "CompositePodGroup")
KUBE_KINDS = (KUBE_PODGROUP, KUBE_WORKLOAD, KUBE_COMPOSITE)
GROUP_FIELD = "spec.schedulingGroup.podGroupName"


def topology_key(spec: Field) -> str | None:
    """``schedulingConstraints.topology[0].key`` of a PodGroup spec (at most one constraint, as
    the API validates), None without a constraint."""
    items = spec.at("schedulingConstraints.topology").elements()
    if len(items) > 1:
        raise spec.at("schedulingConstraints.topology").fail(
            "at most one topology constraint may be given")
    return items[0]["key"].required_text() if items else None


def gang_minimum(spec: Field) -> int:
    """``minAvailable`` of a PodGroup: ``gang.minCount``, or 1 for the ``basic`` policy."""
    policy = spec["schedulingPolicy"]
    given = [name for name in ("basic", "gang") if policy[name].present]
    if len(given) != 1:
        raise policy.fail(f"exactly one of basic, gang must be set (found {len(given)})")
    if given[0] == "basic":
        return 1
    minimum = policy.at("gang.minCount").integer(required=True, minimum=1)
    assert minimum is not None
    return minimum


def order_levels(nodes: Sequence[Node], keys: set[str]) -> list[str]:
    """The constraint keys top first: fewest distinct node-label values first, then by key."""
    values = {k: {n.labels[k] for n in nodes if k in n.labels} for k in keys}
    return sorted(keys, key=lambda k: (len(values[k]), k))


def _members(pods: Sequence[Document], groups: set[tuple[str, str]], part: SchedulerPart,
             warn: Callable[[str], None]) -> dict[tuple[str, str], list[PodRecord]]:
    members: dict[tuple[str, str], list[PodRecord]] = {}
    for doc in pods:
        ref = (doc.body.get("spec") or {}).get("schedulingGroup") or {}
        name = ref.get("podGroupName") if isinstance(ref, dict) else None
        if not name:
            continue
        key = (doc.namespace, str(name))
        part.consumed_pods.add((doc.namespace, doc.name))
        if key not in groups:
            warn(f"{doc.file}: {doc.object_name(namespaced=True)}: skipped (PodGroup "
                 f"{name!r} is not in the input; kube-scheduler keeps the pod waiting)")
            continue
        if (doc.body.get("status") or {}).get("phase") not in FINISHED_PHASES:
            members.setdefault(key, []).append(
                read_pod(Field.root(doc, doc.object_name(namespaced=True)), doc.position))
    return members


def short_of_quorum(doc: Document, pods: list[PodRecord]) -> tuple[int, int] | None:
    """(minimum, pods) when a PodGroup has fewer pods than its minimum, else None: such a gang
    is never placed (GangScheduling's PlacementFeasible answers Unschedulable before the first
    pod, as scheduled + remaining < minCount)."""
    minimum = gang_minimum(Field.root(doc, doc.object_name(namespaced=True))["spec"])
    return (minimum, len(pods)) if minimum > len(pods) else None


def read_podgroup_job(doc: Document, pods: list[PodRecord], tiers: dict[str, int]) -> Job:
    root = Field.root(doc, doc.object_name(namespaced=True))
    spec = root["spec"]
    key = topology_key(spec)
    minimum = gang_minimum(spec)
    tasks = distinct_task_names(tasks_from_pods(pods, scoring=True))
    priority = spec["priorityClassName"].text("") or None
    if priority is None:
        priority = pods[0].root.at("spec.priorityClassName").text("") or None
    topology = None if key is None else NetworkTopology(mode="hard",
                                                        highest_tier_allowed=tiers[key])
    return build(Job, root, {"tasks": "", "min_available": "spec.schedulingPolicy"},
                 namespace=object_namespace(root), name=object_name(root),
                 min_available=minimum, queue="default", priority_class=priority,
                 network_topology=topology, tasks=tasks)


def read_kube_part(by_kind: dict[tuple[str, str], list[Document]], nodes: Sequence[Node],
                   pods: Sequence[Document], warn: Callable[[str], None]) -> SchedulerPart:
    """The Workload API part of the input: jobs, and the HyperNodes of their topology keys.

    Parameters
    ----------
    by_kind
        The input's documents by (API group, kind).
    nodes
        The nodes read.
    pods
        The input's Pod documents.
    warn
        Called with one line per skipped object.

    Returns
    -------
    SchedulerPart
        Scheduler ``kube``; pods naming a PodGroup are consumed.
    """
    part = SchedulerPart("kube")
    for doc in by_kind.get(KUBE_WORKLOAD, []):
        object_name(Field.root(doc, doc.object_name(namespaced=True)))  # a name is required
    groups = by_kind.get(KUBE_PODGROUP, [])
    cpgs = by_kind.get(KUBE_COMPOSITE, [])
    members = _members(pods, {(d.namespace, d.name) for d in groups}, part, warn)
    carried = {k for n in nodes for k in n.labels}
    keys: dict[str, list[Document]] = {}
    for doc in [*groups, *cpgs]:
        key = topology_key(Field.root(doc, doc.object_name(namespaced=True))["spec"])
        if key is not None:
            keys.setdefault(key, []).append(doc)
    levels = order_levels(nodes, {k for k in keys if k in carried})
    tiers = {k: len(levels) - i for i, k in enumerate(levels)}
    read = [(job, doc) for doc in groups if parent_name(doc) is None
            if (job := _standalone(doc, members, carried, tiers, warn)) is not None]
    read += _composites(cpgs, [d for d in groups if parent_name(d) is not None], members,
                        carried, tiers, warn)
    if levels:
        part.hypernodes = _tree(nodes, levels, keys)
    rank_jobs(read)
    part.jobs = [j for j, _ in read]
    return part


def _standalone(doc: Document, members: dict[tuple[str, str], list[PodRecord]],
                carried: set[str], tiers: dict[str, int], warn: Callable[[str], None]
                ) -> Job | None:
    """The job of a PodGroup outside any CompositePodGroup, None when it is skipped."""
    name = doc.object_name(namespaced=True)
    if (why := _unplaceable(doc, members, carried)) is not None:
        warn(f"{doc.file}: {name}: skipped ({why})")
        return None
    return read_podgroup_job(doc, members[(doc.namespace, doc.name)], tiers)


def _unplaceable(doc: Document, members: dict[tuple[str, str], list[PodRecord]],
                 carried: set[str]) -> str | None:
    """Why a PodGroup (or CompositePodGroup) can never be placed, or None."""
    key = topology_key(Field.root(doc, doc.object_name(namespaced=True))["spec"])
    if key is not None and key not in carried:
        return f"no node carries topology key {key!r}: no candidate placement"
    if doc.kind == "CompositePodGroup":
        return None
    if not members.get((doc.namespace, doc.name)):
        return "no live pod in the input"
    if (short := short_of_quorum(doc, members[(doc.namespace, doc.name)])) is not None:
        return (f"gang.minCount {short[0]} exceeds its {short[1]} pod(s): the gang waits for "
                "its pods")
    return None


def _composites(cpgs: list[Document], leaves: list[Document],
                members: dict[tuple[str, str], list[PodRecord]], carried: set[str],
                tiers: dict[str, int], warn: Callable[[str], None]) -> list[tuple[Job, Document]]:
    """One job per root CompositePodGroup (``formats/kube/composite.py``)."""

    def keep(node) -> bool:
        why = _unplaceable(node.doc, members, carried)
        if why is not None and node is not root:
            warn(f"{node.doc.file}: {node.doc.object_name(namespaced=True)}: left out of its "
                 f"CompositePodGroup ({why})")
        elif why is not None:
            warn(f"{node.doc.file}: {node.doc.object_name(namespaced=True)}: skipped ({why})")
        return why is None

    def level(doc: Document) -> NetworkTopology | None:
        key = topology_key(Field.root(doc, doc.object_name(namespaced=True))["spec"])
        return None if key is None else NetworkTopology(mode="hard",
                                                        highest_tier_allowed=tiers[key])

    read = []
    for root in hierarchies(cpgs, leaves, warn):
        if prune(root, keep):
            read.append((composite_job(root, members, level), root.doc))
        elif _unplaceable(root.doc, members, carried) is None:
            warn(f"{root.doc.file}: {root.doc.object_name(namespaced=True)}: skipped (no "
                 "PodGroup of it can be placed)")
    return read


def _tree(nodes: Sequence[Node], levels: list[str], keys: dict[str, list[Document]]):
    try:
        return hypernodes_from_labels(nodes, [LabelLevel(k) for k in levels], identity="value",
                                      missing="keep", hostname_level=True)
    except LabelTopologyError as exc:
        doc = keys[levels[-1]][0]
        raise InputError(f"the PodGroups' topology keys {levels} do not nest: {exc}",
                         file=doc.file, obj=doc.object_name(namespaced=True),
                         field="spec.schedulingConstraints.topology") from None
