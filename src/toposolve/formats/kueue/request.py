"""A Kueue podset's topology request → the model's network topology, partitions and SubJobs.

The request is read from a Workload's ``spec.podSets[].topologyRequest`` or, for jobs Kueue has
not turned into Workloads yet, from the pod-template annotations ``kueue.x-k8s.io/podset-*``
(turned into a ``topologyRequest`` by :mod:`toposolve.formats.kueue.jobs`).

Mapping (gang hierarchy job → SubJob, two levels): a podset group (``podSetGroupName``, two
podsets, one a single-pod leader) is one placement unit; one unit's request is the job's
``networkTopology`` (``required`` hard, ``preferred`` soft); with several units, each
constrained unit is a SubJob; slices are the podset's partitions, hard at the slice level;
multi-layer slices are a gang tree (:mod:`toposolve.formats.kueue.slices`); a constrained unit
with slices, in a workload of several, is a GangGroup over them. The full mapping is in
``docs/formats.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from toposolve.core.instance import NetworkTopology
from toposolve.core.podset_groups import is_group
from toposolve.formats.k8s.fields import Field

ANNOTATION_PREFIX = "kueue.x-k8s.io/"
REQUIRED_ANNOTATION = ANNOTATION_PREFIX + "podset-required-topology"
PREFERRED_ANNOTATION = ANNOTATION_PREFIX + "podset-preferred-topology"
UNCONSTRAINED_ANNOTATION = ANNOTATION_PREFIX + "podset-unconstrained-topology"
SLICE_TOPOLOGY_ANNOTATION = ANNOTATION_PREFIX + "podset-slice-required-topology"
SLICE_SIZE_ANNOTATION = ANNOTATION_PREFIX + "podset-slice-size"
GROUP_ANNOTATION = ANNOTATION_PREFIX + "podset-group-name"
SLICE_CONSTRAINTS_ANNOTATION = ANNOTATION_PREFIX + "podset-slice-required-topology-constraints"


@dataclass
class SliceLayer:
    level: str
    size: int


@dataclass
class TopologyRequest:
    """One podset's request, levels as label keys; ``where`` locates it for errors."""

    where: Field
    required: str | None = None
    preferred: str | None = None
    unconstrained: bool = False
    group: str | None = None
    slices: list[SliceLayer] = field(default_factory=list)
    # the fields of the multi-layer form's layers (empty for the single-layer fields)
    layer_fields: list[Field] = field(default_factory=list)
    # the first level named (podset level, then slice layers) that the flavor's Topology lacks:
    # Kueue's flavor assigner skips every such flavor and the workload stays pending
    missing_level: str | None = None
    # Kueue's TAS reason it never places the slice layers (out of order, sizes not dividing)
    never_placed: str | None = None

    @property
    def modelled_slices(self) -> bool:
        """Whether the slices become partitions or a gang tree (no missing level, placeable)."""
        return bool(self.slices) and self.missing_level is None and self.never_placed is None

    @property
    def has_level(self) -> bool:
        return self.required is not None or self.preferred is not None

    @property
    def levels(self) -> list[str | None]:
        """Every level the request names (None: not named), podset level first."""
        return [self.required, self.preferred, *(layer.level for layer in self.slices)]


def request_from_field(tr: Field) -> TopologyRequest:
    """``topologyRequest`` of a Workload podset (v1beta1 and v1beta2 spell it alike)."""
    request = TopologyRequest(
        where=tr,
        required=tr["required"].text(None),
        preferred=tr["preferred"].text(None),
        unconstrained=tr["unconstrained"].boolean(False),
        group=tr["podSetGroupName"].text(None),
    )
    layers = tr["podsetSliceRequiredTopologyConstraints"].elements()
    if layers:
        request.layer_fields = layers
        request.slices = [
            SliceLayer(c["topology"].required_text(), c["size"].integer(required=True, minimum=1)
                       or 1)
            for c in layers
        ]
    elif tr["podSetSliceRequiredTopology"].present:
        size = tr["podSetSliceSize"]
        if not size.present:
            raise size.fail("slice topology requested, but slice size not provided")
        request.slices = [
            SliceLayer(tr["podSetSliceRequiredTopology"].required_text(), size.integer(minimum=1)
                       or 1)
        ]
    return request


def combined_kinds(request: TopologyRequest) -> str | None:
    """A warning for a Workload's request setting several of ``required``, ``preferred`` and
    ``unconstrained`` (the job webhooks refuse it on annotations; nothing checks a Workload):
    what Kueue's TAS does with it (``levelKey``, ``isUnconstrained``, kueue@ff69552
    ``tas_flavor_snapshot.go:1222-1246``); None for one kind or none."""
    given = [k for k, on in (("required", request.required is not None),
                             ("preferred", request.preferred is not None),
                             ("unconstrained", request.unconstrained)) if on]
    if len(given) < 2:
        return None
    kept = "required" if request.required is not None else "preferred"
    text = f"{' and '.join(given)} set together: Kueue's TAS takes the {kept} level"
    return text + (" with its unconstrained algorithm" if request.unconstrained else "")


def check_group(name: str, members: list[int], counts: list[int], where: Field) -> None:
    """A podset group holds exactly two podsets, one of them with a single pod (Kueue's job
    webhooks refuse anything else, and its TAS places the second podset as a one-pod leader)."""
    if len(members) != 2:
        raise where.fail(
            f"podset group {name!r}: can only define groups of exactly 2 pod sets, got: "
            f"{len(members)} pod set(s)")
    if not is_group([counts[i] for i in members]):
        raise where.fail(
            f"podset group {name!r}: can only define groups where at least one pod set has only 1 "
            "replica, "
            f"got: {counts[members[0]]} replica(s) and {counts[members[1]]} replica(s) in the group"
        )


def level_topology(request: TopologyRequest, tier_of) -> NetworkTopology | None:
    """The unit's network topology: required → hard, preferred → soft with a preferred tier; a
    level the Topology lacks, or layers Kueue's TAS never places → a constraint no node satisfies
    (``missing_level``, ``never_placed``)."""
    if request.missing_level is not None:
        return NetworkTopology(mode="hard", missing_level=request.missing_level)
    if request.never_placed is not None:
        return NetworkTopology(mode="hard", never_placed=request.never_placed)
    if request.required is not None:
        return NetworkTopology(mode="hard",
                               highest_tier_allowed=tier_of(request.required,
                                                            request.where["required"]))
    if request.preferred is not None:
        tier = tier_of(request.preferred, request.where["preferred"])
        return NetworkTopology(mode="soft", highest_tier_allowed=tier, preferred_tier=tier)
    return None


def check_group_slices(request: TopologyRequest) -> None:
    """Kueue's webhook: a podset group takes no multi-layer slices."""
    if request.group is not None and len(request.slices) > 1:
        raise request.where["podSetGroupName"].fail(
            "may not be set when podsetSliceRequiredTopologyConstraints is specified")
