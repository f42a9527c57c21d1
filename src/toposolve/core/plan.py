"""The plan an engine emits, and its JSON/YAML form (schema version 1, see README)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from toposolve.core.errors import InputError
from toposolve.core.paths import write_file
from toposolve.core.yaml_guard import check_expansion, read_text

SCHEMA_VERSION = 1


@dataclass
class Binding:
    pod: str  # "<namespace>/<pod>"
    node: str
    nominated: bool = False  # a preemptor's pod waiting for evictions (nominatedNodeName)


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
    # what the plan achieves in people's units (see toposolve.policy.metrics.PlanMetrics.summary):
    # jobs and accelerators placed per priority, utilisation, spread, fragmentation, evictions
    metrics: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)

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

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the fields, plus ``gap`` (derived, ``null`` without a bound) after
        ``bound``; :meth:`from_dict` ignores it and derives it again."""
        fields = asdict(self)
        data: dict[str, Any] = {"schema": SCHEMA_VERSION}
        for key, value in fields.items():
            data[key] = value
            if key == "bound":
                data["gap"] = self.gap
        for entry in data["bindings"]:
            if not entry["nominated"]:
                del entry["nominated"]
        for entry in data["evictions"]:
            del entry["nominated"]
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, sort_keys=False)

    def write(self, path: str | Path) -> None:
        """Write as YAML if the name ends in .yaml/.yml, else JSON."""
        path = Path(path)
        if path.suffix in (".yaml", ".yml"):
            text = yaml.safe_dump(self.to_dict(), sort_keys=False)
        else:
            text = self.to_json() + "\n"
        write_file(path, text)

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, source: str = "<plan>") -> Plan:
        def bad(message: str, fieldname: str) -> InputError:
            return InputError(message, file=source, obj="Plan", field=fieldname)

        if not isinstance(data, dict):
            raise bad("a plan must be a mapping", "(top)")
        if data.get("schema") != SCHEMA_VERSION:
            raise bad(f"unsupported schema {data.get('schema')!r}, expected {SCHEMA_VERSION}",
                      "schema")
        try:
            return cls(
                engine=str(data.get("engine", "")),
                status=str(data.get("status", "")),
                objective=data.get("objective"),
                bound=data.get("bound"),
                wall_time_s=float(data.get("wall_time_s") or 0.0),
                bindings=[Binding(**b) for b in data.get("bindings") or []],
                evictions=[Binding(**b) for b in data.get("evictions") or []],
                jobs=[
                    JobPlacement(
                        **{
                            **j,
                            "subjobs": [SubJobPlacement(**s) for s in j.get("subjobs") or []],
                        }
                    )
                    for j in data.get("jobs") or []
                ],
                metrics=dict(data.get("metrics") or {}),
                stats=dict(data.get("stats") or {}),
            )
        except TypeError as exc:
            raise bad(f"malformed entry: {exc}", "bindings/evictions/jobs") from None

    @classmethod
    def read(cls, path: str | Path) -> Plan:
        path = Path(path)
        text = read_text(path)
        try:
            data = yaml.safe_load(text)  # JSON is YAML
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"line {mark.line + 1}" if mark else "(parse)"
            raise InputError(f"malformed YAML/JSON: {getattr(exc, 'problem', exc)}", file=str(path),
                             field=where) from None
        check_expansion([data], str(path))
        return cls.from_dict(data, source=str(path))
