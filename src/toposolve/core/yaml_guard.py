"""Parse YAML and JSON input safely, and bound what YAML aliases can expand to.

:func:`parse_json` and :func:`parse_yaml` turn every parser failure (a syntax error, nesting
deeper than the parser's stack) into one :class:`InputError` naming the file; YAML goes through
libyaml where installed (fast, and it refuses nesting past 1,000 levels itself).

PyYAML builds an alias as a second reference to the same object, so nine levels of ten aliases
parse in microseconds into a DAG that stands for 10^9 nodes, and only the first reader that
walks it as a tree hangs. :func:`check_expansion` counts the nodes the documents stand for (a
scalar, a mapping key or value, a list item: one each), memoised per shared object so it costs
one visit per object written, and rejects a recursive alias outright.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

from toposolve.core.errors import InputError
from toposolve.core.limits import MAX_ALIAS_EXPANSION, MAX_YAML_NODES

_RECURSIVE = "a YAML alias refers to a node that contains it (a recursive alias)"
_TOO_DEEP = "lists or mappings nested too deeply to read"
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader where PyYAML has it (about ten times faster), else PyYAML's own."""


def parse_json(text: str, file: str) -> Any:
    """The JSON value of ``text``; a syntax error or deep nesting is one :class:`InputError`."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
                         file=file) from None
    except RecursionError:
        raise InputError(f"invalid JSON: {_TOO_DEEP}", file=file) from None


def parse_yaml(text: str, file: str) -> list[Any]:
    """Every document of ``text``, aliases bounded by :func:`check_expansion`; a syntax error or
    deep nesting is one :class:`InputError`."""
    try:
        documents = list(yaml.load_all(text, Loader=YAML_LOADER))
    except yaml.YAMLError as exc:
        raise InputError(_yaml_problem(exc), file=file) from None
    except RecursionError:  # PyYAML's own loader recurses; libyaml stops at 1,000 levels
        raise InputError(f"invalid YAML: {_TOO_DEEP}", file=file) from None
    if "&" in text:  # no anchor, no alias: the documents are exactly what the text writes
        check_expansion(documents, file)
    return documents


def parse_json_or_yaml(text: str, file: str) -> list[Any]:
    """The documents of ``text``: parsed as JSON when it is JSON (first non-blank character
    ``{``, and valid: the ``json`` module is about fifty times faster), else as YAML
    (:func:`parse_yaml`; JSON is YAML, so broken JSON gets YAML's message)."""
    if text.lstrip()[:1] == "{":
        try:
            return [json.loads(text)]
        except json.JSONDecodeError:
            pass  # YAML's flow style, {schema: 1}, or broken JSON: YAML says which
        except RecursionError:
            raise InputError(f"invalid JSON: {_TOO_DEEP}", file=file) from None
    return parse_yaml(text, file)


def _yaml_problem(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is None:
        return f"invalid YAML: {problem}"
    return f"invalid YAML at line {mark.line + 1}, column {mark.column + 1}: {problem}"


def check_expansion(documents: list[Any], file: str) -> None:
    """Raise :class:`InputError` if ``documents`` expand past the documented limits."""
    expanded: dict[int, int] = {}  # id(container) -> nodes it stands for, itself included
    containers: dict[int, Any] = {}  # every distinct container, each counted once as written
    total = sum(_expanded_size(doc, expanded, containers, file) for doc in documents)
    written = sum(1 for d in documents if not isinstance(d, dict | list))
    written += sum(1 + len(_children(c)) for c in containers.values())
    if total > MAX_YAML_NODES:
        raise InputError(
            f"the YAML stands for {total:,} nodes, more than the limit {MAX_YAML_NODES:,}",
            file=file)
    if total - written > MAX_ALIAS_EXPANSION:
        raise InputError(
            f"YAML aliases expand the file by {total - written:,} nodes, more than the limit "
            f"{MAX_ALIAS_EXPANSION:,} (an alias bomb?)",
            file=file,
        )


def _children(obj: Any) -> list[Any]:
    if isinstance(obj, dict):
        return [v for pair in obj.items() for v in pair]
    return list(obj)


def _expanded_size(root: Any, expanded: dict[int, int], containers: dict[int, Any],
                   file: str) -> int:
    """Nodes ``root`` stands for; iterative, so deep nesting cannot overflow the stack."""
    if not isinstance(root, dict | list):
        return 1
    on_path: set[int] = set()  # entered, not finished: the current path from the root
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        obj, finished = stack.pop()
        key = id(obj)
        if finished:
            on_path.discard(key)
            expanded[key] = 1 + sum(expanded[id(c)] if isinstance(c, dict | list) else 1
                                    for c in _children(obj))
            continue
        if key in expanded:
            continue
        on_path.add(key)
        containers[key] = obj
        stack.append((obj, True))
        for child in _children(obj):
            if isinstance(child, dict | list):
                if id(child) in on_path:
                    raise InputError(_RECURSIVE, file=file)
                if id(child) not in expanded:
                    stack.append((child, False))
    return expanded[id(root)]


STDIN = "-"
"""The path that names standard input (and, for outputs, standard output)."""


def read_text(path: Path) -> str:
    """A UTF-8 text file (``-``: standard input); unreadable or not UTF-8 raises one
    :class:`InputError` naming it."""
    try:
        if str(path) == STDIN:
            return sys.stdin.buffer.read().decode("utf-8")
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})",
            file=str(path)
        ) from None
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", file=str(path)) from None
