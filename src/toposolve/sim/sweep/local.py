"""Run scenarios on this machine: in parallel worker processes (one scenario each at a time)."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from toposolve.sim.sweep.progress import Progress
from toposolve.sim.sweep.scenario import run_scenario


def run_local(scenarios: list[dict[str, Any]], *, workers: int | None = None,
              progress: Progress | None = None) -> list[dict[str, Any]]:
    """Rows in scenario order; ``workers=1`` runs in this process (no pool)."""
    workers = workers or os.cpu_count() or 1
    rows: list[dict[str, Any]] = []
    if workers == 1 or len(scenarios) == 1:
        for scenario in scenarios:
            rows.append(run_scenario(scenario))
            if progress:
                progress.finished(rows[-1])
        return rows
    with ProcessPoolExecutor(max_workers=min(workers, len(scenarios))) as pool:
        futures = [pool.submit(run_scenario, s) for s in scenarios]
        for future in as_completed(futures):
            rows.append(future.result())
            if progress:
                progress.finished(rows[-1])
    return sorted(rows, key=lambda r: r["scenario"])
