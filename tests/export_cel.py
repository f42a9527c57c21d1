"""The CEL rules (``x-kubernetes-validations``) of a CRD schema, evaluated on an object as the
API server does: defaults filled in first, then every rule at the schema node that carries it,
with ``self`` that node's value, wherever the object has a value there. Transition rules (those
naming ``oldSelf``) are left out. Which rules run and why: tests/data/schemas/README.md."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from functools import cache
from typing import Any

import celpy

TRANSITION = re.compile(r"\boldSelf\b")
ERROR_CHARS = 200  # celpy's error text includes its whole activation; the head says enough


def rules(schema: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every CEL rule of ``schema`` with the path of the node that carries it (``[]`` for a
    list's items, ``{}`` for a map's values; ``""`` for the root)."""
    for rule in schema.get("x-kubernetes-validations", ()):
        yield path, rule
    for name, child in schema.get("properties", {}).items():
        yield from rules(child, f"{path}.{name}" if path else name)
    if isinstance(schema.get("items"), dict):
        yield from rules(schema["items"], f"{path}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from rules(schema["additionalProperties"], f"{path}{{}}")


def is_transition(rule: dict[str, Any]) -> bool:
    """Whether ``rule`` compares with the stored object (``oldSelf``): run on updates only."""
    return bool(TRANSITION.search(rule["rule"]))


@cache
def program(expression: str) -> Any:
    """The compiled CEL program of ``expression`` (raises celpy.CELParseError if it is not
    CEL)."""
    env = celpy.Environment()
    return env.program(env.compile(expression))


def with_defaults(value: Any, schema: dict[str, Any]) -> Any:
    """``value`` with the schema's ``default`` of every absent property filled in, at every
    level (the API server defaults an object before it validates it)."""
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        out = {}
        for name, child in properties.items():
            if name not in value and "default" in child:
                out[name] = copy.deepcopy(child["default"])
        for name, item in value.items():
            child = properties.get(name, extra if isinstance(extra, dict) else {})
            out[name] = with_defaults(item, child)
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [with_defaults(item, schema["items"]) for item in value]
    return value


def failure(expression: str, value: Any) -> str | None:
    """Why ``expression`` does not hold of ``self = value`` (None: it holds). An evaluation
    error (a missing field read without ``has``) fails the rule, as in the API server."""
    try:
        result = program(expression).evaluate({"self": celpy.json_to_cel(value)})
    except celpy.CELEvalError as error:
        return f"error: {str(error.args[0])[:ERROR_CHARS]}"
    if isinstance(result, celpy.CELEvalError):
        return f"error: {str(result.args[0])[:ERROR_CHARS]}"
    if not isinstance(result, celpy.celtypes.BoolType):
        return f"not a bool: {result!r}"
    return None if result else "false"


def rule_errors(obj: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """Every non-transition CEL rule of ``schema`` that ``obj`` (defaulted) breaks, as
    ``path: message (why)``."""
    out: list[str] = []
    _check(with_defaults(obj, schema), schema, [], out)
    return out


def _check(value: Any, schema: dict[str, Any], path: list[str], out: list[str]) -> None:
    if value is None:
        return
    for rule in schema.get("x-kubernetes-validations", ()):
        why = None if is_transition(rule) else failure(rule["rule"], value)
        if why is not None:
            out.append(f"{'.'.join(path)}: {rule.get('message', rule['rule'])} ({why})")
    if isinstance(value, dict):
        extra = schema.get("additionalProperties")
        for name, item in value.items():
            child = schema.get("properties", {}).get(name, extra)
            if isinstance(child, dict):
                _check(item, child, [*path, name], out)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            _check(item, schema["items"], [*path, str(i)], out)
