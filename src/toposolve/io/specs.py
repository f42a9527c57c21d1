"""Spec fragments shared by several kinds: object metadata, ``networkTopology``, label selectors."""

from __future__ import annotations

from datetime import UTC, datetime

from ..model.instance import LabelSelector, NetworkTopology
from .k8s_pod import label_requirement
from .manifest_fields import Field, build

NETWORK_TOPOLOGY_MODES = ("hard", "soft")


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


def network_topology(field: Field) -> NetworkTopology | None:
    """``{mode, highestTierAllowed, highestTierName}``; mode defaults to ``hard`` (CRD default)."""
    if not field.present:
        return None
    mode = field["mode"].text("") or "hard"
    if mode not in NETWORK_TOPOLOGY_MODES:
        raise field["mode"].fail(f"unknown mode {mode!r} (expected hard or soft, lower case)")
    allowed = field["highestTierAllowed"].integer(minimum=0)
    name = field["highestTierName"].text("") or None  # Go's omitempty: "" is unset
    if allowed is not None and name is not None:
        raise field.fail("highestTierAllowed and highestTierName cannot both be set")
    return build(
        NetworkTopology, field, mode=mode, highest_tier_allowed=allowed, highest_tier_name=name
    )


def label_selector(field: Field) -> LabelSelector:
    """A ``metav1.LabelSelector`` (``matchLabels`` and ``matchExpressions``)."""
    return build(
        LabelSelector,
        field,
        match_labels=field["matchLabels"].string_map(),
        match_expressions=[label_requirement(e) for e in field["matchExpressions"].elements()],
    )
