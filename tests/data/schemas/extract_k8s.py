"""Cut the Kubernetes OpenAPI v3 definitions the export tests need out of the upstream spec.

Usage (run where the upstream files are at hand, e.g. a checkout of kubernetes/kubernetes at
the commit named in README.md)::

    python tests/data/schemas/extract_k8s.py K8S/api/openapi-spec/v3 \
        tests/data/schemas/kubernetes/openapi-v3-subset.json.gz

What it does, and nothing else:

1. reads ``api__v1_openapi.json`` (core: Binding, ObjectReference, policy/v1 Eviction, meta
   types), ``apis__policy__v1_openapi.json`` and ``apis__batch__v1_openapi.json`` (Job,
   JobSpec and the core types a Job references) from the directory given;
2. merges their ``components.schemas`` (a name defined in several files must be defined the
   same way in each, else it stops);
3. keeps the transitive closure of ``$ref`` from :data:`ROOTS`;
4. rewrites ``#/components/schemas/X`` to ``#/$defs/X`` and drops ``description`` keys (text
   only; no validation keyword is touched);
5. writes ``{"$defs": {...}}`` with sorted keys, gzipped when the name ends in ``.gz``.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

FILES = ("api__v1_openapi.json", "apis__policy__v1_openapi.json", "apis__batch__v1_openapi.json")
ROOTS = ("io.k8s.api.core.v1.Binding", "io.k8s.api.policy.v1.Eviction", "io.k8s.api.batch.v1.Job")
PREFIX = "#/components/schemas/"


def merged(specs: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``components.schemas`` of every spec in one mapping (same name, same schema)."""
    out: dict[str, Any] = {}
    for spec in specs:
        for name, schema in spec.get("components", {}).get("schemas", {}).items():
            if name in out and out[name] != schema:
                raise SystemExit(f"{name} is defined differently in two files")
            out[name] = schema
    return out


def refs(schema: Any) -> set[str]:
    """The component names ``schema`` refers to."""
    if isinstance(schema, dict):
        found = {schema["$ref"][len(PREFIX):]} if str(schema.get("$ref", "")).startswith(
            PREFIX) else set()
        return found.union(*(refs(v) for v in schema.values()))
    if isinstance(schema, list):
        return set().union(*(refs(v) for v in schema))
    return set()


def closure(schemas: dict[str, Any], roots: tuple[str, ...]) -> list[str]:
    """The names reachable from ``roots`` through ``$ref`` (sorted); a missing one stops."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name not in schemas:
            raise SystemExit(f"{name} is referenced but defined in none of the files")
        seen.add(name)
        todo.extend(refs(schemas[name]) - seen)
    return sorted(seen)


def rewritten(schema: Any) -> Any:
    """``schema`` with refs pointing into ``$defs`` and without ``description`` text."""
    if isinstance(schema, dict):
        out = {k: rewritten(v) for k, v in schema.items() if k != "description"}
        if isinstance(out.get("$ref"), str) and out["$ref"].startswith(PREFIX):
            out["$ref"] = "#/$defs/" + out["$ref"][len(PREFIX):]
        return out
    if isinstance(schema, list):
        return [rewritten(v) for v in schema]
    return schema


def subset(specs: list[dict[str, Any]], roots: tuple[str, ...] = ROOTS) -> dict[str, Any]:
    """The ``{"$defs": ...}`` document of the closure of ``roots`` in ``specs``."""
    schemas = merged(specs)
    return {"$defs": {name: rewritten(schemas[name]) for name in closure(schemas, roots)}}


def main(argv: list[str]) -> None:
    source, target = Path(argv[0]), Path(argv[1])
    doc = subset([json.loads((source / f).read_text()) for f in FILES])
    text = json.dumps(doc, indent=1, sort_keys=True) + "\n"
    data = gzip.compress(text.encode(), mtime=0) if target.suffix == ".gz" else text.encode()
    target.write_bytes(data)
    print(f"{target}: {len(doc['$defs'])} definitions")


if __name__ == "__main__":
    main(sys.argv[1:])
