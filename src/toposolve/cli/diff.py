"""``toposolve diff``: what changes from one plan to another."""

from __future__ import annotations

import argparse
import json
from typing import Any


def add_parser(sub: Any) -> None:
    """Register the ``diff`` subcommand on ``sub`` (an argparse sub-parser action)."""
    p = sub.add_parser("diff", help="what changes from plan A to plan B (exit 1 if anything does)")
    p.add_argument("plan_a", metavar="PLAN_A", help="plan file (JSON or YAML)")
    p.add_argument("plan_b", metavar="PLAN_B", help="plan file (JSON or YAML)")
    p.add_argument("--json", action="store_true", help="print the differences as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``toposolve diff``; 0 when the plans place and evict the same, else 1 (as diff(1))."""
    from toposolve.analysis.plandiff import diff
    from toposolve.core.plan import Plan

    changes = diff(Plan.read(args.plan_a), Plan.read(args.plan_b))
    print(json.dumps(changes.to_dict(), indent=1) if args.json else str(changes))
    return 0 if changes.same else 1
