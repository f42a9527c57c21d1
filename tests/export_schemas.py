"""Validators for the objects ``toposolve export`` writes: the upstream CRDs kept under
tests/data/schemas/ (see its README), their CEL rules included (export_cel.py), and, for core
Kubernetes kinds, the strict JSON schemas of Kubernetes 1.35 that the kubernetes-validate
package ships (generated from the upstream OpenAPI spec)."""

from __future__ import annotations

import gzip
import json
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from export_cel import rule_errors
from jsonschema import Draft202012Validator

SCHEMAS = Path(__file__).resolve().parent / "data" / "schemas"
KUBERNETES = {("v1", "Binding"): "binding-v1.json",
              ("policy/v1", "Eviction"): "eviction-policy-v1.json",
              ("batch/v1", "Job"): "job-batch-v1.json",
              ("v1", "Pod"): "pod-v1.json",
              ("v1", "ConfigMap"): "configmap-v1.json"}
K8S_SCHEMAS = "v1.35.0-local-strict"  # kubernetes-validate's strict schemas of Kubernetes 1.35
# a pod-template patch is a server-side apply configuration: it sends only the fields it sets,
# so the fields the API server requires of a whole object are not required of it
APPLY_CONFIGURATIONS = ("io.k8s.api.batch.v1.JobSpec", "io.k8s.api.core.v1.PodSpec")
CRDS = {"kueue.x-k8s.io": "kueue/kueue.x-k8s.io_workloads.yaml.gz",
        "scheduling.run.ai": "kai/scheduling.run.ai_bindrequests.yaml",
        "jobset.x-k8s.io": "jobset/jobset.x-k8s.io_jobsets.yaml.gz",
        "kubeflow.org": "kubeflow/kubeflow.org_pytorchjobs.yaml.gz",
        "leaderworkerset.x-k8s.io": "lws/leaderworkerset.x-k8s.io_leaderworkersets.yaml.gz"}
# the owners whose patches are server-side apply configurations of their pod templates
TEMPLATE_OWNERS = ("jobset.x-k8s.io", "kubeflow.org", "leaderworkerset.x-k8s.io")
# the required lists such a patch need not meet: a PodSpec's containers, and an LWS's
# workerTemplate (a patch of its leaderTemplate alone)
WHOLE_OBJECT_REQUIRED = (["containers"], ["workerTemplate"])


def strict(schema: Any) -> Any:
    """``schema`` with unknown fields refused where it lists its fields (the API server's
    strict field validation), except where it keeps unknown fields."""
    if isinstance(schema, dict):
        out = {k: strict(v) for k, v in schema.items()}
        if ("properties" in out and "additionalProperties" not in out
                and not out.get("x-kubernetes-preserve-unknown-fields")):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [strict(v) for v in schema]
    return schema


@cache
def crd_version_schema(group: str, version: str) -> dict[str, Any]:
    path = SCHEMAS / CRDS[group]
    text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else \
        path.read_text()
    crd = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # 1 MB CRDs
    found = next(v for v in crd["spec"]["versions"] if v["name"] == version)
    schema = strict(found["schema"]["openAPIV3Schema"])
    return _apply_configuration(schema) if group in TEMPLATE_OWNERS else schema


def _apply_configuration(schema: Any) -> Any:
    """A JobSet, PyTorchJob or LeaderWorkerSet patch is a server-side apply configuration of
    its pod templates: what only a whole object must hold is not required of it."""
    if isinstance(schema, dict):
        out = {k: _apply_configuration(v) for k, v in schema.items()}
        if out.get("required") in WHOLE_OBJECT_REQUIRED:
            del out["required"]
        return out
    if isinstance(schema, list):
        return [_apply_configuration(v) for v in schema]
    return schema


@cache
def _kubernetes_registry() -> Any:
    """The 1.35 definitions, with the apply configurations' ``required`` lists dropped."""
    from importlib.resources import files

    from referencing import Registry, Resource

    folder = files("kubernetes_validate") / "kubernetes-json-schema" / K8S_SCHEMAS
    definitions = json.loads((folder / "_definitions.json").read_text())
    for name in APPLY_CONFIGURATIONS:
        definitions["$defs"][name].pop("required", None)
    return folder, Registry().with_resource(definitions["$id"],
                                            Resource.from_contents(definitions))


def crd_schema(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The CRD schema of ``obj``'s apiVersion (None: a core Kubernetes kind)."""
    if (obj["apiVersion"], obj["kind"]) in KUBERNETES:
        return None
    group, version = obj["apiVersion"].split("/")
    return crd_version_schema(group, version)


def validator(obj: dict[str, Any]) -> Draft202012Validator:
    """The validator of ``obj``'s apiVersion and kind."""
    key = (obj["apiVersion"], obj["kind"])
    if key in KUBERNETES:
        folder, registry = _kubernetes_registry()
        schema = json.loads((folder / KUBERNETES[key]).read_text())
        return Draft202012Validator(schema, registry=registry)
    return Draft202012Validator(crd_schema(obj))


def errors(obj: dict[str, Any]) -> list[str]:
    """Every schema violation of ``obj`` and, for a CRD's kind, every CEL rule it breaks
    (empty: valid). An object that breaks its schema is reported by that alone."""
    found = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
             for e in validator(obj).iter_errors(obj)]
    schema = crd_schema(obj)
    if found or schema is None:
        return found
    return rule_errors(obj, schema)
