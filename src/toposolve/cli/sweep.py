"""``toposolve sweep SPEC.yaml -o DIR``: run a what-if grid, print the table, write
CSV/JSON/Parquet."""

from __future__ import annotations

import argparse
import sys
from typing import Any

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


def run(args: argparse.Namespace) -> int:
    """Run the sweep, print its table, write its files."""
    from toposolve.sim.sweep import load_spec, run_sweep

    spec = load_spec(args.spec)
    result = run_sweep(spec, workers=args.workers, ray=args.ray)
    written = result.write(args.output)
    print(format_rows(result.rows, list(spec.grid)))
    print(f"{len(result.rows)} scenarios -> {', '.join(str(p) for p in written)}", file=sys.stderr)
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("sweep", help="run a grid of what-if scenarios (locally or on Ray)")
    p.add_argument("spec", help="sweep specification (YAML, kind: Sweep)")
    p.add_argument("--output", "-o", required=True,
                   help="directory for sweep.csv, sweep.json (and sweep.parquet)")
    p.add_argument("--workers", type=int, default=None,
                   help="parallel processes on this machine (default: CPUs)")
    p.add_argument("--ray", default=None, metavar="ADDRESS",
                   help="run on a Ray cluster ('local' starts one; default $RAY_ADDRESS)")
    p.set_defaults(func=run)
