"""``toposolve export``: write a plan as Kubernetes objects."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from toposolve.cli.common import write_text


def add_parser(sub: Any) -> None:
    """Register the ``export`` subcommand on ``sub`` (an argparse sub-parser action)."""
    p = sub.add_parser("export", help="write a plan as Kubernetes Binding objects or pod patches")
    p.add_argument("plan", help="plan file (JSON or YAML)")
    p.add_argument("--as", dest="form", choices=["bindings", "patches"], default="bindings")
    p.add_argument("--output", "-o", default=None, help="YAML file; stdout if omitted")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``toposolve export``; returns the exit status."""
    from toposolve.core.plan import Plan
    from toposolve.formats.k8s.bindings import dump_objects, export_objects, left_out

    plan = Plan.read(args.plan)
    text = dump_objects(export_objects(plan, args.form, source=args.plan))
    if args.output:
        write_text(args.output, text)
    else:
        sys.stdout.write(text)
    skipped = left_out(plan, args.form)
    if skipped:
        counts = ", ".join(f"{n} {what}" for what, n in skipped.items())
        print(f"export: not expressible as {args.form}: {counts} (see the plan)", file=sys.stderr)
    return 0
