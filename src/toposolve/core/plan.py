"""The plan an engine emits, and its JSON/YAML form (schema version 1, see README)."""

from __future__ import annotations

import json
from contextlib import suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from toposolve.core.errors import InputError
from toposolve.core.limits import MAX_PLAN_BYTES, MAX_PLAN_NESTING, MAX_PODS
from toposolve.core.paths import write_file
from toposolve.core.yaml_guard import parse_json_or_yaml, read_text

SCHEMA_VERSION = 1

TIMING_KEYS = frozenset(("wall_time_s", "seconds", "ended_s", "build_seconds",
                         "volcano_time_s"))
"""Wall-clock fields of plans and results: the only parts of an output two runs of one
instance, options and seed may differ in."""


def without_timings(data: Any) -> Any:
    """``data`` (JSON-like) without the :data:`TIMING_KEYS` at any depth."""
    if isinstance(data, dict):
        return {k: without_timings(v) for k, v in data.items() if k not in TIMING_KEYS}
    if isinstance(data, list):
        return [without_timings(v) for v in data]
    return data


@dataclass
class Binding:
    pod: str  # "<namespace>/<pod>"
    node: str
    nominated: bool = False  # a preemptor's pod waiting for evictions (nominatedNodeName)
    # the node's devices the pod takes (per-device sharing, docs/formats.md); None: no device
    devices: list[int] | None = None


@dataclass
class Move:
    """A running pod re-placed by a defragmentation plan: from node ``source`` to ``to`` (JSON
    ``{"pod", "from", "to"}``, and ``"wave"`` in a plan carried out in waves: 1, 2, …, each
    started once the previous wave's replacements are Ready)."""

    pod: str  # "<namespace>/<pod>"
    source: str
    to: str
    wave: int | None = None


@dataclass
class SubJobPlacement:
    id: str
    hypernode: str | None


@dataclass
class JobPlacement:
    job: str  # "<namespace>/<name>"
    placed: bool
    hypernode: str | None = None
    subjobs: list[SubJobPlacement] = field(default_factory=list)
    reason: str | None = None
    # the mirrored scheduler's own wording of ``reason`` (kueue, kai, volcano); None: left out
    scheduler_reason: str | None = None


