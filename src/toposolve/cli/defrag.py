"""``toposolve defrag``: the fewest job moves that let blocked gangs in."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from toposolve.cli.common import add_instance_args, integer, load_input, seconds, write_text


def add_parser(sub: Any) -> None:
    """Register the ``defrag`` subcommand on ``sub`` (an argparse sub-parser action)."""
    p = sub.add_parser("defrag", help="the fewest job moves that admit blocked gangs")
    add_instance_args(p)
    p.add_argument("--admit", default=None, metavar="JOB[,JOB...]",
                   help="pending jobs to let in, as namespace/name (required in phase 1)")
    p.add_argument("--max-moves", type=integer(0, 2**31 - 1), default=None,
                   help="move at most this many jobs")
    p.add_argument("--engine", choices=["cpsat", "greedy"], default="cpsat")
    p.add_argument("--time-limit", type=seconds, default=10.0, help="seconds (default 10)")
    p.add_argument("--seed", type=integer(0, 2**31 - 1), default=0)
    p.add_argument("--output", "-o", default=None, help="plan file; stdout if omitted")
    p.set_defaults(func=run)


def summary_line(plan) -> str:
    """The plan in words: what it admits, how many jobs and pods it moves, proven or why not."""
    d = plan.stats["defrag"]
    if not d["admitted"]:
        reasons = "; ".join(f"{j.job}: {j.reason}" for j in plan.jobs if not j.placed)
        return f"admits nothing ({d['status']}): {reasons}"
    jobs, pods = len(d["moved_jobs"]), d["moved_pods"]
    proof = "proven minimal" if d["proven_minimal"] else (
        f"not proven minimal ({d['status']}"
        + (f", at least {d['bound']:g}" if d.get("bound") is not None else "") + ")")
    line = (f"admits {', '.join(d['admitted'])} by moving {jobs} job{'s' * (jobs != 1)} "
            f"({pods} pod{'s' * (pods != 1)}); {proof}")
    left = [j for j in plan.jobs if not j.placed]
    return line + "".join(f"; not {j.job}: {j.reason}" for j in left)


def run(args: argparse.Namespace) -> int:
    """Run ``toposolve defrag``; returns the exit status."""
    from toposolve.core.errors import InputError
    from toposolve.defrag import defrag

    if not args.admit:
        raise InputError("defrag needs --admit NAMESPACE/JOB[,...] (phase 1 has no other mode)")
    instance = load_input(args)
    admit = [name.strip() for name in args.admit.split(",") if name.strip()]
    plan = defrag(instance, admit, max_moves=args.max_moves, engine=args.engine,
                  time_limit=args.time_limit, seed=args.seed)
    if args.output:
        write_text(args.output, plan.to_text(args.output))
    else:
        sys.stdout.write(plan.to_json() + "\n")
    print(f"{plan.engine}: {summary_line(plan)}", file=sys.stderr)
    return 0
