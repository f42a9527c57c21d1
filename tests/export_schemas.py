"""Validators for the objects ``toposolve export`` writes, from the schema files kept under
tests/data/schemas/ (see its README): upstream CRDs and a Kubernetes OpenAPI subset."""

from __future__ import annotations

import copy
import gzip
import json
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator

SCHEMAS = Path(__file__).resolve().parent / "data" / "schemas"
KUBERNETES = {("v1", "Binding"): "io.k8s.api.core.v1.Binding",
              ("policy/v1", "Eviction"): "io.k8s.api.policy.v1.Eviction",
              ("batch/v1", "Job"): "io.k8s.api.batch.v1.Job"}
CRDS = {"kueue.x-k8s.io": "kueue/kueue.x-k8s.io_workloads.yaml.gz",
        "scheduling.run.ai": "kai/scheduling.run.ai_bindrequests.yaml"}


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
def _crd_schema(group: str, version: str) -> dict[str, Any]:
    path = SCHEMAS / CRDS[group]
    text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else \
        path.read_text()
    crd = yaml.safe_load(text)
    found = next(v for v in crd["spec"]["versions"] if v["name"] == version)
    return strict(found["schema"]["openAPIV3Schema"])


@cache
def _kubernetes() -> dict[str, Any]:
    return strict(json.loads((SCHEMAS / "kubernetes" / "export-subset.json").read_text()))


def validator(obj: dict[str, Any]) -> Draft202012Validator:
    """The validator of ``obj``'s apiVersion and kind."""
    key = (obj["apiVersion"], obj["kind"])
    if key in KUBERNETES:
        root = copy.copy(_kubernetes())
        root["$ref"] = f"#/components/schemas/{KUBERNETES[key]}"
        return Draft202012Validator(root)
    group, version = obj["apiVersion"].split("/")
    return Draft202012Validator(_crd_schema(group, version))


def errors(obj: dict[str, Any]) -> list[str]:
    """Every schema violation of ``obj`` (empty: valid)."""
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator(obj).iter_errors(obj)]
