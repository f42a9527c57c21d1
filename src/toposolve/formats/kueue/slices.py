"""A Kueue podset's multi-layer slices (``podsetSliceRequiredTopologyConstraints``, gate
``TASMultiLayerTopology``, beta, on) → the model's gang tree.

Layer ``k`` of size ``s_k`` cuts the podset's pods, in index order, into slices of ``s_k``
consecutive pods, each hard at its level. The outer layers are GangGroups
(``<podset>-layer<k>-<m>``), the innermost one SubJobs below them; each pod carries its slice
index per layer (``toposolve.io/kueue-slice-<k>``). What Kueue's job webhooks refuse (a layer
count outside 1–3, a repeated level, a size not dividing the outer one) is a one-line input error
naming the field; on a Workload object Kueue's TAS leaves layers out of order or not dividing
pending (``never_placed``). Mapping and deviations: ``docs/formats.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

from toposolve.core.instance import (
    PARTITION_ID_LABEL,
    TASK_SPEC_LABEL,
    GangGroup,
    Job,
    LabelSelector,
    NetworkTopology,
    SubGroupPolicy,
    Task,
)
from toposolve.core.podset_groups import PODSET_GANG_PREFIX
from toposolve.formats.k8s.fields import Field

MAX_LAYERS = 3  # Kueue's errTopologyConstraintsLayerCount
SLICE_LABEL_PREFIX = "toposolve.io/kueue-slice-"  # + k: a pod's slice index in layer k (0: outer)


def layer_problem(layers: list[tuple[str, int]]) -> tuple[int, str, str] | None:
    """What Kueue's webhook refuses in the layers (``validateSliceRequiredTopologyConstraints
    Annotation``: 1–3 layers, levels unique, each size dividing the outer one).

    Parameters
    ----------
    layers
        (level label, size) per layer, outermost first.

    Returns
    -------
    tuple or None
        (layer index, ``"topology"``, ``"size"`` or ``""`` for the whole list, message) of the
        first fault; None when Kueue accepts them.
    """
    if not 1 <= len(layers) <= MAX_LAYERS:
        return (0, "", f"topology constraints must contain between 1 and {MAX_LAYERS} entries, "
                       f"got {len(layers)}")
    for k, (level, size) in enumerate(layers):
        if any(level == other for other, _ in layers[:k]):
            return k, "topology", f"duplicate level {level!r}"
        if k and layers[k - 1][1] % size:
            return k, "size", f"must evenly divide the parent layer size {layers[k - 1][1]}"
    return None


def check_layer_count(layers: list[tuple[str, int]], where: Field) -> None:
    """Refuse more than :data:`MAX_LAYERS` layers on a Workload (its CRD's ``MaxItems``)."""
    if len(layers) > MAX_LAYERS:
        raise where.fail(f"topology constraints must contain between 1 and {MAX_LAYERS} entries, "
                         f"got {len(layers)}")


def never_placed_reason(layers: list[tuple[str, int]], tiers: list[int]) -> str | None:
    """Kueue's TAS reason it never places a Workload's layers (``buildSliceSizeAtLevel``,
    kueue@ff69552 ``tas_flavor_snapshot.go:1146-1156``): per inner layer, its level not strictly
    below the layer above (a repeated level too), then its size not dividing the one above.

    Parameters
    ----------
    layers
        (level label, size) per layer, outermost first.
    tiers
        The Topology's tier of each layer's level (lowest level = tier 1).

    Returns
    -------
    str or None
        Kueue's text for the first fault; None when TAS can place the layers.
    """
    for k in range(1, len(layers)):
        (level, size), (above, above_size) = layers[k], layers[k - 1]
        if tiers[k] >= tiers[k - 1]:
            return f"additional slice layer topology {level} must be at a lower level than {above}"
        if above_size % size:
            return (f"additional slice layer size {size} must evenly divide parent layer size "
                    f"{above_size}")
    return None


def _layer_label(k: int) -> str:
    return f"{SLICE_LABEL_PREFIX}{k}"


def _group_name(task: Task, k: int, m: int) -> str:
    return f"{task.name}-layer{k}-{m}"


def _incomplete_name(task: Task) -> str:
    """The policy of the podset's last, incomplete outer slice."""
    return f"{task.name}-layer0-incomplete"


def add_slice_tree(job: Job, task: Task, sizes: list[int], tiers: list[int],
                   parent: str | None = None) -> None:
    """Add the gang tree of ``task``'s slices to ``job`` (two layers or more).

    Parameters
    ----------
    job
        The workload's job (GangGroups and policies are appended).
    task
        The podset; each size divides the one above it (checked by the reader), the outer one
        need not divide the replicas: the pods past the last whole outer slice are its last,
        incomplete slice, a SubJob of the full outer size that no engine can fill (Kueue's TAS
        places ``count // size`` outer slices and leaves the rest gated, as with one layer).
    sizes, tiers
        Per layer, outermost first: the slice size and the hard tier.
    parent
        The GangGroup of the podset's own level (None: the slices are the job's members).
    """
    for i in range(task.replicas):
        labels = task.pod_labels.setdefault(i, {})
        labels.update({_layer_label(k): str(i // s) for k, s in enumerate(sizes)})
    whole = task.replicas // sizes[0]
    count = whole * sizes[0]
    if count < task.replicas:
        job.subgroup_policies.append(SubGroupPolicy(
            name=_incomplete_name(task), sub_group_size=sizes[0],
            label_selector=LabelSelector(match_labels={TASK_SPEC_LABEL: task.name,
                                                       _layer_label(0): str(whole)}),
            match_label_keys=[_layer_label(0)],
            network_topology=NetworkTopology(mode="hard", highest_tier_allowed=tiers[0]),
            parent=parent))
    inner = len(sizes) - 1
    for k in range(inner):
        for m in range(count // sizes[k]):
            above = parent if k == 0 else _group_name(task, k - 1, m * sizes[k] // sizes[k - 1])
            job.gang_groups.append(GangGroup(
                name=_group_name(task, k, m), parent=above,
                network_topology=NetworkTopology(mode="hard", highest_tier_allowed=tiers[k])))
    for m in range(count // sizes[inner - 1]):
        job.subgroup_policies.append(SubGroupPolicy(
            name=f"{task.name}-layer{inner}",  # SubJob id: <job>/<podset>-layer<k>-<slice>
            sub_group_size=sizes[inner],
            label_selector=LabelSelector(match_labels={TASK_SPEC_LABEL: task.name,
                                                       _layer_label(inner - 1): str(m)}),
            match_label_keys=[_layer_label(inner)],
            network_topology=NetworkTopology(mode="hard", highest_tier_allowed=tiers[inner]),
            parent=_group_name(task, inner - 1, m),
        ))


def add_uneven_slices(job: Job, task: Task, size: int, tier: int,
                      parent: str | None = None) -> None:
    """Add one slice layer of ``size`` over ``task``'s pods as one policy: when ``size`` does
    not divide them, or below the podset's own GangGroup ``parent`` (a partition has none).

    Kueue's TAS places ``count // size`` whole slices and gives the last, incomplete one no
    domain (its pods stay gated): pod ``i`` is in slice ``i // size`` (the partition label, as a
    partition's), one SubJob per slice of gang ``size``, so no engine can place the last one.

    Parameters
    ----------
    job
        The workload's job (the policy is appended).
    task
        The podset.
    size, tier
        The slice size and its hard tier.
    parent
        The GangGroup of the podset's own level (None: the slices are the job's members).
    """
    for i in range(task.replicas):
        task.pod_labels.setdefault(i, {})[PARTITION_ID_LABEL] = str(i // size)
    job.subgroup_policies.append(SubGroupPolicy(
        name=task.name, sub_group_size=size,
        label_selector=LabelSelector(match_labels={TASK_SPEC_LABEL: task.name}),
        match_label_keys=[PARTITION_ID_LABEL],
        network_topology=NetworkTopology(mode="hard", highest_tier_allowed=tier), parent=parent))


def podset_gang(job: Job, task: Task) -> GangGroup | None:
    """The GangGroup of ``task``'s own level above its slices (a workload of several podsets),
    or None."""
    return next((g for g in job.gang_groups
                 if g.name == PODSET_GANG_PREFIX + task.name and g.parent is None), None)


def uneven_slices(job: Job, task: Task) -> SubGroupPolicy | None:
    """The policy :func:`add_uneven_slices` added for ``task`` (None: it has none)."""
    if task.partition is not None:
        return None
    own = podset_gang(job, task)
    return next((p for p in job.subgroup_policies
                 if p.name == task.name and p.parent == (own.name if own else None)
                 and p.match_label_keys == [PARTITION_ID_LABEL]
                 and p.label_selector.match_labels == {TASK_SPEC_LABEL: task.name}
                 and p.network_topology is not None and p.sub_group_size is not None), None)


@dataclass
class SliceTree:
    """A podset's multi-layer slices as :func:`add_slice_tree` built them."""

    tiers: list[int]  # per layer, outermost first
    sizes: list[int]
    groups: set[str]  # its GangGroups' names
    policies: set[str]  # its subGroupPolicies' names


def slice_tree(job: Job, task: Task) -> SliceTree | None:
    """The multi-layer slices of ``task`` in ``job`` (None: it has none), read back from the
    gang tree and the pods' slice labels that :func:`add_slice_tree` wrote.

    Parameters
    ----------
    job, task
        The job and one of its tasks.

    Returns
    -------
    SliceTree or None
        Tiers and sizes per layer, and the tree's GangGroups and policies.
    """
    policies = [p for p in job.subgroup_policies
                if p.parent is not None and p.network_topology is not None
                and p.name != _incomplete_name(task)
                and p.label_selector.match_labels.get(TASK_SPEC_LABEL) == task.name
                and any(k.startswith(SLICE_LABEL_PREFIX) for k in p.match_label_keys)]
    if not policies:
        return None
    by_name = {g.name: g for g in job.gang_groups}
    chain: list[GangGroup] = []
    name: str | None = policies[0].parent
    while name is not None and name.startswith(f"{task.name}-layer"):  # not the podset's own
        chain.append(by_name[name])
        name = by_name[name].parent
    tiers = [g.network_topology.highest_tier_allowed if g.network_topology else 0
             for g in reversed(chain)]
    innermost = policies[0].network_topology
    assert innermost is not None  # selected above
    tiers.append(innermost.highest_tier_allowed)
    sizes = [sum(1 for labels in task.pod_labels.values() if labels.get(_layer_label(k)) == "0")
             for k in range(len(tiers))]
    prefix = f"{task.name}-layer"
    groups = {g.name for g in job.gang_groups if g.name.startswith(prefix)}
    names = {p.name for p in policies}
    names |= {p.name for p in job.subgroup_policies if p.name == _incomplete_name(task)}
    return SliceTree(tiers, sizes, groups, names)
