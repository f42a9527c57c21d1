"""Kubernetes label-selector semantics, written out once for the checker."""

from __future__ import annotations

from toposolve.core.instance import LabelRequirement, LabelSelector


def requirement_holds(req: LabelRequirement, labels: dict[str, str]) -> bool:
    """``In``/``NotIn``/``Exists``/``DoesNotExist``/``Gt``/``Lt`` on one label.

    ``NotIn`` and ``DoesNotExist`` hold when the label is absent; ``Gt``/``Lt`` need the label
    to be present and an integer (as in Kubernetes).
    """
    if req.operator == "Exists":
        return req.key in labels
    if req.operator == "DoesNotExist":
        return req.key not in labels
    if req.operator == "In":
        return req.key in labels and labels[req.key] in req.values
    if req.operator == "NotIn":
        return req.key not in labels or labels[req.key] not in req.values
    # Gt / Lt
    if req.key not in labels:
        return False
    try:
        have = int(labels[req.key])
    except ValueError:
        return False
    bound = int(req.values[0])
    return have > bound if req.operator == "Gt" else have < bound


def selector_holds(selector: LabelSelector, labels: dict[str, str]) -> bool:
    """All ``matchLabels`` equal and all ``matchExpressions`` hold (empty selector: everything)."""
    for key, value in selector.match_labels.items():
        if labels.get(key) != value:
            return False
    return all(requirement_holds(req, labels) for req in selector.match_expressions)
