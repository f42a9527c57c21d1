"""Run scenarios on this machine: each in its own worker process, at most ``workers`` at once.

Not a stdlib pool, because a sweep must stop at once: ``ProcessPoolExecutor`` cannot stop a
running task before Python 3.14, and killing its workers races its own teardown (a BrokenPipe
traceback, or death by SIGPIPE where that signal has its default action, as in the CLI);
``multiprocessing.Pool`` waits forever for a task whose worker died (say, killed for memory).
Here a worker is a daemon process with a pipe for its one row: a worker that dies is an error
naming its scenario, and when the caller stops early (Ctrl-C, an exception, SIGTERM turned into
one by the CLI) the running workers are terminated, then killed after :data:`STOP_GRACE`.
Workers ignore SIGINT: a Ctrl-C reaches the whole process group, and the parent alone decides.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
import traceback
from multiprocessing.connection import Connection, wait
from typing import Any

from toposolve.core.errors import InputError
from toposolve.sim.sweep.progress import Progress
from toposolve.sim.sweep.scenario import run_scenario

STOP_GRACE = 1.0
"""Seconds a terminated worker gets before it is killed."""


def run_local(scenarios: list[dict[str, Any]], *, workers: int | None = None,
              progress: Progress | None = None, isolate: bool = False) -> list[dict[str, Any]]:
    """Rows in scenario order; ``workers=1`` runs in this process unless ``isolate`` (a CP-SAT
    search in this process holds off a signal until its time limit; one in a worker does not)."""
    workers = workers or os.cpu_count() or 1
    rows: list[dict[str, Any]] = []
    if workers == 1 and not isolate:
        for scenario in scenarios:
            rows.append(run_scenario(scenario))
            if progress:
                progress.finished(rows[-1])
        return rows
    context = multiprocessing.get_context()
    waiting = list(reversed(scenarios))
    running: dict[Connection, tuple[Any, dict[str, Any]]] = {}
    try:
        while waiting or running:
            while waiting and len(running) < workers:
                reader, writer = context.Pipe(duplex=False)
                scenario = waiting.pop()
                process = context.Process(target=_work, args=(scenario, writer), daemon=True,
                                          name=f"toposolve-sweep-{scenario['index']}")
                process.start()
                writer.close()  # the worker holds the only writer: its death reads as EOF
                running[reader] = (process, scenario)
            for reader in wait(list(running)):
                process, scenario = running.pop(reader)
                rows.append(_receive(reader, process, scenario))
                if progress:
                    progress.finished(rows[-1])
    finally:
        stop([process for process, _ in running.values()])
    return sorted(rows, key=lambda r: r["scenario"])


def _work(scenario: dict[str, Any], writer: Connection) -> None:
    """A worker: run one scenario, send ``("row", row)`` or ``(kind, message)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not a handler inherited from the parent
    try:
        writer.send(("row", run_scenario(scenario)))
    except InputError as exc:
        writer.send(("input", str(exc)))
    except Exception:  # noqa: BLE001 - sent whole to the parent, which raises it
        writer.send(("error", traceback.format_exc()))


def _receive(reader: Connection, process: Any, scenario: dict[str, Any]) -> dict[str, Any]:
    where = f"scenario {scenario['index']}"
    try:
        kind, value = reader.recv()
    except EOFError:
        process.join()
        raise RuntimeError(f"{where}: its worker process died (exit code {process.exitcode}; "
                           "a negative code is the signal that killed it)") from None
    finally:
        reader.close()
    process.join()
    if kind == "input":
        raise InputError(value, obj=where)
    if kind == "error":
        raise RuntimeError(f"{where} failed in its worker process:\n{value}")
    return value


def stop(processes: list[Any]) -> None:
    """Terminate ``processes``, then kill those still alive after :data:`STOP_GRACE`."""
    for process in processes:
        process.terminate()
    deadline = time.monotonic() + STOP_GRACE
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join()
