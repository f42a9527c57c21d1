"""A plan as Kubernetes objects a user can hand to ``kubectl``.

Two forms (``toposolve export PLAN --as bindings|patches``):

* **bindings**: one ``v1 Binding`` per new placement — what a scheduler posts to bind a pending
  pod (``kubectl create -f bindings.yaml``). A preemptor's pods (``nominated``) cannot be bound
  before their victims are gone, so they are not written; :func:`left_out` says how many.
* **patches**: one partial ``v1 Pod`` per new placement, ``spec.nodeName`` for a pod that may be
  bound now and ``status.nominatedNodeName`` for a preemptor's pod (Kubernetes' nomination),
  ready for ``kubectl patch --type merge`` (the status subresource for nominations) or for
  merging into pod manifests that are not created yet.

Evictions are not objects of either form: ``left_out`` counts them, and the plan lists the pods.
Documents come in plan order (bindings sorted by pod), one YAML document each. A plan that
names a pod twice, or a name Kubernetes would refuse, is refused whole (:func:`check_exportable`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

import yaml

from toposolve.core.errors import InputError
from toposolve.core.k8s_names import dns_label_problem, dns_subdomain_problem
from toposolve.core.plan import Binding, Plan

ExportForm = Literal["bindings", "patches"]
EXPORT_FORMS: tuple[str, ...] = ("bindings", "patches")
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml: same text, ~5x faster


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


def pod_patch(binding: Binding) -> dict[str, Any]:
    """A partial Pod: ``spec.nodeName``, or ``status.nominatedNodeName`` when nominated."""
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": _metadata(binding.pod)}
    if binding.nominated:
        body["status"] = {"nominatedNodeName": binding.node}
    else:
        body["spec"] = {"nodeName": binding.node}
    return body


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


def export_objects(plan: Plan, form: ExportForm, *, source: str = "<plan>") -> list[dict[str, Any]]:
    """The Kubernetes objects of ``plan`` in ``form`` (see the module doc); checked first by
    :func:`check_exportable` (``source`` names the plan in its message)."""
    if form not in EXPORT_FORMS:
        raise ValueError(f"export form must be one of {', '.join(EXPORT_FORMS)}, not {form!r}")
    check_exportable(plan, source)
    if form == "bindings":
        return [binding_object(b) for b in plan.bindings if not b.nominated]
    return [pod_patch(b) for b in plan.bindings]


def left_out(plan: Plan, form: ExportForm) -> dict[str, int]:
    """What ``form`` cannot express: evicted pods, and (bindings) the nominated pods."""
    out = {"evictions": len(plan.evictions)}
    if form == "bindings":
        out["nominated"] = sum(1 for b in plan.bindings if b.nominated)
    return {k: v for k, v in out.items() if v}


def dump_objects(objects: Iterable[dict[str, Any]]) -> str:
    """Multi-document YAML, one document per object (empty text for none)."""
    return yaml.dump_all(objects, Dumper=_DUMPER, sort_keys=False, explicit_start=True)
