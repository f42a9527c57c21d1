"""What one sweep scenario may hold, as pydantic models: unknown keys and wrong types refused.

The trace and replay sections are read from the signatures of the functions they feed
(:func:`~toposolve.sim.replay.synthetic.synthetic_trace`,
:func:`~toposolve.formats.trace.openb.openb_trace`, :func:`~toposolve.sim.replay.replay`), so a
new option there is a new key here. Types are strict (``nodes: "256"`` is refused, as the
generator refuses it). :func:`scenario_problem` turns the first validation error into
``(path, message)``, with the nearest known key for a misspelt one (difflib).
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable
from typing import Any, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)

from toposolve.formats.trace.openb import openb_trace
from toposolve.sim.replay import replay
from toposolve.sim.replay.synthetic import synthetic_trace
from toposolve.sim.sweep.scenario import variant_problem


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


def options_model(name: str, func: Callable[..., Any], skip: tuple[str, ...]) -> type[Section]:
    """A :class:`Section` with one field per keyword parameter of ``func`` (less ``skip``)."""
    fields: dict[str, Any] = {}
    for p in inspect.signature(func, eval_str=True).parameters.values():
        if p.name not in skip and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            fields[p.name] = (p.annotation, ... if p.default is p.empty else p.default)
    return create_model(name, __base__=Section, **fields)


Synthetic = options_model("Synthetic", synthetic_trace, skip=("cluster",))
Openb = options_model("Openb", openb_trace, skip=())
OpenbFile = options_model("File", openb_trace, skip=("path",))
ReplaySection = options_model("Replay", replay, skip=("cluster", "trace", "engine", "profile"))


class FileTrace(OpenbFile):  # type: ignore[misc,valid-type]
    path: str

    @model_validator(mode="before")
    @classmethod
    def _path_alone(cls, value: Any) -> Any:
        return {"path": value} if isinstance(value, str) else value  # {file: PATH}


class TraceSection(Section):
    synthetic: Synthetic | None = None  # type: ignore[valid-type]
    openb: Openb | None = None  # type: ignore[valid-type]
    file: FileTrace | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_kind(cls, value: Any) -> Any:
        if isinstance(value, dict):
            kinds = [k for k in ("synthetic", "openb", "file") if k in value]
            if len(kinds) != 1:
                raise ValueError("needs exactly one of synthetic, openb, file; "
                                 f"got {kinds or 'none'}")
            if kinds[0] != "file" and value[kinds[0]] is None:  # `synthetic:` alone: defaults
                value = {**value, kinds[0]: {}}
        return value


class ClusterSection(Section):
    file: str | None = None
    preset: str | None = None
    nodes: int | None = None
    load: float | None = None
    seed: int | None = None
    options: dict[str, Any] | None = None
    variant: Any = "none"

    @field_validator("variant", mode="plain")
    @classmethod
    def _variant(cls, value: Any) -> Any:
        if why := variant_problem(value):
            raise ValueError(why)
        return value

    @model_validator(mode="after")
    def _file_or_generated(self) -> ClusterSection:
        generated = [k for k in ("preset", "nodes", "load", "seed", "options")
                     if getattr(self, k) is not None]
        if self.file is None and self.preset is None:
            raise ValueError("needs file (a cluster file) or preset (a generated cluster)")
        if self.file is not None and generated:
            raise ValueError(f"file and {generated[0]} exclude each other "
                             "(a file is not generated)")
        return self


class SolveSection(Section):
    """The :class:`~toposolve.solve.SolveOptions` a sweep may set."""

    time_limit: float | None = None
    workers: int | None = None
    seed: int | None = None
    deterministic: bool | None = None
    parameters: dict[str, Any] | None = None
    evict: str | None = None


class Common(Section):
    engine: str = "volcano"
    profile: str | None = None
    cluster: ClusterSection


class ReplayScenario(Common):
    trace: TraceSection
    replay: ReplaySection | None = None  # type: ignore[valid-type]


class SolveScenario(Common):
    solve: SolveSection | None = None


SCENARIOS = {"replay": ReplayScenario, "solve": SolveScenario}
OTHER_MODE = {"replay": ("solve",), "solve": ("trace", "replay")}  # sections of the other mode
EXPECTED = {"dict_type": "a mapping", "model_type": "a mapping", "int_type": "an integer",
            "float_type": "a number", "string_type": "a string", "bool_type": "true or false",
            "list_type": "a list", "none_required": "nothing (null)"}


def scenario_problem(tree: dict[str, Any], mode: str) -> tuple[str, str] | None:
    """``(dotted path, message)`` of the first problem in scenario ``tree``, or None."""
    other = next((k for k in OTHER_MODE[mode] if isinstance(tree, dict) and k in tree), None)
    if other:
        return other, f"is for mode: {'replay' if mode == 'solve' else 'solve'} only"
    try:
        SCENARIOS[mode].model_validate(tree)
    except ValidationError as exc:
        return _explain(exc.errors(), tree, SCENARIOS[mode])
    return None


def did_you_mean(name: str, known: list[str] | tuple[str, ...]) -> str:
    """`` (did you mean 'x'?)`` naming the nearest of ``known``, else `` (known: …)``."""
    close = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(known)})"


def _explain(errors: list[Any], tree: Any, model: type[BaseModel]) -> tuple[str, str]:
    first = errors[0]
    path = _data_path(first["loc"], tree)
    if first["type"] == "extra_forbidden":
        hint = did_you_mean(str(path[-1]), _fields_at(model, path[:-1]))
        return ".".join(map(str, path)), f"unknown key{hint}"
    if first["type"] == "missing":
        return ".".join(map(str, path)), "required"
    # a union (`float | str`) reports once per member, at the same place: say them all
    same = [e for e in errors if _data_path(e["loc"], tree) == path]
    if all(e["type"] in EXPECTED for e in same):
        wanted = " or ".join(dict.fromkeys(EXPECTED[e["type"]] for e in same))
        message = f"expected {wanted}, got {_short(first['input'])}"
    else:
        message = str(first["msg"]).removeprefix("Value error, ")
    return ".".join(map(str, path)) or "(scenario)", message


def _data_path(loc: tuple[Any, ...], tree: Any) -> tuple[Any, ...]:
    """The part of pydantic's ``loc`` that indexes the data (union member tags dropped)."""
    path: list[Any] = []
    node = tree
    for part in loc:
        if isinstance(node, dict) and part in node or isinstance(node, list) and isinstance(
                part, int) and part < len(node):
            path.append(part)
            node = node[part]
        elif isinstance(node, dict) and len(path) == len(loc) - 1:
            path.append(part)  # a missing key
        else:
            break
    return tuple(path)


def _fields_at(model: type[BaseModel] | None, path: tuple[Any, ...]) -> list[str]:
    """The keys the section at ``path`` takes."""
    for part in path:
        field = model.model_fields.get(str(part)) if model else None
        kinds = (field.annotation, *get_args(field.annotation)) if field else ()
        model = next((k for k in kinds if isinstance(k, type) and issubclass(k, BaseModel)), None)
    return list(model.model_fields) if model else []


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
