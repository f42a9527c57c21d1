"""A sweep's table: rows, a DataFrame, and its files (``sweep.csv``, ``sweep.json``,
``sweep.parquet`` with pyarrow) in an output directory."""

from __future__ import annotations

import csv
import json
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toposolve.core.paths import replacing

FILES = ("sweep.csv", "sweep.json", "sweep.parquet")


@dataclass
class SweepResult:
    rows: list[dict[str, Any]]

    def columns(self) -> list[str]:
        return list(dict.fromkeys(k for row in self.rows for k in row))

    def frame(self) -> Any:
        from toposolve.sim.replay.record import pandas

        return pandas().DataFrame(self.rows, columns=self.columns())

    def write(self, directory: str | Path) -> list[Path]:
        """Write the table files into ``directory`` (made if missing); return their paths.

        All are written beside their destinations before any is renamed over it
        (:func:`~toposolve.core.paths.replacing`), so a second run replaces the first's files
        whole and a failed or interrupted write leaves them as they were. Nothing else in
        ``directory`` is touched, except that a ``sweep.parquet`` left by an earlier run is
        removed when pyarrow is missing (it would disagree with the others).
        """
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        written = [out / name for name in FILES[:2]]
        with ExitStack() as files:  # renames happen as the stack closes, after every write
            table = files.enter_context(replacing(written[0], "w", newline=""))
            writer = csv.DictWriter(table, fieldnames=self.columns())
            writer.writeheader()
            writer.writerows(self.rows)
            files.enter_context(replacing(written[1])).write(json.dumps(self.rows, indent=1)
                                                             + "\n")
            if _has_pyarrow():
                written.append(out / FILES[2])
                parquet = files.enter_context(replacing(written[2], "wb"))
                self.frame().to_parquet(parquet.name, index=False)
            else:
                (out / FILES[2]).unlink(missing_ok=True)
        return written


def _has_pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True
