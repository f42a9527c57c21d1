"""A job's SubGroupPolicies and GangGroups → KAI SubGroups (the inverse of the KAI reader's
SubGroup tree), for the KAI writer.

Written for the jobs :func:`kai_shaped` accepts (the shape the KAI reader makes: each policy one
SubGroup's, selected by ``kai.scheduler/subgroup-name``): a GangGroup is a SubGroup with children
(``minSubGroup`` its ``min_members``), a policy a leaf SubGroup (``minMember`` its
``subGroupSize``; 0 for a top one the job does not need), the reader's ``~root`` GangGroup the
PodGroup's ``minSubGroup``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toposolve.core.instance import Job, NetworkTopology, SubGroupPolicy
from toposolve.formats.kai.reader import ROOT_GROUP, SUBGROUP_LABEL

Constraint = Callable[[NetworkTopology | None], dict[str, Any] | None]


def subgroup_name(policy: SubGroupPolicy) -> str | None:
    """The SubGroup a policy stands for, None for a policy of another shape."""
    labels = policy.label_selector.match_labels
    if set(labels) != {SUBGROUP_LABEL} or policy.match_label_keys != [SUBGROUP_LABEL]:
        return None
    return labels[SUBGROUP_LABEL]


def kai_shaped(job: Job) -> bool:
    """Whether the job's policies and GangGroups can be written as KAI SubGroups.

    Parameters
    ----------
    job
        The job being written.

    Returns
    -------
    bool
        True for a job with policies, each one SubGroup's, and no partitions nor task minimum.
    """
    names = [subgroup_name(p) for p in job.subgroup_policies]
    groups = [g.name for g in job.gang_groups]
    return (bool(names) and None not in names and len(set(names) | set(groups))
            == len(names) + len(groups) and not job.min_task_member
            and all(t.partition is None for t in job.tasks))


def kai_subgroups(job: Job, constraint: Constraint) -> tuple[list[dict[str, Any]], int | None]:
    """The SubGroups of a job :func:`kai_shaped` accepts and the PodGroup's ``minSubGroup``.

    Parameters
    ----------
    job
        The job being written.
    constraint
        A constraint's ``topologyConstraint`` (None: none).

    Returns
    -------
    tuple of list of dict and int or None
        The SubGroups, GangGroups first (in their order), then the leaves; the ``minSubGroup``
        of the PodGroup (None: unset).
    """
    top = next((g.min_members for g in job.gang_groups if g.name == ROOT_GROUP), None)
    out: list[dict[str, Any]] = []
    for group in job.gang_groups:
        if group.name == ROOT_GROUP:
            continue
        entry = _entry(group.name, group.parent, constraint(group.network_topology))
        if group.min_members is not None:
            entry["minSubGroup"] = group.min_members
        out.append(entry)
    for policy in job.subgroup_policies:
        entry = _entry(subgroup_name(policy) or "", policy.parent,
                       constraint(policy.network_topology))
        needed = policy.parent is not None or policy.min_sub_groups > 0
        entry["minMember"] = (policy.sub_group_size or 1) if needed else 0
        out.append(entry)
    return out, top


def _entry(name: str, parent: str | None, topology: dict[str, Any] | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name}
    if parent is not None and parent != ROOT_GROUP:
        entry["parent"] = parent
    if topology is not None:
        entry["topologyConstraint"] = topology
    return entry