@dataclass
class Plan:
    engine: str
    status: str
    objective: float | None = None
    bound: float | None = None
    wall_time_s: float = 0.0
    bindings: list[Binding] = field(default_factory=list)
    evictions: list[Binding] = field(default_factory=list)
    jobs: list[JobPlacement] = field(default_factory=list)
    # running pods re-placed (defragmentation, docs/defrag.md); left out of the JSON when empty
    moves: list[Move] = field(default_factory=list)
    # nodes a repair plan (``defrag --fail``) treats as gone; left out of the JSON when empty
    failed: list[str] = field(default_factory=list)
    # what the plan achieves in people's units (see toposolve.policy.metrics.PlanMetrics.summary):
    # jobs and accelerators placed per priority, utilisation, spread, fragmentation, evictions
    metrics: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    # job key -> pod ("<namespace>/<pod>") -> its first rank (docs/ranks.md); optional, written
    # only when set (``solve --ranks``, ``toposolve.assign_ranks``)
    ranks: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def gap(self) -> float | None:
        """Relative gap ``|bound - objective| / max(1, |objective|)`` when both are known."""
        if self.objective is None or self.bound is None:
            return None
        return abs(self.bound - self.objective) / max(1.0, abs(self.objective))

    def job(self, key: str) -> JobPlacement | None:
        return next((j for j in self.jobs if j.job == key), None)

    def to_frame(self) -> Any:
        """One row per job with pending pods — job, placed, hypernode, number of SubJobs
        reported, reason — as a pandas DataFrame (the ``frames`` extra). Pods and topology
        quality per job: :meth:`toposolve.policy.metrics.PlanMetrics.to_frame`."""
        try:
            import pandas
        except ImportError:  # pragma: no cover - the extra is installed in the test environment
            raise ImportError("data frames need pandas: pip install 'toposolve[frames]'") from None
        rows = [(j.job, j.placed, j.hypernode, len(j.subjobs), j.reason) for j in self.jobs]
        return pandas.DataFrame(rows, columns=["job", "placed", "hypernode", "subjobs", "reason"])

    def to_dict(self, *, timings: bool = True) -> dict[str, Any]:
        """The JSON form: the fields, plus ``gap`` (derived, ``null`` without a bound) after
        ``bound``; :meth:`from_dict` ignores it and derives it again. ``timings=False`` leaves
        out every wall-clock field (:data:`TIMING_KEYS`), so two runs diff byte for byte."""
        fields = asdict(self)
        data: dict[str, Any] = {"schema": SCHEMA_VERSION}
        for key, value in fields.items():
            data[key] = value
            if key == "bound":
                data["gap"] = self.gap
        for entry in data["bindings"]:
            if not entry["nominated"]:
                del entry["nominated"]
            if entry["devices"] is None:
                del entry["devices"]
        for entry in data["evictions"]:
            del entry["nominated"], entry["devices"]
        for entry in data["jobs"]:
            if entry["scheduler_reason"] is None:
                del entry["scheduler_reason"]
        if self.moves:
            data["moves"] = [{"pod": m.pod, "from": m.source, "to": m.to,
                              **({} if m.wave is None else {"wave": m.wave})}
                             for m in self.moves]
        else:
            del data["moves"]
        if not data["ranks"]:
            del data["ranks"]
        if not data["failed"]:
            del data["failed"]
        return data if timings else without_timings(data)

    def to_json(self, *, timings: bool = True) -> str:
        return json.dumps(self.to_dict(timings=timings), indent=1, sort_keys=False)

    def to_text(self, path: str | Path, *, timings: bool = True) -> str:
        """The file text for ``path``: YAML if its name ends in .yaml/.yml, else JSON."""
        if Path(path).suffix in (".yaml", ".yml"):
            return yaml.safe_dump(self.to_dict(timings=timings), sort_keys=False)
        return self.to_json(timings=timings) + "\n"

    def write(self, path: str | Path, *, timings: bool = True) -> None:
        """Write as YAML if the name ends in .yaml/.yml, else JSON."""
        write_file(Path(path), self.to_text(path, timings=timings))

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, source: str = "<plan>") -> Plan:
        """The plan of a parsed plan file; a wrong type, a missing name or an unknown key is
        one :class:`InputError` naming ``source``, the entry (``bindings[3]``) and the field."""
        fields = _PlanFields(source)
        if not isinstance(data, dict):
            raise fields.bad(f"a plan must be a mapping, got {_kind(data)}", "(top)")
        if data.get("schema") != SCHEMA_VERSION:
            raise fields.bad(f"unsupported schema {data.get('schema')!r}, expected "
                             f"{SCHEMA_VERSION}", "schema")
        return cls(
            engine=fields.text(data, "engine", "engine", default=""),
            status=fields.text(data, "status", "status", default=""),
            objective=fields.number(data, "objective"),
            bound=fields.number(data, "bound"),
            wall_time_s=fields.number(data, "wall_time_s") or 0.0,
            bindings=[fields.binding(b, f"bindings[{i}]")
                      for i, b in enumerate(fields.entries(data, "bindings"))],
            evictions=[fields.binding(b, f"evictions[{i}]")
                       for i, b in enumerate(fields.entries(data, "evictions"))],
            jobs=[fields.job(j, f"jobs[{i}]") for i, j in enumerate(fields.entries(data, "jobs"))],
            moves=[fields.move(m, f"moves[{i}]")
                   for i, m in enumerate(fields.entries(data, "moves"))],
            failed=[fields.text({"node": n}, "node", f"failed[{i}]")
                    for i, n in enumerate(fields.entries(data, "failed"))],
            metrics=fields.free_form(data, "metrics"),
            stats=fields.free_form(data, "stats"),
            ranks=fields.ranks(data),
        )

    @classmethod
    def read(cls, path: str | Path) -> Plan:
        """Read a plan file, JSON or YAML (:func:`~toposolve.core.yaml_guard.parse_json_or_yaml`),
        of at most ``MAX_PLAN_BYTES``; see :meth:`from_dict`."""
        path = Path(path)
        with suppress(OSError):  # a missing file: read_text says so
            size = path.stat().st_size
            if size > MAX_PLAN_BYTES:
                raise InputError(f"the plan file is {size:,} bytes, more than the limit "
                                 f"{MAX_PLAN_BYTES:,}", file=str(path))
        documents = parse_json_or_yaml(read_text(path), str(path))
        if len(documents) > 1:
            raise InputError(f"a plan file holds one document, not {len(documents)}",
                             file=str(path), obj="Plan")
        return cls.from_dict(documents[0] if documents else None, source=str(path))


