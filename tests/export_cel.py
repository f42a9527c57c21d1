"""The CEL rules (``x-kubernetes-validations``) of a CRD schema, evaluated on an object as the
API server does: defaults filled in first, then every rule at the schema node that carries it,
with ``self`` that node's value, wherever the object has a value there. Transition rules (those
naming ``oldSelf``) run only against a stored object given as the update's old value. Which
rules run and why: tests/data/schemas/README.md."""

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


def failure(expression: str, value: Any, old: Any = None) -> str | None:
    """Why ``expression`` does not hold of ``self = value`` (and ``oldSelf = old`` when given)
    (None: it holds). An evaluation error (a missing field read without ``has``) fails the
    rule, as in the API server."""
    bindings = {"self": celpy.json_to_cel(value)}
    if old is not None:
        bindings["oldSelf"] = celpy.json_to_cel(old)
    try:
        result = program(expression).evaluate(bindings)
    except celpy.CELEvalError as error:
        result = error
    if isinstance(result, celpy.CELEvalError):
        return f"error: {str(result.args[0])[:ERROR_CHARS]}"
    if not isinstance(result, celpy.celtypes.BoolType):
        return f"not a bool: {result!r}"
    return None if result else "false"


def rule_errors(obj: dict[str, Any], schema: dict[str, Any],
                stored: dict[str, Any] | None = None) -> list[str]:
    """Every CEL rule of ``schema`` that ``obj`` (defaulted) breaks, as ``path: message
    (why)``. Transition rules run only as an update of ``stored`` (None: a create), at the
    nodes where both have a value (list items matched by their map keys)."""
    out: list[str] = []
    old = None if stored is None else with_defaults(stored, schema)
    _check(with_defaults(obj, schema), old, schema, [], out)
    return out


def _check(value: Any, old: Any, schema: dict[str, Any], path: list[str],
           out: list[str]) -> None:
    if value is None:
        return
    for rule in schema.get("x-kubernetes-validations", ()):
        transition = is_transition(rule)
        if transition and old is None:
            continue
        why = failure(rule["rule"], value, old if transition else None)
        if why is not None:
            out.append(f"{'.'.join(path)}: {rule.get('message', rule['rule'])} ({why})")
    if isinstance(value, dict):
        extra = schema.get("additionalProperties")
        for name, item in value.items():
            child = schema.get("properties", {}).get(name, extra)
            if isinstance(child, dict):
                before = old.get(name) if isinstance(old, dict) else None
                _check(item, before, child, [*path, name], out)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        keys = schema.get("x-kubernetes-list-map-keys")
        olds = {_key(o, keys): o for o in old} if keys and isinstance(old, list) else {}
        for i, item in enumerate(value):
            before = olds.get(_key(item, keys)) if keys else None
            _check(item, before, schema["items"], [*path, str(i)], out)


def _key(item: Any, keys: list[str]) -> tuple:
    """The map keys of a ``x-kubernetes-list-type: map`` item (how the API server pairs an
    updated item with its stored one)."""
    return tuple(item.get(k) for k in keys) if isinstance(item, dict) else (item,)
