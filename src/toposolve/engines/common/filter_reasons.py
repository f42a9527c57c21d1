"""kube-scheduler's Filter plugin reasons and its pod ``FitError`` text, shared by the mirrors
that word a node's refusal as kube-scheduler does (Volcano and KAI call its filters, the kube
mirror is it). Texts and the versions read: docs/kube-fidelity.md "Reason strings".
"""

from __future__ import annotations

from collections.abc import Mapping

UNSCHEDULABLE = "node(s) were unschedulable"  # nodeunschedulable.ErrReasonUnschedulable
NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"  # nodeaffinity.ErrReasonPod
TOO_MANY_PODS = "Too many pods"  # NodeResourcesFit, the node's pod count


def untolerated_taint(key: str, value: str) -> str:
    """TaintToleration's reason for the node's first untolerated NoSchedule/NoExecute taint."""
    return f"node(s) had untolerated taint {{{key}: {value}}}"


def insufficient(resource: str) -> str:
    """NodeResourcesFit's reason for a requested resource the node's free amount cannot give."""
    return f"Insufficient {resource}"


def taint_of(exclusion: str) -> tuple[str, str]:
    """(key, value) of a ``taint <key[=value]:Effect>`` exclusion (``node_exclusion``)."""
    key, _, value = exclusion[len("taint "):].rsplit(":", 1)[0].partition("=")
    return key, value


def filter_reason(exclusion: str) -> str:
    """The first of kube-scheduler's default Filter plugins that refuses a node for a
    ``node_exclusion`` (NodeUnschedulable, TaintToleration, NodeAffinity: the order
    ``node_exclusion`` checks in), in its words."""
    if exclusion == "unschedulable":
        return UNSCHEDULABLE
    if exclusion.startswith("taint "):
        return untolerated_taint(*taint_of(exclusion))
    return NODE_AFFINITY


def fit_error(nodes: int, counts: Mapping[str, int]) -> str:
    """``FitError.Error()``: ``0/<nodes> nodes are available:`` and, when some node gave a
    reason, ``" <n> <reason>, …."`` (each reason counted over the nodes, sorted as strings)."""
    text = f"0/{nodes} nodes are available:"
    if counts:
        text += " " + ", ".join(sorted(f"{n} {reason}" for reason, n in counts.items())) + "."
    return text
