"""``toposolve compare``: run engines side by side and print one table."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from toposolve.cli.common import (
    add_instance_args,
    add_scheduler_config_arg,
    add_solver_flags,
    engine_choices,
    load_input,
    solve_options,
    write_text,
)
from toposolve.core.errors import InputError
from toposolve.core.plan import without_timings


def add_parser(sub: Any) -> None:
    """Register the ``compare`` subcommand on ``sub`` (an argparse sub-parser action)."""
    p = sub.add_parser("compare", help="run engines side by side and print one table")
    add_instance_args(p)
    add_scheduler_config_arg(p)
    p.add_argument("--engines", default=None,
            help="comma-separated engines (default: the input's scheduler's mirror and cpsat)")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.add_argument("--no-timings", action="store_true",
                   help="leave wall-clock fields out of the JSON, so runs diff byte for byte")
    p.add_argument("--output", "-o", default=None, help="also write the result here (.json → JSON)")
    p.add_argument("--plot", default=None, help="write a side-by-side picture (PNG)")
    add_solver_flags(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``toposolve compare``; returns the exit status."""
    from toposolve.analysis.compare import compare
    from toposolve.report.comparison import format_comparison

    instance = load_input(args)
    engines = tuple(e.strip() for e in args.engines.split(",")
                    if e.strip()) if args.engines else None
    for engine in engines or ():
        if engine not in engine_choices():
            raise InputError(
                f"unknown engine {engine!r} (choose from {', '.join(engine_choices())})",
                obj="command line", field="--engines"
            )
    result = compare(instance, engines, args.profile, **solve_options(args))
    if args.plot:
        from toposolve.report.plots import plot_comparison

        try:
            plot_comparison(result, args.plot)
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror or exc}", file=args.plot) from None
        print(f"plot written to {args.plot}", file=sys.stderr)
    data = result.to_dict() if not args.no_timings else without_timings(result.to_dict())
    as_json = json.dumps(data, indent=1) + "\n"
    text = as_json if args.json else format_comparison(result) + "\n"
    if args.output:
        write_text(args.output, as_json if args.output.endswith(".json") else text)
    sys.stdout.write(text)
    return 0
