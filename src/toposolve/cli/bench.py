"""``toposolve bench``: run a benchmark suite and write a JSON record."""

from __future__ import annotations

import argparse
from typing import Any

from toposolve.cli.common import seconds


def add_parser(sub: Any) -> None:
    """Register the ``bench`` subcommand on ``sub`` (an argparse sub-parser action)."""
    from toposolve.analysis.bench import SUITES

    p = sub.add_parser("bench", help="run a benchmark suite and write a JSON record")
    p.add_argument("suite", help=", ".join(SUITES))
    p.add_argument("--output", "-o", default=None, help="JSON record path")
    p.add_argument("--time-limit", type=seconds, default=None)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``toposolve bench``; returns the exit status."""
    from toposolve.analysis.bench import run_suite
    from toposolve.report.bench_table import bench_table

    return run_suite(args.suite, output=args.output, time_limit=args.time_limit,
                     show=lambda records: print(bench_table(records)))
