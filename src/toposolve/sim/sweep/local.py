"""Run scenarios on this machine: in parallel worker processes (one scenario each at a time).

Workers ignore SIGINT (a Ctrl-C reaches the whole process group; the parent alone decides) and
take SIGTERM's default action. When the parent stops early — Ctrl-C, SIGTERM turned into an
exception by the caller, an error — the workers it started are terminated at once, not left to
finish their scenario or run on as orphans.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from toposolve.sim.sweep.progress import Progress
from toposolve.sim.sweep.scenario import run_scenario

STOP_GRACE = 1.0
"""Seconds a terminated worker gets before it is killed."""


def worker_signals() -> None:
    """A worker's signal dispositions (the pool's ``initializer``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not a handler forked from the parent


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
    before = {p.pid for p in multiprocessing.active_children()}
    pool = ProcessPoolExecutor(max_workers=min(workers, len(scenarios)),
                               initializer=worker_signals)
    try:
        futures = [pool.submit(run_scenario, s) for s in scenarios]
        for future in as_completed(futures):
            rows.append(future.result())
            if progress:
                progress.finished(rows[-1])
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        stop_children(before)
        raise
    finally:
        pool.shutdown(wait=True)
    return sorted(rows, key=lambda r: r["scenario"])


def stop_children(keep: set[int | None]) -> None:
    """Terminate (then kill) this process's children other than ``keep`` (pids)."""
    children = [p for p in multiprocessing.active_children() if p.pid not in keep]
    for child in children:
        child.terminate()
    for child in children:
        child.join(STOP_GRACE)
        if child.is_alive():
            child.kill()
            child.join(STOP_GRACE)
