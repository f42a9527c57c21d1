"""A planned placement as the ``v1 Binding`` a scheduler posts to bind a pending pod, and the
checks that make a plan's names acceptable to Kubernetes (:func:`check_exportable`).

Every export form (:mod:`toposolve.formats.export.forms`) is built on these. A pod that is
bound already cannot be moved by an object: ``spec.nodeName`` is immutable once set, and a
pending pod is bound only through a Binding (the former ``--as patches`` form, which set
``spec.nodeName``, was refused by the API server and is gone).
"""

from __future__ import annotations

from typing import Any

from toposolve.core.errors import InputError
from toposolve.core.k8s_names import dns_label_problem, dns_subdomain_problem
from toposolve.core.plan import Binding, Plan


def _metadata(pod: str) -> dict[str, str]:
    namespace, _, name = pod.rpartition("/")
    return {"name": name, "namespace": namespace or "default"}


def binding_object(binding: Binding) -> dict[str, Any]:
    """The ``v1 Binding`` that binds ``binding.pod`` to ``binding.node``."""
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": _metadata(binding.pod),
        "target": {"apiVersion": "v1", "kind": "Node", "name": binding.node},
    }


def check_exportable(plan: Plan, source: str = "<plan>") -> None:
    """Raise one :class:`InputError` for the first binding Kubernetes would refuse.

    Refused: a pod the plan binds twice (two Bindings for one pod), a namespace that is no
    DNS label, a pod or node name that is no DNS subdomain (empty, a newline, ``---``, capitals,
    over 253 characters), and ``nominated`` other than ``True`` or ``False``.

    Parameters
    ----------
    plan
        The plan to export.
    source
        The plan's file, for the message.
    """
    first: dict[str, int] = {}
    good_nodes: set[str] = set()  # many pods share a node: check each node name once
    for index, binding in enumerate(plan.bindings):
        why, field = _binding_problem(binding, good_nodes)
        if why is None and first.setdefault(binding.pod, index) != index:
            field = "pod"
            why = f"the plan binds {binding.pod!r} twice (first at bindings[{first[binding.pod]}])"
        if why is not None:
            raise InputError(why, file=source, obj="Plan", field=f"bindings[{index}].{field}")


def _binding_problem(binding: Binding, good_nodes: set[str]) -> tuple[str | None, str]:
    """What is wrong with one binding and in which field, or ``(None, "")``."""
    for field in ("pod", "node"):
        value = getattr(binding, field)
        if not isinstance(value, str):
            return f"expected a string, got {value!r}", field
    namespace, slash, name = binding.pod.rpartition("/")
    why = dns_label_problem(namespace) if slash else None
    if why:
        return f"namespace {why}", "pod"
    why = dns_subdomain_problem(name)
    if why:
        return f"pod name {why}", "pod"
    if binding.node not in good_nodes:
        why = dns_subdomain_problem(binding.node)
        if why:
            return f"node name {why}", "node"
        good_nodes.add(binding.node)
    if not isinstance(binding.nominated, bool):
        return f"expected true or false, got {binding.nominated!r}", "nominated"
    return None, ""
