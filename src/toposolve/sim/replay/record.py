"""The JSON record of a replay: options, summary, timeline, cycles and jobs.

``{"schema": 1, "kind": "replay", "engine": …, "summary": {…}, "timeline": [...],
"cycles": [...], "jobs": [...]}`` — see :mod:`.metrics` and :mod:`.summary` for every field.
:meth:`ReplayRecord.frames` gives the three tables as pandas DataFrames (the optional
``toposolve[frames]`` extra).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from toposolve.core.paths import write_file
from toposolve.core.yaml_guard import read_text

SCHEMA = 1


@dataclass
class ReplayRecord:
    engine: str
    cluster: str
    trace: str
    options: dict[str, Any]
    summary: dict[str, Any]
    timeline: list[dict[str, Any]] = field(default_factory=list)
    cycles: list[dict[str, Any]] = field(default_factory=list)
    jobs: list[dict[str, Any]] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)  # --fail-rate events

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "kind": "replay", **asdict(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ReplayRecord:
        body = {k: v for k, v in data.items() if k not in ("schema", "kind")}
        return cls(**body)

    def frames(self) -> dict[str, Any]:
        """``{"timeline", "cycles", "jobs"}`` as pandas DataFrames."""
        pd = pandas()
        return {name: pd.DataFrame(getattr(self, name)) for name in ("timeline", "cycles", "jobs")}


def pandas() -> Any:
    """``pandas``, or an ImportError that names the extra to install."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(
            "tables as DataFrames need pandas: pip install 'toposolve[frames]'"
        ) from None
    return pd


def write_records(records: list[ReplayRecord], path: str | Path) -> None:
    """One JSON file holding every engine's record: ``{"schema": 1, "records": [...]}``."""
    text = json.dumps({"schema": SCHEMA, "records": [r.to_dict() for r in records]}, indent=1)
    write_file(path, text + "\n")


def read_records(path: str | Path) -> list[ReplayRecord]:
    """The records :func:`write_records` wrote (a file that is not UTF-8 is one InputError)."""
    data = json.loads(read_text(Path(path)))
    return [ReplayRecord.from_dict(r) for r in data["records"]]
