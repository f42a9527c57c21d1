"""``toposolve solve``: place the pending jobs and write a plan."""

from __future__ import annotations

import argparse
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


def add_parser(sub: Any) -> None:
    """Register the ``solve`` subcommand on ``sub`` (an argparse sub-parser action)."""
    p = sub.add_parser("solve", help="place the pending jobs and write a plan")
    add_instance_args(p)
    add_scheduler_config_arg(p)
    p.add_argument("--engine", choices=engine_choices(), default=None,
                   help="default: the mirror of the input's scheduler (volcano, kueue or kai)")
    p.add_argument("--output", "-o", default=None,
                   help="plan file (.json or .yaml); stdout if omitted")
    p.add_argument("--export-model", default=None, help="write the CP-SAT model proto here")
    p.add_argument("--ranks", action="store_true",
                   help="also write each job's rank order that follows the network into the "
                        "plan (its 'ranks' map, docs/ranks.md)")
    p.add_argument("--no-timings", action="store_true",
                   help="leave wall-clock fields out of the plan, so runs diff byte for byte")
    add_solver_flags(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``toposolve solve``; returns the exit status."""
    from toposolve.report.progress import cut_short_line, stages_line
    from toposolve.solve import solve

    instance = load_input(args)
    plan = solve(instance, args.engine, args.profile, export_model=args.export_model,
                 **solve_options(args))
    if args.ranks:
        from toposolve.policy.profiles import load_profile
        from toposolve.policy.ranks import assign_ranks

        plan.ranks = assign_ranks(instance, plan, load_profile(args.profile).comm)
    timings = not args.no_timings
    if args.output:
        write_text(args.output, plan.to_text(args.output, timings=timings))
        m = plan.metrics  # people's units first; the objective's scalar stays in the plan
        print(
            f"{plan.engine}: {plan.status}, "
            f"{m['jobs_placed']}/{m['jobs_placed'] + m['jobs_pending']} jobs placed, "
            f"{m['accelerators_placed']} "
            f"{'milli-accelerators' if m.get('accelerator_unit') == 'milli' else 'accelerators'}, "
            f"utilisation {m['utilisation']:.1%}, "
            f"{len(plan.bindings)} pods bound, "
            + (f"gap {plan.gap:.3g}, " if plan.gap is not None else "")
            + f"{plan.wall_time_s:.2f}s -> {args.output}",
            file=sys.stderr,
        )
    else:
        sys.stdout.write(plan.to_json(timings=timings) + "\n")
    final = stages_line(f"{plan.engine} {plan.status}", plan.stats.get("stages") or [],
                        plan.stats.get("plan_round"))
    for line in (cut_short_line(plan.stats.get("cut_short") or []), final):
        if line:
            print(line, file=sys.stderr)
    return 0
