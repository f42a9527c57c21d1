"""A sweep specification: a base scenario and a grid of values to vary (YAML, ``kind: Sweep``).

Rules and rationale: ``docs/replay.md``, section ``toposolve.sim.sweep.spec``.
"""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from toposolve.core.errors import InputError

KIND = "Sweep"
MODES = ("replay", "solve")


@dataclass
class SweepSpec:
    base: dict[str, Any]
    grid: dict[str, list[Any]] = field(default_factory=dict)
    mode: str = "replay"
    root: str = "."  # directory relative file paths start from
    source: str = "<sweep>"

    def scenarios(self) -> list[dict[str, Any]]:
        """Every combination of the grid applied to ``base``, in grid order (last key fastest)."""
        keys = list(self.grid)
        out = []
        for values in itertools.product(*(self.grid[k] for k in keys)):
            scenario = copy.deepcopy(self.base)
            for key, value in zip(keys, values, strict=True):
                set_path(scenario, key, copy.deepcopy(value))
            out.append({"index": len(out), "params": dict(zip(keys, values, strict=True)),
                        "spec": scenario,
                        "mode": self.mode, "root": self.root})
        return out


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
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=str(path)) from None
    except yaml.YAMLError as exc:
        raise InputError(f"malformed YAML: {getattr(exc, 'problem', exc)}",
                         file=str(path)) from None
    return spec_from_dict(doc, source=str(path), root=str(path.parent))


def spec_from_dict(doc: Any, *, source: str = "<sweep>", root: str = ".") -> SweepSpec:
    def fail(message: str, where: str) -> InputError:
        return InputError(message, file=source, obj=KIND, field=where)

    if not isinstance(doc, dict) or doc.get("kind") != KIND:
        raise fail(f"expected a mapping with kind: {KIND}", "kind")
    unknown = set(doc) - {"apiVersion", "kind", "metadata", "mode", "base", "grid"}
    if unknown:
        raise fail(f"unknown key {sorted(unknown)[0]!r}", sorted(unknown)[0])
    mode = doc.get("mode", "replay")
    if mode not in MODES:
        raise fail(f"must be one of {', '.join(MODES)}, not {mode!r}", "mode")
    base = doc.get("base")
    if not isinstance(base, dict) or not isinstance(base.get("cluster"), dict):
        raise fail("needs a cluster mapping", "base.cluster")
    if mode == "replay" and not isinstance(base.get("trace"), dict):
        raise fail("a replay sweep needs a trace mapping", "base.trace")
    grid = doc.get("grid") or {}
    if not isinstance(grid, dict):
        raise fail("expected a mapping of dotted paths to lists", "grid")
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise fail("expected a non-empty list of values", f"grid.{key}")
    return SweepSpec(base=base, grid=grid, mode=mode, root=root, source=source)
