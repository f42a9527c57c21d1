"""The table ``toposolve bench`` prints: one line per case and engine."""

from __future__ import annotations

from typing import Any

from toposolve.report.tables import format_table

HEADER = ["instance", "nodes", "jobs", "", "engine", "status", "placed", "accel", "tier", "gap",
          "time s"]
WIDTHS = [22, 7, 6, 2, 10, 10, 8, 8, 7, 8, 9]
LEFT = {0, 4}


def bench_table(records: list[dict[str, Any]]) -> str:
    """The records of :func:`toposolve.analysis.bench.run_suite` as aligned text."""
    rows = [HEADER]
    for rec in records:
        for engine, m in rec["engines"].items():
            gap = "-" if m["gap"] is None else f"{m['gap']:.4f}"
            tier = "-" if m["mean_domain_tier"] is None else f"{m['mean_domain_tier']:.2f}"
            rows.append([rec["instance"], str(rec["nodes"]), str(rec["jobs"]), "", engine,
                         str(m["status"]), str(m["jobs_placed"]), str(m["accelerators_placed"]),
                         tier, gap, f"{m['elapsed_s']:.2f}"])
    return format_table(rows, widths=WIDTHS, left=LEFT, sep="")