_BINDING_KEYS = frozenset(("pod", "node", "nominated", "devices"))
_JOB_KEYS = frozenset(("job", "placed", "hypernode", "subjobs", "reason", "scheduler_reason"))
_SUBJOB_KEYS = frozenset(("id", "hypernode"))
_MOVE_KEYS = frozenset(("pod", "from", "to", "wave"))


def _kind(value: Any) -> str:
    """``value`` for a message: short, one line."""
    text = repr(value)
    return text if len(text) <= 40 else f"{type(value).__name__} {text[:30]}…"


class _PlanFields:
    """Typed reads of a parsed plan's fields; every failure names the file and the field."""

    def __init__(self, source: str) -> None:
        self.source = source

    def bad(self, message: str, where: str) -> InputError:
        return InputError(message, file=self.source, obj="Plan", field=where)

    def entries(self, data: dict[str, Any], key: str) -> list[Any]:
        value = data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.bad(f"expected a list, got {_kind(value)}", key)
        if len(value) > MAX_PODS:
            raise self.bad(f"{len(value):,} entries, more than the limit {MAX_PODS:,} (pods per "
                           "instance)", key)
        return value

    def mapping(self, entry: Any, where: str, keys: frozenset[str]) -> dict[str, Any]:
        if not isinstance(entry, dict):
            raise self.bad(f"expected a mapping, got {_kind(entry)}", where)
        unknown = sorted(str(k) for k in entry.keys() - keys)
        if unknown:
            raise self.bad(f"unknown field {unknown[0]!r} (expected {', '.join(sorted(keys))})",
                           f"{where}.{unknown[0]}")
        return entry

    def text(self, entry: dict[str, Any], key: str, where: str, *, default: str | None = None,
             nullable: bool = False) -> Any:
        value = entry.get(key, default)
        if value is None and (nullable or default is not None):
            return value
        if key not in entry and default is None:
            raise self.bad("missing", where)
        if not isinstance(value, str):
            raise self.bad(f"expected a string, got {_kind(value)}", where)
        if not value and default is None:
            raise self.bad("expected a name, got an empty string", where)
        return value

    def number(self, data: dict[str, Any], key: str) -> float | None:
        value = data.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise self.bad(f"expected a number or null, got {_kind(value)}", key)
        return value

    def boolean(self, entry: dict[str, Any], key: str, where: str) -> bool:
        value = entry.get(key, False)
        if not isinstance(value, bool):
            raise self.bad(f"expected true or false, got {_kind(value)}", where)
        return value

    def binding(self, entry: Any, where: str) -> Binding:
        pod, node = (entry.get("pod"), entry.get("node")) if isinstance(entry, dict) else ("", "")
        nominated = entry.get("nominated", False) if isinstance(entry, dict) else None
        if (type(pod) is str and pod and type(node) is str and node and type(nominated) is bool
                and len(entry) == 2 + ("nominated" in entry)):  # the common case, fast
            return Binding(pod, node, nominated)
        entry = self.mapping(entry, where, _BINDING_KEYS)
        return Binding(self.text(entry, "pod", f"{where}.pod"),
                       self.text(entry, "node", f"{where}.node"),
                       self.boolean(entry, "nominated", f"{where}.nominated"),
                       self.devices(entry, f"{where}.devices"))

    def devices(self, entry: dict[str, Any], where: str) -> list[int] | None:
        """A binding's ``devices``: a list of whole numbers >= 0, or absent."""
        value = entry.get("devices")
        if value is None:
            return None
        if not isinstance(value, list) or len(value) > MAX_PODS or any(
                type(d) is not int or d < 0 for d in value):
            raise self.bad(f"expected a list of device indexes >= 0, got {_kind(value)}", where)
        return list(value)

    def move(self, entry: Any, where: str) -> Move:
        entry = self.mapping(entry, where, _MOVE_KEYS)
        wave = entry.get("wave")
        if wave is not None and (type(wave) is not int or wave < 1):
            raise self.bad(f"expected a wave number (1, 2, …), got {_kind(wave)}",
                           f"{where}.wave")
        return Move(self.text(entry, "pod", f"{where}.pod"),
                    self.text(entry, "from", f"{where}.from"),
                    self.text(entry, "to", f"{where}.to"), wave)

    def job(self, entry: Any, where: str) -> JobPlacement:
        entry = self.mapping(entry, where, _JOB_KEYS)
        subjobs = entry.get("subjobs") or []
        if not isinstance(subjobs, list):
            raise self.bad(f"expected a list, got {_kind(subjobs)}", f"{where}.subjobs")
        return JobPlacement(
            job=self.text(entry, "job", f"{where}.job"),
            placed=self.boolean(entry, "placed", f"{where}.placed"),
            hypernode=self.text(entry, "hypernode", f"{where}.hypernode", nullable=True),
            subjobs=[self.subjob(s, f"{where}.subjobs[{k}]") for k, s in enumerate(subjobs)],
            reason=self.text(entry, "reason", f"{where}.reason", nullable=True),
            scheduler_reason=self.text(entry, "scheduler_reason", f"{where}.scheduler_reason",
                                       nullable=True),
        )

    def subjob(self, entry: Any, where: str) -> SubJobPlacement:
        entry = self.mapping(entry, where, _SUBJOB_KEYS)
        return SubJobPlacement(self.text(entry, "id", f"{where}.id"),
                               self.text(entry, "hypernode", f"{where}.hypernode", nullable=True))

    def ranks(self, data: dict[str, Any]) -> dict[str, dict[str, int]]:
        """``ranks``: job key → pod → a whole number ≥ 0."""
        value = data.get("ranks") or {}
        if not isinstance(value, dict):
            raise self.bad(f"expected a mapping, got {_kind(value)}", "ranks")
        out: dict[str, dict[str, int]] = {}
        for job, pods in value.items():
            if not isinstance(pods, dict):
                raise self.bad(f"expected a mapping, got {_kind(pods)}", f"ranks.{job}")
            for pod, rank in pods.items():
                if type(rank) is not int or rank < 0:
                    raise self.bad(f"expected a whole number >= 0, got {_kind(rank)}",
                                   f"ranks.{job}.{pod}")
            out[str(job)] = {str(p): r for p, r in pods.items()}
        return out

    def free_form(self, data: dict[str, Any], key: str) -> dict[str, Any]:
        """``metrics`` or ``stats``: any mapping, nested at most ``MAX_PLAN_NESTING`` deep."""
        value = data.get(key) or {}
        if not isinstance(value, dict):
            raise self.bad(f"expected a mapping, got {_kind(value)}", key)
        stack = [(value, 1)]
        while stack:  # iterative: the depth is what is being checked
            node, depth = stack.pop()
            if depth > MAX_PLAN_NESTING:
                raise self.bad(f"nested more than {MAX_PLAN_NESTING} levels deep", key)
            children = node.values() if isinstance(node, dict) else node
            stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
        return dict(value)
