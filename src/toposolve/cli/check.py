"""``toposolve check``: verify a plan against an instance."""

from __future__ import annotations

import argparse
from typing import Any

from toposolve.cli.common import add_instance_args, load_input

SHOWN = 50  # violations listed without --all


def add_parser(sub: Any) -> None:
    """Register the ``check`` subcommand on ``sub`` (an argparse sub-parser action)."""
    p = sub.add_parser("check", help="verify a plan against an instance (exit 1 on violations)")
    add_instance_args(p)
    p.add_argument("--plan", required=True, help="plan file (JSON or YAML)")
    p.add_argument("--evict", choices=["none", "preempt", "reclaim", "both"], default=None,
                   help="which evictions are allowed (default: the mode the plan was made with)")
    p.add_argument("--all", action="store_true",
                   help=f"list every violation (default: the first {SHOWN})")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``toposolve check``; returns the exit status."""
    from toposolve.check.checker import check_plan, format_report
    from toposolve.core.plan import Plan

    instance = load_input(args)
    plan = Plan.read(args.plan)
    mode = args.evict or (plan.stats.get("eviction") or {}).get("mode") or ("both"
            if plan.evictions else "none")
    violations = check_plan(instance, plan, eviction_mode=mode)
    foreign = wrong_instance_line(violations)
    if foreign:
        print(foreign)
    print(format_report(violations if args.all else violations[:SHOWN], plan,
                        total=len(violations)))
    return 1 if violations else 0


def wrong_instance_line(violations: list) -> str | None:
    """One line first when the plan names pods or nodes the instance lacks: most likely a plan
    of another instance, whose other violations follow from that."""
    pods = sum(1 for v in violations if v.kind == "unknown-pod")
    nodes = len({v.message for v in violations if v.kind == "unknown-node"})
    if not pods and not nodes:
        return None
    return (f"the plan names {pods:,} pod(s) and {nodes:,} node(s) this instance lacks: is it "
            "a plan of another instance?")
