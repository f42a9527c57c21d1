"""Jobs Kueue has not turned into Workloads yet → the Workloads Kueue would create.

A ``batch/v1 Job``, ``jobset.x-k8s.io JobSet``, ``kubeflow.org PyTorchJob`` or
``leaderworkerset.x-k8s.io LeaderWorkerSet`` with the label ``kueue.x-k8s.io/queue-name`` and no
Workload of the input owning it becomes a Workload named ``<kind>-<name>``: podsets ``main``
(Job: ``parallelism`` pods), one per replicated job (JobSet: ``replicas`` × ``parallelism``) or
one per replica type (PyTorchJob: ``replicas``). A LeaderWorkerSet becomes one Workload per group
(``spec.replicas`` of them, ``<kind>-<name>-<group index>``), podsets ``leader`` (1 pod) and
``worker`` (``size`` - 1), or ``main`` (``size``) without a leader template. The podset topology
request comes from the pod-template annotations ``kueue.x-k8s.io/podset-*``
(:mod:`toposolve.formats.kueue.request`); priority from the label ``kueue.x-k8s.io/priority-class``.
Such objects without the queue label are not Kueue's: skipped with a warning.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from toposolve.core.limits import MAX_PODS
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
    # set by Kueue's LeaderWorkerSet webhook on the templates; no bearing on placement
    "kueue.x-k8s.io/pod-suspending-parent", "kueue.x-k8s.io/pod-group-serving",
})

BATCH_JOB = ("batch", "Job")
JOBSET = ("jobset.x-k8s.io", "JobSet")
PYTORCH_JOB = ("kubeflow.org", "PyTorchJob")
LEADER_WORKER_SET = ("leaderworkerset.x-k8s.io", "LeaderWorkerSet")
JOB_KINDS = (BATCH_JOB, JOBSET, PYTORCH_JOB, LEADER_WORKER_SET)
LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
# Kueue's webhook bound on an LWS's replicas (kueue@ff69552, maxLeaderWorkerSetReplicas)
MAX_LWS_REPLICAS = 1_000_000
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
    if (doc.api_group, doc.kind) == LEADER_WORKER_SET:
        return _lws_podsets(spec["leaderWorkerTemplate"])
    return [
        Podset(role.lower(), rs["replicas"].integer(1, minimum=0) or 0, rs["template"])
        for role, rs in spec["pytorchReplicaSpecs"].entries()
    ]


def _lws_podsets(lwt: Field) -> list[Podset]:
    """One LWS group's podsets, as Kueue's ``podSets`` (leaderworkerset_reconciler.go) builds
    them: ``size`` defaults to 1 and must be at least 1 (LWS's webhook)."""
    size = lwt["size"].integer(1, minimum=1) or 1
    worker = lwt["workerTemplate"]
    if not worker.present:
        raise worker.fail("is required")
    if lwt["leaderTemplate"].present:
        return [Podset("leader", 1, lwt["leaderTemplate"]), Podset("worker", size - 1, worker)]
    return [Podset("main", size, worker)]


def workload_names(doc: Document) -> list[str]:
    """The names of the Workloads the queued job ``doc`` becomes: ``<kind>-<name>``, and for a
    LeaderWorkerSet one per group, ``<kind>-<name>-<group index>`` (Kueue adds a hash of the
    owner's uid, which a manifest may not have yet)."""
    base = f"{doc.kind.lower()}-{doc.name}"
    if (doc.api_group, doc.kind) != LEADER_WORKER_SET:
        return [base]
    root = Field.root(doc, doc.object_name(namespaced=True))
    replicas = root.at("spec.replicas").integer(1, minimum=0, maximum=MAX_LWS_REPLICAS) or 0
    return [f"{base}-{group}" for group in range(replicas)]


def _request(template: Field) -> dict[str, Any]:
    annotations = template.at("metadata.annotations").string_map()
    request: dict[str, Any] = {key: annotations[a] for a, key in _REQUEST_FIELDS.items()
                               if a in annotations}
    kinds = (REQUIRED_ANNOTATION, PREFERRED_ANNOTATION, UNCONSTRAINED_ANNOTATION)
    if sum(a in annotations for a in kinds) > 1:  # the job webhooks (ValidateTASPodSetRequest)
        raise template.at("metadata.annotations").fail(
            "must not contain more than one topology annotation: "
            f"[{', '.join(json.dumps(a) for a in kinds)}]")
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


# the fields of Kueue's PodsetSliceRequiredTopologyConstraint (kueue@ff69552
# apis/kueue/v1beta2/workload_types.go:254-267); json.Unmarshal drops any other key
LAYER_KEYS = ("topology", "size")


def _layer_list(where: Field, text: str) -> list[dict[str, Any]]:
    """The JSON list of layer objects of the multi-layer slice annotation."""
    name = SLICE_CONSTRAINTS_ANNOTATION
    try:
        layers = json.loads(text)
    except json.JSONDecodeError as exc:
        raise where.fail(f"{name}: not a JSON list of layers ({exc.msg})") from None
    if not isinstance(layers, list) or not layers:
        raise where.fail(f"{name}: expected a non-empty JSON list of layers")
    for k, layer in enumerate(layers):
        if not isinstance(layer, dict) or not isinstance(layer.get("topology"), str):
            raise where.fail(f"{name}: layer {k}: expected {{\"topology\": LEVEL, \"size\": N}}")
    return layers


def _slice_layers(where: Field, text: str) -> list[dict[str, Any]]:
    """The ``{"topology", "size"}`` layers of the multi-layer slice annotation (``size`` a
    number or a decimal string, as Kueue's examples write it; other keys dropped, as Kueue's
    decoding drops them: :func:`ignored_layer_keys` words them)."""
    name = SLICE_CONSTRAINTS_ANNOTATION
    out = []
    for k, layer in enumerate(_layer_list(where, text)):
        size = layer.get("size")
        size = decimal(size) if isinstance(size, str) else size
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            # a missing size decodes to 0, which the job webhooks refuse in these words
            raise where.fail(f"{name}: layer {k}: size: must be greater than or equal to 1, got "
                             f"{layer.get('size')!r}")
        out.append({"topology": layer["topology"], "size": size})
    fault = layer_problem([(layer["topology"], layer["size"]) for layer in out])
    if fault is not None:
        k, part, message = fault
        raise where.fail(f"{name}: {f'layer {k}: {part}: ' if part else ''}{message}")
    return out


def ignored_layer_keys(doc: Document, root: Field) -> list[str]:
    """One line per key of a multi-layer slice layer Kueue's decoding drops (``sizes``, say:
    Kueue at ff69552 has no uneven slices), naming the podset, the layer and the key."""
    lines = []
    for podset in _podsets(doc, root):
        where = podset.template.at("metadata.annotations")
        text = where.string_map().get(SLICE_CONSTRAINTS_ANNOTATION)
        if text is None:
            continue
        for k, layer in enumerate(_layer_list(where, text)):
            lines += [f"podset {podset.name!r}: {SLICE_CONSTRAINTS_ANNOTATION}: layer {k}: key "
                      f"{key!r} ignored (Kueue's slice layer has only {', '.join(LAYER_KEYS)})"
                      for key in layer if key not in LAYER_KEYS]
    return lines


def unknown_annotations(doc: Document, root: Field) -> list[str]:
    """``kueue.x-k8s.io/`` annotations of the job's pod templates this reader does not know."""
    keys = [key for podset in _podsets(doc, root)
            for key in podset.template.at("metadata.annotations").string_map()]
    return unread_annotations(keys, ANNOTATION_PREFIX, KNOWN_TEMPLATE_ANNOTATIONS)


def as_workloads(doc: Document) -> list[Document]:
    """The Workloads Kueue would make for the queued job ``doc`` (one per LWS group)."""
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
    meta["name"].required_text()
    names = workload_names(doc)
    pods = sum(ps["count"] for ps in podsets)
    if len(names) * pods > MAX_PODS:  # checked before a Workload per group is built
        raise root.at("spec.replicas").fail(
            f"{len(names):,} groups of {pods:,} pods: more than {MAX_PODS:,} pods")
    # the Workloads share the podsets: the Workload reader only reads them
    return [Document(_workload_body(name, meta, spec, doc), doc.file, doc.position)
            for name in names]


def _workload_body(name: str, meta: Field, spec: dict[str, Any], doc: Document) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {
            "name": name,
            "namespace": meta["namespace"].text("") or "default",
            **({"creationTimestamp": meta["creationTimestamp"].value}
               if meta["creationTimestamp"].present else {}),
            # toposolve's own annotations (parallelism, movable, move-cost) go with the job
            **({"annotations": own} if (own := {k: v for k, v in doc.annotations.items()
                                                if k.startswith(OWN_PREFIX)}) else {}),
        },
        "spec": spec,
    }


def owners(workloads: list[Document]) -> set[tuple[str, str, str]]:
    """(namespace, kind, name) of every object a Workload of the input is owned by."""
    out = set()
    for doc in workloads:
        for ref in doc.metadata.get("ownerReferences") or []:
            if isinstance(ref, dict):
                out.add((doc.namespace, ref.get("kind", ""), ref.get("name", "")))
    return out
