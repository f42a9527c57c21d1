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
                   help="pending jobs to let in, as namespace/name")
    p.add_argument("--free", action="append", default=[], metavar="TIER=N",
                   help="leave N HyperNodes of TIER (number or name) without any pod; "
                        "repeatable; with or without --admit")
    p.add_argument("--fail", default=None, metavar="NODE[,NODE...]",
                   help="repair: these nodes are gone; re-place the pods they held inside their "
                        "jobs' domains, moving the fewest other jobs")
    p.add_argument("--max-moves", type=integer(0, 2**31 - 1), default=None,
                   help="move at most this many jobs")
    p.add_argument("--max-waves", type=integer(1, 10_000), default=1, metavar="N",
                   help="carry the moves out in up to N waves, each once the previous wave's "
                        "replacements are Ready: PodDisruptionBudgets then bound each wave, not "
                        "the whole plan (default 1)")
    p.add_argument("--engine", choices=["cpsat", "greedy"], default="cpsat")
    p.add_argument("--time-limit", type=seconds, default=10.0, help="seconds (default 10)")
    p.add_argument("--seed", type=integer(0, 2**31 - 1), default=0)
    p.add_argument("--output", "-o", default=None, help="plan file; stdout if omitted")
    p.add_argument("--plot", default=None, metavar="PNG",
                   help="write the touched domains before and after (which jobs moved where)")
    p.set_defaults(func=run)


def _free_words(d: dict) -> str:
    if "freed" not in d:
        return ""
    freed = ", ".join(d["freed"]) or "nothing"
    return f"; frees {freed}" + (f" ({d['free_reason']})" if "free_reason" in d else "")


def _proof(d: dict) -> str:
    return "proven minimal" if d["proven_minimal"] else (
        f"not proven minimal ({d['status']}"
        + (f", at least {d['bound']:g}" if d.get("bound") is not None else "") + ")")


def repair_line(d: dict) -> str:
    """A repair plan in words: jobs repaired, pods re-placed, others moved, and why a job
    could not be repaired."""
    jobs, pods = len(d["moved_jobs"]), d["moved_pods"]
    done, left = len(d["repaired"]), d["unrepaired"]
    line = (f"repairs {done} of {done + len(left)} job{'s' * (done + len(left) != 1)} hit by "
            f"{', '.join(d['failed'])} ({d['replaced_pods']} pod"
            f"{'s' * (d['replaced_pods'] != 1)} re-placed) by moving {jobs} "
            f"job{'s' * (jobs != 1)} ({pods} pod{'s' * (pods != 1)}); {_proof(d)}")
    return line + "".join(f"; not {job}: {why}" for job, why in left.items())


def summary_line(plan) -> str:
    """The plan in words: what it repairs, admits (and frees), how many jobs and pods it
    moves, proven or why not."""
    d = plan.stats["defrag"]
    if "repaired" in d and not plan.jobs:
        return repair_line(d) + _free_words(d)
    if not d["admitted"] and "freed" in d and not plan.jobs:
        jobs, pods = len(d["moved_jobs"]), d["moved_pods"]
        proof = "proven minimal" if d["proven_minimal"] else f"not proven minimal ({d['status']})"
        return (f"moves {jobs} job{'s' * (jobs != 1)} ({pods} pod{'s' * (pods != 1)}); "
                f"{proof}{_free_words(d)}")
    if not d["admitted"]:
        reasons = "; ".join(f"{j.job}: {j.reason}" for j in plan.jobs if not j.placed)
        return f"admits nothing ({d['status']}): {reasons}{_free_words(d)}{_repair_words(d)}"
    jobs, pods = len(d["moved_jobs"]), d["moved_pods"]
    proof = _proof(d)
    line = (f"admits {', '.join(d['admitted'])} by moving {jobs} job{'s' * (jobs != 1)} "
            f"({pods} pod{'s' * (pods != 1)}); {proof}")
    left = [j for j in plan.jobs if not j.placed]
    return (line + "".join(f"; not {j.job}: {j.reason}" for j in left) + _free_words(d)
            + _repair_words(d))


def _wave_words(d: dict) -> str:
    """How many waves the moves take (plans made with --max-waves above 1)."""
    if "waves" not in d:
        return ""
    count = d["waves"]
    return (f"; in {count} wave{'s' * (count != 1)}"
            + (f" ({d['waves_note']})" if "waves_note" in d else ""))


def _repair_words(d: dict) -> str:
    """The repair part of a plan that also admits targets (the move counts are the plan's)."""
    if "repaired" not in d:
        return ""
    done, left = len(d["repaired"]), d["unrepaired"]
    return (f"; repairs {done} of {done + len(left)} jobs hit by {', '.join(d['failed'])}"
            + "".join(f"; not {job}: {why}" for job, why in left.items()))


def run(args: argparse.Namespace) -> int:
    """Run ``toposolve defrag``; returns the exit status."""
    from toposolve.core.errors import InputError
    from toposolve.defrag import defrag

    if not args.admit and not args.free and not args.fail:
        raise InputError("defrag needs --admit NAMESPACE/JOB[,...], --free TIER=N or "
                         "--fail NODE[,...]")
    free = _parse_free(args.free)
    instance = load_input(args)
    admit = [name.strip() for name in (args.admit or "").split(",") if name.strip()]
    fail = [name.strip() for name in (args.fail or "").split(",") if name.strip()]
    plan = defrag(instance, admit, max_moves=args.max_moves, engine=args.engine,
                  time_limit=args.time_limit, seed=args.seed, free=free, fail=fail,
                  max_waves=args.max_waves)
    if args.output:
        write_text(args.output, plan.to_text(args.output))
    else:
        sys.stdout.write(plan.to_json() + "\n")
    print(f"{plan.engine}: {summary_line(plan)}{_wave_words(plan.stats['defrag'])}",
          file=sys.stderr)
    if args.plot:
        _write_plot(instance, plan, args.plot)
    return 0


def _write_plot(instance, plan, path: str) -> None:
    """The before/after picture of ``plan`` to ``path``; says where it went."""
    from toposolve.core.errors import InputError
    from toposolve.core.paths import replacing
    from toposolve.core.problem import compile_problem
    from toposolve.report.plots import plot_defrag_moves

    ax = plot_defrag_moves(compile_problem(instance), plan)
    try:
        with replacing(path, "wb") as out:  # format from the name, which keeps path's suffix
            ax.figure.savefig(out.name, dpi=130)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", file=path) from None
    print(f"plot written to {path}", file=sys.stderr)


def _parse_free(values: list[str]) -> dict[int | str, int]:
    """``--free TIER=N`` values as tier (number, else name) → N; one-line error if malformed."""
    from toposolve.core.errors import InputError

    out: dict[int | str, int] = {}
    for value in values:
        tier, sep, count = value.partition("=")
        if not sep or not tier.strip() or not count.strip().isdigit():
            raise InputError(f"--free wants TIER=N (N a positive integer), not {value!r}")
        key = int(tier) if tier.strip().isdigit() else tier.strip()
        out[key] = int(count)
    return out
