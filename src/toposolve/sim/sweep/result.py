"""A sweep's table: rows, a DataFrame, and its files (``sweep.csv``, ``sweep.json``,
``sweep.parquet`` with pyarrow) in an output directory."""

from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
        """Write the table files into ``directory`` (made if missing) and return their paths.

        Each file is written beside its destination and renamed over it, so a second run
        replaces the files of the first whole and an interrupted write leaves them as they
        were; nothing else in ``directory`` is touched, but a ``sweep.parquet`` left by an
        earlier run is removed when pyarrow is missing (it would disagree with the others).
        """
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        table = io.StringIO(newline="")
        writer = csv.DictWriter(table, fieldnames=self.columns())
        writer.writeheader()
        writer.writerows(self.rows)
        staged: list[tuple[Path, Path]] = []
        try:
            staged.append(_stage(out, FILES[0], lambda p: p.write_text(table.getvalue())))
            staged.append(_stage(out, FILES[1],
                                 lambda p: p.write_text(json.dumps(self.rows, indent=1) + "\n")))
            if _has_pyarrow():
                staged.append(_stage(out, FILES[2],
                                     lambda p: self.frame().to_parquet(p, index=False)))
            else:
                (out / FILES[2]).unlink(missing_ok=True)
            for temporary, final in staged:
                os.replace(temporary, final)
        except BaseException:
            for temporary, _ in staged:
                temporary.unlink(missing_ok=True)
            raise
        return [final for _, final in staged]


def _has_pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def _stage(out: Path, name: str, write) -> tuple[Path, Path]:
    """``write(temporary path in out)``; (that path, ``out / name``). The temporary file goes
    if the write fails."""
    temporary = out / f".{name}.{os.getpid()}.tmp"  # opened as usual: the umask applies
    try:
        write(temporary)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return temporary, out / name
