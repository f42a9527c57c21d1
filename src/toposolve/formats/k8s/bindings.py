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
Documents come in plan order (bindings sorted by pod), one YAML document each.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

import yaml

from toposolve.core.plan import Binding, Plan

ExportForm = Literal["bindings", "patches"]
EXPORT_FORMS: tuple[str, ...] = ("bindings", "patches")


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


def export_objects(plan: Plan, form: ExportForm) -> list[dict[str, Any]]:
    """The Kubernetes objects of ``plan`` in ``form`` (see the module doc)."""
    if form == "bindings":
        return [binding_object(b) for b in plan.bindings if not b.nominated]
    if form == "patches":
        return [pod_patch(b) for b in plan.bindings]
    raise ValueError(f"export form must be one of {', '.join(EXPORT_FORMS)}, not {form!r}")


def left_out(plan: Plan, form: ExportForm) -> dict[str, int]:
    """What ``form`` cannot express: evicted pods, and (bindings) the nominated pods."""
    out = {"evictions": len(plan.evictions)}
    if form == "bindings":
        out["nominated"] = sum(1 for b in plan.bindings if b.nominated)
    return {k: v for k, v in out.items() if v}


def dump_objects(objects: Iterable[dict[str, Any]]) -> str:
    """Multi-document YAML, one document per object (empty text for none)."""
    return "".join("---\n" + yaml.safe_dump(o, sort_keys=False) for o in objects)
