"""Jobs Kueue has not turned into Workloads yet → the Workload Kueue would create.

A ``batch/v1 Job``, ``jobset.x-k8s.io JobSet`` or ``kubeflow.org PyTorchJob`` with the label
``kueue.x-k8s.io/queue-name`` and no Workload of the input owning it becomes a Workload named
``<kind>-<name>``: podsets ``main`` (Job: ``parallelism`` pods), one per replicated job (JobSet:
``replicas`` × ``parallelism``) or one per replica type (PyTorchJob: ``replicas``). The podset
topology request comes from the pod-template annotations ``kueue.x-k8s.io/podset-*``
(:mod:`toposolve.formats.kueue.request`); priority from the label ``kueue.x-k8s.io/priority-class``.
Such objects without the queue label are not Kueue's: skipped with a warning.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from toposolve.formats.k8s.fields import Document, Field, decimal, unread_annotations
from toposolve.formats.kueue.request import (
    ANNOTATION_PREFIX,
    GROUP_ANNOTATION,
    PREFERRED_ANNOTATION,
    REQUIRED_ANNOTATION,
    SLICE_CONSTRAINTS_ANNOTATION,
    SLICE_SIZE_ANNOTATION,
    SLICE_TOPOLOGY_ANNOTATION,
    UNCONSTRAINED_ANNOTATION,
)
from toposolve.formats.kueue.slices import layer_problem

# kueue.x-k8s.io/ pod-template annotations this reader knows (anything else gets one warning)
KNOWN_TEMPLATE_ANNOTATIONS = frozenset({
    REQUIRED_ANNOTATION, PREFERRED_ANNOTATION, UNCONSTRAINED_ANNOTATION,
    SLICE_TOPOLOGY_ANNOTATION, SLICE_SIZE_ANNOTATION, SLICE_CONSTRAINTS_ANNOTATION,
    GROUP_ANNOTATION,
})

BATCH_JOB = ("batch", "Job")
JOBSET = ("jobset.x-k8s.io", "JobSet")
PYTORCH_JOB = ("kubeflow.org", "PyTorchJob")
JOB_KINDS = (BATCH_JOB, JOBSET, PYTORCH_JOB)
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
OWN_PREFIX = "toposolve.io/"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
_REQUEST_FIELDS = {
    REQUIRED_ANNOTATION: "required",
    PREFERRED_ANNOTATION: "preferred",
    SLICE_TOPOLOGY_ANNOTATION: "podSetSliceRequiredTopology",
    GROUP_ANNOTATION: "podSetGroupName",
}


def is_queued(doc: Document) -> bool:
    return QUEUE_LABEL in doc.labels


class Podset(NamedTuple):
    name: str
    count: int
    template: Field
    # the slice size when the template asks for slices without one: a JobSet's slice defaults
    # to one Job, its parallelism (KEP-2724, "PodSet Slice size validation"); None elsewhere
    default_slice: int | None = None


def _podsets(doc: Document, root: Field) -> list[Podset]:
    spec = root["spec"]
    if (doc.api_group, doc.kind) == BATCH_JOB:
        return [Podset("main", spec["parallelism"].integer(1, minimum=0) or 0, spec["template"])]
    if (doc.api_group, doc.kind) == JOBSET:
        out = []
        for rj in spec["replicatedJobs"].elements():
            job_spec = rj.at("template.spec")
            parallelism = job_spec["parallelism"].integer(1, minimum=0) or 0
            out.append(Podset(rj["name"].required_text(),
                              (rj["replicas"].integer(1, minimum=0) or 0) * parallelism,
                              job_spec["template"], parallelism or 1))
        return out
    return [
        Podset(role.lower(), rs["replicas"].integer(1, minimum=0) or 0, rs["template"])
        for role, rs in spec["pytorchReplicaSpecs"].entries()
    ]


def _request(template: Field) -> dict[str, Any]:
    annotations = template.at("metadata.annotations").string_map()
    request: dict[str, Any] = {key: annotations[a] for a, key in _REQUEST_FIELDS.items()
                               if a in annotations}
    if annotations.get(UNCONSTRAINED_ANNOTATION, "").lower() == "true":
        request["unconstrained"] = True
    if SLICE_SIZE_ANNOTATION in annotations:
        text = annotations[SLICE_SIZE_ANNOTATION]
        size = decimal(text)
        if size is None or size < 1:
            raise template.at("metadata.annotations").fail(
                f"{SLICE_SIZE_ANNOTATION}: expected a positive integer, got {text!r}")
        request["podSetSliceSize"] = size
    if SLICE_CONSTRAINTS_ANNOTATION in annotations:
        request["podsetSliceRequiredTopologyConstraints"] = _slice_layers(
            template.at("metadata.annotations"), annotations[SLICE_CONSTRAINTS_ANNOTATION])
    return request


def _slice_layers(where: Field, text: str) -> list[dict[str, Any]]:
    """The JSON list of ``{"topology", "size"}`` layers of the multi-layer slice annotation
    (``size`` a number or a decimal string, as Kueue's examples write it)."""
    name = SLICE_CONSTRAINTS_ANNOTATION
    try:
        layers = json.loads(text)
    except json.JSONDecodeError as exc:
        raise where.fail(f"{name}: not a JSON list of layers ({exc.msg})") from None
    if not isinstance(layers, list) or not layers:
        raise where.fail(f"{name}: expected a non-empty JSON list of layers")
    out = []
    for k, layer in enumerate(layers):
        if not isinstance(layer, dict) or not isinstance(layer.get("topology"), str):
            raise where.fail(f"{name}: layer {k}: expected {{\"topology\": LEVEL, \"size\": N}}")
        if "sizes" in layer:
            raise where.fail(f"{name}: layer {k}: uneven slices (sizes) are not modelled yet")
        size = layer.get("size")
        size = decimal(size) if isinstance(size, str) else size
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise where.fail(f"{name}: layer {k}: size: expected a positive integer, got "
                             f"{layer.get('size')!r}")
        out.append({"topology": layer["topology"], "size": size})
    fault = layer_problem([(layer["topology"], layer["size"]) for layer in out])
    if fault is not None:
        k, part, message = fault
        raise where.fail(f"{name}: {f'layer {k}: {part}: ' if part else ''}{message}")
    return out


def unknown_annotations(doc: Document, root: Field) -> list[str]:
    """``kueue.x-k8s.io/`` annotations of the job's pod templates this reader does not know."""
    keys = [key for podset in _podsets(doc, root)
            for key in podset.template.at("metadata.annotations").string_map()]
    return unread_annotations(keys, ANNOTATION_PREFIX, KNOWN_TEMPLATE_ANNOTATIONS)


def as_workload(doc: Document) -> Document:
    """The Workload Kueue would make for the queued job ``doc``."""
    root = Field.root(doc, doc.object_name(namespaced=True))
    meta = root["metadata"]
    labels = meta["labels"].string_map()
    podsets = []
    for name, count, template, default_slice in _podsets(doc, root):
        ps: dict[str, Any] = {"name": name, "count": count, "template": template.value or {}}
        request = _request(template)
        if ("podSetSliceRequiredTopology" in request and "podSetSliceSize" not in request
                and default_slice is not None):
            request["podSetSliceSize"] = default_slice
        if request:
            ps["topologyRequest"] = request
        podsets.append(ps)
    spec: dict[str, Any] = {"queueName": labels[QUEUE_LABEL], "podSets": podsets}
    if PRIORITY_LABEL in labels:
        spec["priorityClassName"] = labels[PRIORITY_LABEL]
    body = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {
            "name": f"{doc.kind.lower()}-{meta['name'].required_text()}",
            "namespace": meta["namespace"].text("") or "default",
            **({"creationTimestamp": meta["creationTimestamp"].value}
               if meta["creationTimestamp"].present else {}),
            # toposolve's own annotations (parallelism, movable, move-cost) go with the job
            **({"annotations": own} if (own := {k: v for k, v in doc.annotations.items()
                                                if k.startswith(OWN_PREFIX)}) else {}),
        },
        "spec": spec,
    }
    return Document(body, doc.file, doc.position)


def owners(workloads: list[Document]) -> set[tuple[str, str, str]]:
    """(namespace, kind, name) of every object a Workload of the input is owned by."""
    out = set()
    for doc in workloads:
        for ref in doc.metadata.get("ownerReferences") or []:
            if isinstance(ref, dict):
                out.add((doc.namespace, ref.get("kind", ""), ref.get("name", "")))
    return out
