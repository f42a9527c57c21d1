"""Spec fragments shared by several kinds and by both formats.

Object metadata, ``networkTopology``, label selectors, ``subGroupPolicy`` lists and partition
policies are spelled the same in Kubernetes manifests and in the native ``toposolve/v1`` format,
so both readers and both writers use the functions here. The readers take ``strict``: the native
format rejects keys it does not know, while Kubernetes objects may carry fields toposolve does
not use, so the manifest readers ignore them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from toposolve.core.errors import InputError
from toposolve.core.instance import (
    Job,
    LabelRequirement,
    LabelSelector,
    NetworkTopology,
    PartitionPolicy,
    SubGroupPolicy,
)
from toposolve.formats.k8s.fields import Field, build, check_keys
from toposolve.formats.k8s.pods import label_requirement

NETWORK_TOPOLOGY_MODES = ("hard", "soft")
# withinHyperNode: toposolve's own (native YAML), for inputs with several Kueue/KAI Topologies
NETWORK_TOPOLOGY_KEYS = ("mode", "highestTierAllowed", "highestTierName", "withinHyperNode",
                         "tree", "preferredTier", "missingLevel", "neverPlaced")
LABEL_SELECTOR_KEYS = ("matchLabels", "matchExpressions")
LABEL_REQUIREMENT_KEYS = ("key", "operator", "values")
SUBGROUP_POLICY_KEYS = ("name", "subGroupSize", "labelSelector", "matchLabelKeys",
                        "networkTopology", "minSubGroups")


def object_name(root: Field) -> str:
    return root.at("metadata.name").required_text()


def object_namespace(root: Field) -> str:
    """``metadata.namespace``; unset means ``default``, as kubectl applies it."""
    return root.at("metadata.namespace").text("") or "default"


def creation_time(root: Field) -> datetime | None:
    """``metadata.creationTimestamp`` (RFC 3339; YAML may already have made it a datetime)."""
    field = root.at("metadata.creationTimestamp")
    value = field.value
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise field.fail(f"{value!r} is not an RFC 3339 timestamp") from None
    if not isinstance(value, datetime):
        raise field.fail(f"expected an RFC 3339 timestamp, got {value!r}")
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


FINISHED_PHASES = ("Succeeded", "Failed")  # pod phases with nothing left to place
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def creation_order(created: datetime | None, position: int) -> tuple[bool, datetime, int]:
    """Sort key of the readers' job ranking: by creationTimestamp (missing last), then by order
    of appearance.

    Parameters
    ----------
    created
        The object's :func:`creation_time`.
    position
        Its position in the input.

    Returns
    -------
    tuple
        The key.
    """
    return (created is None, created or _EPOCH, position)


def network_topology(field: Field, *, strict: bool = False) -> NetworkTopology | None:
    """``{mode, highestTierAllowed, highestTierName}``; mode defaults to ``hard`` (CRD default).
    ``strict`` (native YAML): other keys are errors and ``withinHyperNode``, ``tree`` (a
    constraint tree's name), ``preferredTier`` (a Kueue / KAI preferred level), ``missingLevel``
    and ``neverPlaced`` (a constraint no node satisfies, ``NetworkTopology``) are read."""
    if strict:
        check_keys(field, NETWORK_TOPOLOGY_KEYS)
    if not field.present:
        return None
    mode = field["mode"].text("") or "hard"
    if mode not in NETWORK_TOPOLOGY_MODES:
        raise field["mode"].fail(f"unknown mode {mode!r} (expected hard or soft, lower case)")
    allowed = field["highestTierAllowed"].integer(minimum=0)
    name = field["highestTierName"].text("") or None  # Go's omitempty: "" is unset
    if allowed is not None and name is not None:
        raise field.fail("highestTierAllowed and highestTierName cannot both be set")
    within = (field["withinHyperNode"].text("") or None) if strict else None
    tree = (field["tree"].text("") or None) if strict else None
    preferred = field["preferredTier"].integer(minimum=1) if strict else None
    missing = (field["missingLevel"].text("") or None) if strict else None
    never = (field["neverPlaced"].text("") or None) if strict else None
    return build(NetworkTopology, field, mode=mode, highest_tier_allowed=allowed,
                 highest_tier_name=name, within_hypernode=within, tree=tree,
                 preferred_tier=preferred, missing_level=missing, never_placed=never)


def label_selector(field: Field, *, strict: bool = False) -> LabelSelector:
    """A ``metav1.LabelSelector`` (``matchLabels`` and ``matchExpressions``)."""
    if strict:
        check_keys(field, LABEL_SELECTOR_KEYS)
        for e in field["matchExpressions"].elements():
            check_keys(e, LABEL_REQUIREMENT_KEYS)
    return build(LabelSelector, field, match_labels=field["matchLabels"].string_map(),
            match_expressions=[label_requirement(e) for e in field["matchExpressions"].elements()])


def subgroup_policies(field: Field, *, strict: bool = False,
                      shared_names: bool = False) -> list[SubGroupPolicy]:
    """A PodGroup's ``subGroupPolicy`` list; policy names must be unique (Volcano), or with
    ``shared_names`` (native YAML) the pair of name and label selector: the KAI reader names
    every SubGroup's policy alike, their selectors telling them apart."""
    policies: list[SubGroupPolicy] = []
    for p in field.elements():
        if strict:
            check_keys(p, SUBGROUP_POLICY_KEYS)
        policy = build(
            SubGroupPolicy,
            p,
            name=p["name"].required_text(),
            sub_group_size=p["subGroupSize"].integer(minimum=1),
            label_selector=label_selector(p["labelSelector"], strict=strict),
            match_label_keys=p["matchLabelKeys"].string_list(),
            network_topology=network_topology(p["networkTopology"], strict=strict),
            min_sub_groups=p["minSubGroups"].integer(0, minimum=0),
        )
        if any(other.name == policy.name and (not shared_names
                                              or other.label_selector == policy.label_selector)
               for other in policies):
            what = "name and labelSelector" if shared_names else "name"
            raise p["name"].fail(f"duplicate subGroupPolicy {what} {policy.name!r}")
        policies.append(policy)
    return policies


def partition_policy(field: Field, *, total: int, size: int, minimum: int,
                     strict: bool = False) -> PartitionPolicy:
    """The partition policy at ``field`` from the counts the caller read and checked against the
    task's replicas (the formats differ in which counts may be left out); minPartitions may not
    exceed totalPartitions."""
    if minimum > total:
        raise field["minPartitions"].fail(
            f"minPartitions ({minimum}) exceeds totalPartitions ({total})"
        )
    return build(
        PartitionPolicy,
        field,
        total_partitions=total,
        partition_size=size,
        min_partitions=minimum,
        network_topology=network_topology(field["networkTopology"], strict=strict),
    )


# -- writing: plain dicts, fields equal to the reader's default left out ----------------------


def network_topology_manifest(nt: NetworkTopology) -> dict[str, Any]:
    doc: dict[str, Any] = {"mode": nt.mode}
    if nt.highest_tier_allowed is not None:
        doc["highestTierAllowed"] = nt.highest_tier_allowed
    if nt.highest_tier_name is not None:
        doc["highestTierName"] = nt.highest_tier_name
    if nt.within_hypernode is not None:  # only inputs with several Kueue/KAI Topologies
        doc["withinHyperNode"] = nt.within_hypernode
    if nt.tree is not None:  # only inputs with KAI Topologies crossing over the same nodes
        doc["tree"] = nt.tree
    if nt.preferred_tier is not None:  # only Kueue / KAI inputs
        doc["preferredTier"] = nt.preferred_tier
    if nt.missing_level is not None:  # only Kueue inputs: a constraint no node satisfies
        doc["missingLevel"] = nt.missing_level
    if nt.never_placed is not None:
        doc["neverPlaced"] = nt.never_placed
    return doc


def label_requirement_manifest(req: LabelRequirement) -> dict[str, Any]:
    """One ``matchExpressions`` item (label selectors and node selector terms)."""
    doc: dict[str, Any] = {"key": req.key, "operator": req.operator}
    if req.values:
        doc["values"] = list(req.values)
    return doc


def label_selector_manifest(selector: LabelSelector) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    if selector.match_labels:
        doc["matchLabels"] = dict(selector.match_labels)
    if selector.match_expressions:
        doc["matchExpressions"] = [label_requirement_manifest(r)
                                   for r in selector.match_expressions]
    return doc


def refuse_gang_groups(job: Job, form: str) -> None:
    """Volcano's forms hold two gang levels: a job with GangGroups is refused, never flattened."""
    if job.gang_groups:
        raise InputError(f"a gang hierarchy deeper than job → SubJob cannot be written as {form}",
                         obj=f"Job/{job.key}", field="gang_groups")


def subgroup_policy_manifest(policy: SubGroupPolicy) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": policy.name}
    if policy.sub_group_size is not None:
        doc["subGroupSize"] = policy.sub_group_size
    selector = label_selector_manifest(policy.label_selector)
    if selector:
        doc["labelSelector"] = selector
    if policy.match_label_keys:
        doc["matchLabelKeys"] = list(policy.match_label_keys)
    if policy.network_topology is not None:
        doc["networkTopology"] = network_topology_manifest(policy.network_topology)
    if policy.min_sub_groups:
        doc["minSubGroups"] = policy.min_sub_groups
    return doc


def partition_policy_manifest(partition: PartitionPolicy) -> dict[str, Any]:
    """A Volcano task's ``partitionPolicy`` (the native format's task ``partition``)."""
    doc: dict[str, Any] = {
        "totalPartitions": partition.total_partitions,
        "partitionSize": partition.partition_size,
    }
    if partition.min_partitions:
        doc["minPartitions"] = partition.min_partitions
    if partition.network_topology is not None:
        doc["networkTopology"] = network_topology_manifest(partition.network_topology)
    return doc
