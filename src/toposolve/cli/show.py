"""``toposolve show``: summarise an instance."""

from __future__ import annotations

import argparse
import json
from typing import Any

from toposolve.cli.common import add_instance_args, integer, load_input
from toposolve.core.limits import MAX_PODS


def add_parser(sub: Any) -> None:
    """Register the ``show`` subcommand on ``sub`` (an argparse sub-parser action)."""
    p = sub.add_parser("show", help="summarise an instance: nodes, resources, HyperNode tree, jobs")
    add_instance_args(p)
    p.add_argument("--max-jobs", type=integer(0, MAX_PODS), default=50,
                   help="list at most this many jobs")
    p.add_argument("--json", action="store_true", help="print the summary as JSON (numbers)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``toposolve show``; returns the exit status."""
    from toposolve.analysis.summary import describe_instance, instance_summary
    from toposolve.core.problem import compile_problem

    problem = compile_problem(load_input(args))
    if args.json:
        print(json.dumps(instance_summary(problem), indent=1))
    else:
        print(describe_instance(problem, max_jobs=args.max_jobs))
    return 0
