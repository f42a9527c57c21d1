"""``toposolve ranks``: the rank order of a plan's jobs that follows the network."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from toposolve.cli.common import add_instance_args, load_input, write_text


def add_parser(sub: Any) -> None:
    """Register the ``ranks`` subcommand on ``sub`` (an argparse sub-parser action)."""
    p = sub.add_parser("ranks", help="rank map of a plan's jobs (ConfigMaps), index order vs "
                                     "ranked (docs/ranks.md)")
    p.add_argument("plan", help="plan file (JSON or YAML); its ranks are used where it has them")
    add_instance_args(p)
    p.add_argument("--profile", default=None, help="profile whose comm weights price the edges")
    p.add_argument("--output", "-o", default=None,
                   help="YAML file of ConfigMaps (pod -> first rank); stdout if omitted")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``toposolve ranks``; prints one line per job on stderr, returns the exit status."""
    from toposolve.core.plan import Plan
    from toposolve.core.problem import compile_problem
    from toposolve.formats.k8s.ranks import dump_configmaps, rank_configmaps
    from toposolve.policy.profiles import load_profile
    from toposolve.policy.ranks import assign_ranks, compare_ranks
    from toposolve.report.tables import format_table

    plan = Plan.read(args.plan)
    problem = compile_problem(load_input(args))
    weights = load_profile(args.profile).comm
    jobs = compare_ranks(problem, plan, weights)  # checks the plan's own ranks
    ranks = {**assign_ranks(problem, plan, weights), **plan.ranks}
    ranks = {j.job: ranks[j.job] for j in jobs}
    text = dump_configmaps(rank_configmaps(ranks))
    if args.output:
        write_text(args.output, text)
    else:
        sys.stdout.write(text)
    rows = [["job", "layout", "pods", "ranks", "cross-leaf edges", "largest DP span",
             "comm cost (index → Volcano's rule → ranked)"]]
    rows += [[j.job, j.layout, str(j.pods), j.source,
              " → ".join(str(m.cross_leaf_edges) for m in _sides(j)),
              " → ".join(_span(m.largest_dp_span) for m in _sides(j)),
              " → ".join(f"{m.cost:g}" for m in _sides(j))] for j in jobs]
    print(format_table(rows, left={0, 1, 3}), file=sys.stderr)
    return 0


def _sides(job: Any) -> list[Any]:
    """The job's metrics in index order, by Volcano's rule (where measured), ranked."""
    return [m for m in (job.index, job.volcano, job.ranked) if m is not None]


def _span(tier: int | None) -> str:
    return "-" if tier is None else "node" if tier < 0 else str(tier)
