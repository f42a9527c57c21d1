"""A sweep specification: a base scenario and a grid of values to vary (YAML, ``kind: Sweep``).

Every key is listed in ``docs/sweep.md``. A spec is checked whole when it is read: unknown keys
(with the nearest known one), wrong types and junk grid paths are refused, and the number of
scenarios is bounded (:data:`~toposolve.core.limits.MAX_SCENARIOS`) from the grid's sizes before
any scenario is built. Errors are one line: ``SPEC: Sweep: base.PATH`` or
``SPEC: Sweep: grid.KEY[i]`` (the grid value at fault), then what is wrong.
"""

from __future__ import annotations

import copy
import itertools
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from toposolve.core.errors import InputError
from toposolve.core.limits import MAX_SCENARIOS
from toposolve.core.yaml_guard import check_expansion, read_text
from toposolve.sim.sweep.schema import did_you_mean, scenario_problem

KIND = "Sweep"
MODES = ("replay", "solve")
TOP_KEYS = ("apiVersion", "kind", "metadata", "mode", "base", "grid")


@dataclass
class SweepSpec:
    base: dict[str, Any]
    grid: dict[str, list[Any]] = field(default_factory=dict)
    mode: str = "replay"
    root: str = "."  # directory relative file paths start from
    source: str = "<sweep>"

    def scenarios(self) -> list[dict[str, Any]]:
        """Every combination of the grid applied to ``base``, in grid order (last key fastest).

        Each is ``{index, params, spec, mode, root, picks}``; ``picks`` holds the position of
        each grid value in its list (for error messages).
        """
        keys = list(self.grid)
        out = []
        for picks in itertools.product(*(range(len(self.grid[k])) for k in keys)):
            values = [self.grid[k][i] for k, i in zip(keys, picks, strict=True)]
            scenario = copy.deepcopy(self.base)
            for key, value in zip(keys, values, strict=True):
                set_path(scenario, key, copy.deepcopy(value))
            out.append({"index": len(out), "params": dict(zip(keys, values, strict=True)),
                        "picks": dict(zip(keys, picks, strict=True)), "spec": scenario,
                        "mode": self.mode, "root": self.root})
        return out

    def error(self, message: str, where: str) -> InputError:
        """An :class:`InputError` naming this spec's file and ``where`` in it."""
        return InputError(message, file=self.source, obj=KIND, field=where)

    def blame(self, scenario: dict[str, Any], path: str) -> str:
        """Where in the spec ``path`` of ``scenario`` comes from: ``grid.KEY[i]`` (the value at
        position ``i`` of the longest grid key that sets ``path`` or a mapping around it), else
        ``base.PATH``."""
        for key in sorted(self.grid, key=len, reverse=True):
            if path == key or path.startswith(key + "."):
                return f"grid.{key}[{scenario['picks'][key]}]{path[len(key):]}"
        return "base" if path == "(scenario)" else f"base.{path}"


def set_path(tree: dict[str, Any], dotted: str, value: Any) -> None:
    node = tree
    *parents, last = dotted.split(".")
    for key in parents:
        child = node.get(key)
        if not isinstance(child, dict):
            child = node[key] = {}
        node = child
    node[last] = value


def load_spec(path: str | Path) -> SweepSpec:
    """Read and check a sweep file; one-line InputError naming the file and the field."""
    path = Path(path)
    text = read_text(path)
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InputError(f"malformed YAML: {getattr(exc, 'problem', exc)}",
                         file=str(path)) from None
    check_expansion([doc], str(path))
    return spec_from_dict(doc, source=str(path), root=str(path.parent))


def spec_from_dict(doc: Any, *, source: str = "<sweep>", root: str = ".") -> SweepSpec:
    """A checked :class:`SweepSpec` from its mapping (every scenario's keys and types)."""
    def fail(message: str, where: str) -> InputError:
        return InputError(message, file=source, obj=KIND, field=where)

    if not isinstance(doc, dict) or doc.get("kind") != KIND:
        raise fail(f"expected a mapping with kind: {KIND}", "kind")
    for key in doc:
        if key not in TOP_KEYS:
            raise fail(f"unknown key{did_you_mean(str(key), TOP_KEYS)}", str(key))
    mode = doc.get("mode", "replay")
    if mode not in MODES:
        raise fail(f"must be one of {', '.join(MODES)}, not {mode!r}", "mode")
    base = doc.get("base")
    if not isinstance(base, dict):
        raise fail("needs a mapping (the base scenario)", "base")
    grid = doc.get("grid") or {}
    if not isinstance(grid, dict):
        raise fail("expected a mapping of dotted paths to lists", "grid")
    for key, values in grid.items():
        if not isinstance(key, str) or not all(part.strip() for part in key.split(".")):
            raise fail("expected a dotted path such as cluster.nodes", f"grid.{key}")
        if not isinstance(values, list) or not values:
            raise fail("expected a non-empty list of values", f"grid.{key}")
    count = math.prod(len(values) for values in grid.values())
    if count > MAX_SCENARIOS:
        raise fail(f"{count:,} scenarios, more than the limit {MAX_SCENARIOS:,}", "grid")
    spec = SweepSpec(base=base, grid=grid, mode=mode, root=root, source=source)
    for scenario in spec.scenarios():
        problem = scenario_problem(scenario["spec"], mode)
        if problem:
            raise fail(problem[1], spec.blame(scenario, problem[0]))
    return spec

