"""A job's gang tree → ``scheduling.k8s.io/v1alpha3`` CompositePodGroups (the inverse of
:mod:`toposolve.formats.kube.composite`).

Written for the jobs :func:`is_composite` accepts (the shape the kube reader makes of a
CompositePodGroup hierarchy): one Workload whose ``compositePodGroupTemplates`` mirror the tree,
a CompositePodGroup per GangGroup (``gang.minGroupCount`` its ``min_members``; ``basic`` for a
``basic`` one, and for 0, which kube-scheduler has no policy for and counts as one member),
a PodGroup per SubGroupPolicy (``gang.minCount`` its ``subGroupSize``), every object naming its
template in ``spec.workloadRef`` and its parent in ``spec.parentCompositePodGroupName``. Objects
are written parent first, siblings in the order that makes the reader's GangGroups and
SubGroupPolicies come back in the job's order (all share the job's ``creationTimestamp``).
"""

from __future__ import annotations

from typing import Any

from toposolve.core.instance import (
    KUBE_PODGROUP_LABEL,
    GangGroup,
    Job,
    NetworkTopology,
    SubGroupPolicy,
)
from toposolve.formats.k8s.levels import Levels
from toposolve.formats.k8s.objects import object_metadata

API_VERSION = "scheduling.k8s.io/v1alpha3"
Member = GangGroup | SubGroupPolicy


def leaf_name(policy: SubGroupPolicy) -> str | None:
    """The PodGroup a policy stands for (its selector's one :data:`KUBE_PODGROUP_LABEL` value),
    None for a policy of another shape."""
    labels = policy.label_selector.match_labels
    if set(labels) != {KUBE_PODGROUP_LABEL} or policy.match_label_keys != [KUBE_PODGROUP_LABEL]:
        return None
    return labels[KUBE_PODGROUP_LABEL]


def is_composite(job: Job) -> bool:
    """Whether the job's gang tree can be written as CompositePodGroups: one root GangGroup,
    every policy one PodGroup's under a GangGroup, each task's pods in one of those PodGroups.

    Parameters
    ----------
    job
        The job being written.

    Returns
    -------
    bool
        True for the jobs the kube reader reads from CompositePodGroups.
    """
    groups = {g.name for g in job.gang_groups}
    roots = [g for g in job.gang_groups if g.parent is None]
    leaves = [leaf_name(p) for p in job.subgroup_policies]
    if len(roots) != 1 or None in leaves or len(set(leaves)) != len(leaves):
        return False
    if any(p.parent not in groups for p in job.subgroup_policies) or job.min_task_member:
        return False
    if any(g.parent is not None and g.parent not in groups for g in job.gang_groups):
        return False
    named = set(leaves)
    return all(t.partition is None and len({t.labels_of(i).get(KUBE_PODGROUP_LABEL)
                                            for i in range(t.replicas)} & named) == 1
               and all(KUBE_PODGROUP_LABEL in t.labels_of(i) for i in range(t.replicas))
               for t in job.tasks)


def _children(job: Job) -> dict[str, list[Member]]:
    """Each GangGroup's members in the order that gives back the job's lists: GangGroups in their
    order, each PodGroup placed before the first GangGroup whose subtree comes after it."""
    below: dict[str, list[Member]] = {g.name: [] for g in job.gang_groups}
    for group in job.gang_groups:
        if group.parent is not None:
            below[group.parent].append(group)
    order = {leaf_name(p): i for i, p in enumerate(job.subgroup_policies)}

    def first(member: Member) -> int:
        if isinstance(member, SubGroupPolicy):
            return order[leaf_name(member)]
        return min((first(m) for m in below[member.name]), default=len(order))

    for policy in job.subgroup_policies:
        below[policy.parent].append(policy)
    return {name: sorted(members, key=first) for name, members in below.items()}


def composite_objects(job: Job, levels: Levels, created: str) -> list[dict[str, Any]]:
    """The Workload, CompositePodGroups and PodGroups of a job :func:`is_composite` accepts.

    Parameters
    ----------
    job
        The job being written.
    levels
        The written tree's level keys.
    created
        The job's ``creationTimestamp``.

    Returns
    -------
    list of dict
        The Workload, then the groups parent first; pods are written by the caller.
    """
    children = _children(job)
    root = next(g for g in job.gang_groups if g.parent is None)
    templates: dict[str, Any] = {}
    groups: list[dict[str, Any]] = []

    def visit(member: Member, template: dict[str, Any]) -> None:
        composite = isinstance(member, GangGroup)
        spec = _spec(member, levels, len(children[member.name]) if composite else 0)
        name = member.name if isinstance(member, GangGroup) else leaf_name(member)
        assert name is not None
        template.update({"name": name, **spec})
        ref = {"workloadName": job.name, "templateName": name}
        parent = {} if member.parent is None else {"parentCompositePodGroupName": member.parent}
        kind = "CompositePodGroup" if isinstance(member, GangGroup) else "PodGroup"
        extra = {"priorityClassName": job.priority_class} if job.priority_class else {}
        groups.append({"apiVersion": API_VERSION, "kind": kind,
                       "metadata": object_metadata(name, job.namespace, creationTimestamp=created),
                       "spec": {**parent, "workloadRef": ref, **spec, **extra}})
        if isinstance(member, GangGroup):
            for child in children[member.name]:
                key = ("compositePodGroupTemplates" if isinstance(child, GangGroup)
                       else "podGroupTemplates")
                template.setdefault(key, []).append(sub := {})
                visit(child, sub)

    visit(root, templates)
    workload = {"apiVersion": API_VERSION, "kind": "Workload",
                "metadata": object_metadata(job.name, job.namespace, creationTimestamp=created),
                "spec": {"compositePodGroupTemplates": [templates]}}
    return [workload, *groups]


def _spec(member: Member, levels: Levels, members: int) -> dict[str, Any]:
    """``schedulingPolicy`` and ``schedulingConstraints`` of a group of ``members`` children
    (a GangGroup's ``min_members`` None: all of them)."""
    if isinstance(member, GangGroup):
        count = members if member.min_members is None else member.min_members
        basic = member.basic or not count
        policy = {"basic": {}} if basic else {"gang": {"minGroupCount": count}}
    else:
        policy = {"gang": {"minCount": member.sub_group_size or 1}}
    return scheduling_spec(policy, member.network_topology, levels)


def scheduling_spec(policy: dict[str, Any], network_topology: NetworkTopology | None,
                    levels: Levels) -> dict[str, Any]:
    """A PodGroup's or CompositePodGroup's ``schedulingPolicy`` and, for a hard constraint at a
    tier ``levels`` names, its ``schedulingConstraints`` (a soft one has no place there).

    Parameters
    ----------
    policy
        The ``schedulingPolicy`` (``gang`` or ``basic``).
    network_topology
        The group's constraint, if any.
    levels
        The label keys of the tree's tiers.

    Returns
    -------
    dict
        The object's ``spec`` fields for scheduling.
    """
    spec: dict[str, Any] = {"schedulingPolicy": policy}
    nt = network_topology
    key = levels.key_of(nt.highest_tier_allowed) if nt is not None and nt.mode == "hard" else None
    if key is not None:
        spec["schedulingConstraints"] = {"topology": [{"key": key}]}
    return spec
