"""``toposolve sweep SPEC.yaml -o DIR``: run a what-if grid, print the table, write
CSV/JSON/Parquet.

``-o DIR`` is a directory, made if missing; ``sweep.csv``, ``sweep.json`` (and, with pyarrow,
``sweep.parquet``) in it are replaced, nothing else there is touched, so a second run into the
same directory works. Everything is checked first (the spec, every scenario, the directory);
files are written only once every scenario has run. Ctrl-C exits 130 and SIGTERM 143, within a
second or two, the worker processes stopped and nothing written.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from toposolve.cli.common import Terminated, integer, interrupted_status, sigterm_raises
from toposolve.core.errors import InputError
from toposolve.core.limits import MAX_WORKERS
from toposolve.report.tables import format_table

SHOWN = ("engine", "jobs_started", "final_allocation_ratio", "mean_utilisation", "wait_mean",
         "wait_p95", "mean_domain_tier", "jobs_placed", "accelerators_placed", "utilisation",
         "mean_pair_lca_tier")


def format_rows(rows: list[dict[str, Any]], grid: list[str]) -> str:
    columns = ["scenario",
            *[g for g in grid if g != "engine"], *[c for c in SHOWN if any(c in r for r in rows)]]
    table = [columns] + [[_text(r.get(c)) for c in columns] for r in rows]
    return format_table(table)


def _text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1e4 else f"{value:,.0f}"
    return str(value)


def check_directory(path: str) -> None:
    """InputError unless ``path`` is a directory, or can be made one, that we may write in."""
    if path == "-":
        raise InputError("a sweep writes a directory of files, not standard output (--output)",
                         file=path)
    where = Path(path)
    if where.exists() and not where.is_dir():
        raise InputError("exists and is not a directory (--output)", file=path)
    existing = next(p for p in (where, *where.parents) if p.exists())
    if not existing.is_dir():
        raise InputError(f"cannot make the directory: {str(existing)!r} is a file (--output)",
                         file=path)
    if not os.access(existing, os.W_OK | os.X_OK):
        raise InputError(f"cannot write in {str(existing)!r} (--output)", file=path)


def run(args: argparse.Namespace) -> int:
    """Run the sweep, print its table, write its files."""
    from toposolve.sim.sweep import load_spec, run_sweep

    check_directory(args.directory)
    spec = load_spec(args.spec)
    try:
        with sigterm_raises():
            result = run_sweep(spec, workers=args.workers, ray=args.ray, isolate=True)
            written = result.write(args.directory)
    except (KeyboardInterrupt, Terminated) as exc:  # the workers are stopped by now
        return interrupted_status(exc)
    print(format_rows(result.rows, list(spec.grid)))
    print(f"{len(result.rows)} scenarios -> {', '.join(str(p) for p in written)}", file=sys.stderr)
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("sweep", help="run a grid of what-if scenarios (locally or on Ray)")
    p.add_argument("spec", help="sweep specification (YAML, kind: Sweep; docs/sweep.md)")
    p.add_argument("--output", "-o", dest="directory", metavar="DIR", required=True,
                   help="directory (made if missing) for sweep.csv, sweep.json (and "
                        "sweep.parquet); those files are replaced, nothing else")
    p.add_argument("--workers", type=integer(1, MAX_WORKERS), default=None,
                   help="parallel processes on this machine (default: CPUs)")
    p.add_argument("--ray", default=None, metavar="ADDRESS",
                   help="run on a Ray cluster ('local' starts one; default $RAY_ADDRESS)")
    p.set_defaults(func=run)
