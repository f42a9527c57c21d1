"""tests/data/schemas/extract_k8s.py on a small spec of the upstream shape: the closure of the
roots is kept, refs point into ``$defs``, descriptions go, and jsonschema resolves the result."""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

SCRIPT = Path(__file__).resolve().parents[2] / "data" / "schemas" / "extract_k8s.py"
_spec = importlib.util.spec_from_file_location("extract_k8s", SCRIPT)
extract = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(extract)


def _ref(name: str) -> dict:
    return {"allOf": [{"$ref": f"#/components/schemas/{name}"}], "default": {},
            "description": "text"}


CORE = {"components": {"schemas": {
    "io.k8s.api.core.v1.Binding": {
        "description": "Binding ties one object to another", "type": "object",
        "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                       "metadata": _ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"),
                       "target": _ref("io.k8s.api.core.v1.ObjectReference")},
        "required": ["target"]},
    "io.k8s.api.core.v1.ObjectReference": {
        "type": "object", "properties": {"kind": {"type": "string"},
                                         "name": {"type": "string"}}},
    "io.k8s.api.core.v1.Unused": {"type": "object"},
    "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {
        "type": "object", "properties": {"name": {"type": "string"}}}}}}
BATCH = {"components": {"schemas": {
    "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta":
        CORE["components"]["schemas"]["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]}}}


def test_closure_rewrites_refs_and_validates():
    doc = extract.subset([CORE, BATCH], ("io.k8s.api.core.v1.Binding",))
    assert sorted(doc["$defs"]) == ["io.k8s.api.core.v1.Binding",
                                    "io.k8s.api.core.v1.ObjectReference",
                                    "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]
    assert "description" not in json.dumps(doc)
    assert "#/components/" not in json.dumps(doc)
    root = {**doc, "$ref": "#/$defs/io.k8s.api.core.v1.Binding"}
    good = {"metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n"}}
    assert not list(Draft202012Validator(root).iter_errors(good))
    assert list(Draft202012Validator(root).iter_errors({"metadata": {"name": 1}}))


def test_conflicting_or_missing_definitions_stop():
    other = {"components": {"schemas": {
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {"type": "string"}}}}
    with pytest.raises(SystemExit, match="differently"):
        extract.subset([CORE, other], ("io.k8s.api.core.v1.Binding",))
    with pytest.raises(SystemExit, match="none of the files"):
        extract.subset([CORE], ("io.k8s.api.core.v1.Missing",))


def test_main_writes_gzip(tmp_path):
    policy = {"components": {"schemas": {"io.k8s.api.policy.v1.Eviction": {
        "type": "object",
        "properties": {"metadata": _ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")}}}}}
    batch = {"components": {"schemas": {"io.k8s.api.batch.v1.Job": {"type": "object"}}}}
    for name, spec in zip(extract.FILES, (CORE, policy, batch), strict=True):
        (tmp_path / name).write_text(json.dumps(spec))
    out = tmp_path / "subset.json.gz"
    extract.main([str(tmp_path), str(out)])
    doc = json.loads(gzip.decompress(out.read_bytes()))
    assert set(extract.ROOTS) <= set(doc["$defs"])
    assert "io.k8s.api.core.v1.Unused" not in doc["$defs"]
