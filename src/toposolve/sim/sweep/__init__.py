"""What-if sweeps: ``toposolve.sim.sweep.run_sweep(spec)`` / ``toposolve sweep SPEC.yaml -o DIR``.

A spec (:mod:`.spec`) is a base scenario and a grid of variations — cluster variants (nodes,
drained or removed HyperNodes, node shapes), workload (load, mix, seed…), engines, profiles.
Each scenario is replayed (or solved) by :mod:`.scenario`; scenarios run in parallel on this
machine (:mod:`.local`) or as Ray tasks (:mod:`.ray_runner`, ``--ray ADDRESS`` or
``RAY_ADDRESS``), with the same rows either way. The result is one table: CSV and JSON (and
Parquet with pyarrow), a pandas DataFrame from :meth:`SweepResult.frame`.
"""

from __future__ import annotations

import csv
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toposolve.core.paths import replacing, write_file
from toposolve.sim.sweep.local import run_local
from toposolve.sim.sweep.progress import Progress
from toposolve.sim.sweep.ray_runner import run_ray
from toposolve.sim.sweep.spec import SweepSpec, load_spec, spec_from_dict


@dataclass
class SweepResult:
    rows: list[dict[str, Any]]

    def columns(self) -> list[str]:
        return list(dict.fromkeys(k for row in self.rows for k in row))

    def frame(self) -> Any:
        from toposolve.sim.replay.record import pandas

        return pandas().DataFrame(self.rows, columns=self.columns())

    def write(self, directory: str | Path) -> list[Path]:
        """``sweep.csv``, ``sweep.json`` and, with pyarrow, ``sweep.parquet`` in ``directory``."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        written = [out / "sweep.csv", out / "sweep.json"]
        with replacing(written[0], "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=self.columns())
            writer.writeheader()
            writer.writerows(self.rows)
        write_file(written[1], json.dumps(self.rows, indent=1) + "\n")
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            return written
        with replacing(out / "sweep.parquet", "wb") as f:
            self.frame().to_parquet(f.name, index=False)
        return [*written, out / "sweep.parquet"]


def run_sweep(spec: SweepSpec | dict | str | Path, *, workers: int | None = None,
              ray: str | None = None,
              num_cpus: int | None = None, progress: Any = None) -> SweepResult:
    """Run every scenario of ``spec`` (a :class:`SweepSpec`, its dict, or a YAML path).

    ``ray``: a Ray address (``"local"`` starts one with ``num_cpus``); default
    ``$RAY_ADDRESS`` when set, else this machine with ``workers`` processes (default: its CPUs).
    ``progress``: a callable taking one line per finished scenario (default: stderr).
    """
    if isinstance(spec, str | Path):
        spec = load_spec(spec)
    elif isinstance(spec, dict):
        spec = spec_from_dict(spec)
    scenarios = spec.scenarios()
    bar = Progress(len(scenarios), progress)
    address = ray or os.environ.get("RAY_ADDRESS")
    if address:
        rows = run_ray(scenarios, address=address, num_cpus=num_cpus, progress=bar)
    else:
        rows = run_local(scenarios, workers=workers, progress=bar)
    return SweepResult(rows)


__all__ = ["SweepResult", "SweepSpec", "load_spec", "run_sweep", "spec_from_dict"]
