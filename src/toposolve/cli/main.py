"""``toposolve`` command line: show, check, solve, compare, generate, bench, replay, sweep.

Exit status: 0 on success, 1 when ``check`` finds violations, 2 on bad input (one line on stderr,
``file: object: field: what is wrong``, no traceback, nothing written).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from toposolve.core.errors import InputError
from toposolve.core.limits import (
    MAX_NODES,
    MAX_PODS,
    MAX_SEED,
    MAX_WORKERS,
    count_problem,
    time_limit_problem,
)
from toposolve.core.paths import DEFAULT_INSTANCE


def _load(args: argparse.Namespace):
    from toposolve.formats.load import load_instance

    paths = args.instances
    if not paths:
        if not DEFAULT_INSTANCE.exists():
            raise InputError("no instance given and the bundled default instance is missing",
                             file=str(DEFAULT_INSTANCE))
        paths = [str(DEFAULT_INSTANCE)]
    return load_instance(list(paths), topology_labels=args.topology_labels)


def _parse_params(items: Sequence[str] | None) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for item in items or []:
        if "=" not in item:
            raise InputError(f"expected NAME=VALUE, got {item!r}", obj="command line",
                             field="--param")
        name, value = item.split("=", 1)
        params[name.strip()] = yaml.safe_load(value)
    return params


def _solve_options(args: argparse.Namespace) -> dict[str, Any]:
    params = _parse_params(args.param)
    if params:  # checked whatever the engine: a bad flag is an error even where it is unused
        from toposolve.engines.cpsat import sat_overrides

        sat_overrides(params)
    options: dict[str, Any] = {
        "time_limit": args.time_limit,
        "workers": args.workers,
        "seed": args.seed,
        "deterministic": False if args.parallel else (True if args.deterministic else None),
        "log": args.log,
        "parameters": params or None,
        "evict": None if args.evict == "none" else args.evict,
    }
    if getattr(args, "progress",
               False) or (getattr(args, "progress", None) is not None and sys.stderr.isatty()):
        from toposolve.report.progress import LinePrinter

        options["progress"] = LinePrinter(sys.stderr)  # on a terminal by default, else on request
    return options


def _write_text(path: str, text: str) -> None:
    try:
        Path(path).write_text(text)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror}", file=path) from None


_DESTINATIONS = {"output": "--output", "plot": "--plot", "export_model": "--export-model"}


def _check_destinations(args: argparse.Namespace) -> None:
    """Refuse an output path that cannot be written before any work is done (one line)."""
    for attr, flag in _DESTINATIONS.items():
        path = getattr(args, attr, None)
        if not isinstance(path, str):
            continue
        folder = Path(path).parent
        if Path(path).is_dir():
            raise InputError(f"is a directory, not a file ({flag})", file=path)
        if not folder.is_dir():
            raise InputError(f"cannot write: directory {str(folder)!r} does not exist ({flag})",
                             file=path)


# ---- commands ---------------------------------------------------------------------------------
def cmd_show(args: argparse.Namespace) -> int:
    from toposolve.analysis.summary import describe_instance
    from toposolve.core.problem import compile_problem

    instance = _load(args)
    print(describe_instance(compile_problem(instance), max_jobs=args.max_jobs))
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from toposolve.check.checker import check_plan, format_report
    from toposolve.core.plan import Plan

    instance = _load(args)
    plan = Plan.read(args.plan)
    mode = args.evict or (plan.stats.get("eviction") or {}).get("mode") or ("both"
            if plan.evictions else "none")
    violations = check_plan(instance, plan, eviction_mode=mode)
    print(format_report(violations, plan))
    return 1 if violations else 0


def cmd_solve(args: argparse.Namespace) -> int:
    from toposolve.report.progress import cut_short_line, stages_line
    from toposolve.solve import solve

    instance = _load(args)
    plan = solve(instance, args.engine, args.profile, export_model=args.export_model,
                 **_solve_options(args))
    text = plan.to_json() + "\n"
    if args.output:
        if args.output.endswith((".yaml", ".yml")):
            text = yaml.safe_dump(plan.to_dict(), sort_keys=False)
        _write_text(args.output, text)
        m = plan.metrics  # people's units first; the objective's scalar stays in the plan
        print(
            f"{plan.engine}: {plan.status}, "
            f"{m['jobs_placed']}/{m['jobs_placed'] + m['jobs_pending']} jobs placed, "
            f"{m['accelerators_placed']} accelerators, utilisation {m['utilisation']:.1%}, "
            f"{len(plan.bindings)} pods bound, "
            + (f"gap {plan.gap:.3g}, " if plan.gap is not None else "")
            + f"{plan.wall_time_s:.2f}s -> {args.output}",
            file=sys.stderr,
        )
    else:
        sys.stdout.write(text)
    final = stages_line(f"{plan.engine} {plan.status}", plan.stats.get("stages") or [])
    for line in (cut_short_line(plan.stats.get("cut_short") or []), final):
        if line:
            print(line, file=sys.stderr)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from toposolve.analysis.compare import compare
    from toposolve.report.comparison import format_comparison

    instance = _load(args)
    engines = tuple(e.strip() for e in args.engines.split(",")
                    if e.strip()) if args.engines else None
    for engine in engines or ():
        if engine not in _engine_names():
            raise InputError(
                f"unknown engine {engine!r} (choose from {', '.join(_engine_names())})",
                obj="command line", field="--engines"
            )
    result = compare(instance, engines, args.profile, **_solve_options(args))
    if args.plot:
        from toposolve.report.plots import plot_comparison

        try:
            plot_comparison(result, args.plot)
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror or exc}", file=args.plot) from None
    if args.json:
        text = json.dumps(result.to_dict(), indent=1) + "\n"
    else:
        text = format_comparison(result) + "\n"
    if args.output:
        _write_text(args.output,
                json.dumps(result.to_dict(),
                           indent=1) + "\n" if args.output.endswith(".json") else text)
    sys.stdout.write(text)
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from toposolve.formats.native.reader import load_native
    from toposolve.generate import PRESETS, generate_document

    if args.preset not in PRESETS:
        raise InputError(f"unknown preset {args.preset!r} (choose from {', '.join(PRESETS)})",
                         obj="command line", field="PRESET")
    options = _parse_params(args.option)
    doc = generate_document(args.preset, nodes=args.nodes, load=args.load, seed=args.seed,
                            **options)
    instance = load_native([doc], source=args.output)
    if args.format == "manifests":
        from toposolve.formats.volcano.writer import write_manifests

        write_manifests(instance, args.output)
    elif args.format in ("kueue", "kai"):
        from toposolve.formats.write import write_scheduler_form

        write_scheduler_form(instance, args.format, args.output,
                             warn=lambda line: print(line, file=sys.stderr))
    else:
        from toposolve.formats.native.writer import dump_native

        nodes = f" --nodes {args.nodes}" if args.nodes is not None else ""
        header = f"toposolve generate {args.preset}{nodes} --load {args.load} --seed {args.seed}"
        _write_text(args.output, dump_native(doc, header=header))  # compact: a few dozen lines
    print(
        f"{args.preset}: {len(instance.nodes)} nodes, {len(instance.hypernodes)} HyperNodes, "
        f"{len(instance.jobs)} jobs -> {args.output}",
        file=sys.stderr,
    )
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from toposolve.analysis.bench import run_suite

    return run_suite(args.suite, output=args.output, time_limit=args.time_limit)


def cmd_export(args: argparse.Namespace) -> int:
    from toposolve.core.plan import Plan
    from toposolve.formats.k8s.bindings import dump_objects, export_objects, left_out

    plan = Plan.read(args.plan)
    text = dump_objects(export_objects(plan, args.form))
    if args.output:
        _write_text(args.output, text)
    else:
        sys.stdout.write(text)
    skipped = left_out(plan, args.form)
    if skipped:
        counts = ", ".join(f"{n} {what}" for what, n in skipped.items())
        print(f"export: not expressible as {args.form}: {counts} (see the plan)", file=sys.stderr)
    return 0


# ---- parser -------------------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    """Command-line mistakes follow the input contract: one line, exit status 2."""

    def error(self, message: str):  # type: ignore[override]
        raise InputError(" ".join(message.split()), obj="command line")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    why = time_limit_problem(value)
    if why:
        raise argparse.ArgumentTypeError(why)
    return value


def _integer(low: int, high: int):
    """An argparse type: an integer in ``[low, high]``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        why = count_problem(value, low, high)
        if why:
            raise argparse.ArgumentTypeError(why)
        return value

    return parse


def _fraction_load(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 <= value <= 10:  # false for nan too
        raise argparse.ArgumentTypeError(f"expected a number in [0, 10], got {text!r}")
    return value


def _engine_names() -> tuple[str, ...]:
    from toposolve.engines.registry import engine_names

    return engine_names()


def _solver_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profile", default=None,
                   help="profile name in models/ or a YAML path (default: volcano-default)")
    p.add_argument("--time-limit", type=_seconds, default=None, help="CP-SAT time limit in seconds")
    p.add_argument("--workers", type=_integer(1, MAX_WORKERS), default=None,
                   help="CP-SAT worker threads")
    p.add_argument("--seed", type=_integer(0, MAX_SEED), default=None, help="CP-SAT random seed")
    p.add_argument("--deterministic", action="store_true",
                   help="same plan every run (the default: deterministic time limit)")
    p.add_argument(
        "--parallel", action="store_true",
        help="CP-SAT's parallel portfolio under a wall-clock limit: not reproducible, sometimes "
             "faster",
    )
    p.add_argument("--log", action="store_true", help="print the CP-SAT search log on stderr")
    p.add_argument(
        "--progress", action="store_true",
        help="CP-SAT progress on stderr, a line at least every 5 s (the default on a terminal)",
    )
    p.add_argument("--param", action="append", metavar="NAME=VALUE",
                   help="raw CP-SAT parameter (repeatable)")
    p.add_argument(
        "--evict",
        choices=["none", "preempt", "reclaim", "both"],
        default="none",
        help="let pending gangs evict running ones: preempt (same queue, lower priority), reclaim "
             "(over-quota queues)",
    )


def _instance_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("instances", nargs="*",
                   help="YAML files or directories (default: bundled instance)")
    p.add_argument(
        "--topology-labels",
        metavar="LABEL,LABEL,...",
        default=None,
        help="build HyperNodes from these node labels, top level first (Volcano label discovery "
             "rules)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="toposolve",
        description="Topology-aware gang placement: Volcano-faithful heuristic vs CP-SAT optimum.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("show", help="summarise an instance: nodes, resources, HyperNode tree, jobs")
    _instance_args(p)
    p.add_argument("--max-jobs", type=_integer(0, MAX_PODS), default=50,
                   help="list at most this many jobs")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("check", help="verify a plan against an instance (exit 1 on violations)")
    _instance_args(p)
    p.add_argument("--plan", required=True, help="plan file (JSON or YAML)")
    p.add_argument(
        "--evict",
        choices=["none", "preempt", "reclaim", "both"],
        default=None,
        help="which evictions are allowed (default: the mode the plan was made with)",
    )
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("solve", help="place the pending jobs and write a plan")
    _instance_args(p)
    p.add_argument("--engine", choices=_engine_names(), default=None,
                   help="default: the mirror of the input's scheduler (volcano, kueue or kai)")
    p.add_argument("--output", "-o", default=None,
                   help="plan file (.json or .yaml); stdout if omitted")
    p.add_argument("--export-model", default=None, help="write the CP-SAT model proto here")
    _solver_flags(p)
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser("compare", help="run engines side by side and print one table")
    _instance_args(p)
    p.add_argument("--engines", default=None,
            help="comma-separated engines (default: the input's scheduler's mirror and cpsat)")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.add_argument("--output", "-o", default=None, help="also write the result here (.json → JSON)")
    p.add_argument("--plot", default=None, help="write a side-by-side picture (PNG)")
    _solver_flags(p)
    p.set_defaults(func=cmd_compare)

    from toposolve.analysis.bench import SUITES
    from toposolve.generate import PRESETS

    p = sub.add_parser("generate", help="write a seeded synthetic instance",
                       epilog="presets:\n"
                       + "\n".join(f"  {k:<12} {v}" for k, v in PRESETS.items()),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("preset", metavar="PRESET", help=", ".join(PRESETS) + " (see below)")
    p.add_argument("--nodes", type=_integer(1, MAX_NODES), default=None)
    p.add_argument("--load", type=_fraction_load, default=0.9,
                   help="pending demand as a fraction of the cluster")
    p.add_argument("--seed", type=_integer(0, MAX_SEED), default=0)
    p.add_argument("--format", choices=["native", "manifests", "kueue", "kai"], default=None,
                   help="native (default), Volcano manifests, or the Kueue / KAI objects of the "
                        "same "
                   "cluster")
    p.add_argument("--option", action="append", metavar="NAME=VALUE",
                   help="preset option (repeatable)")
    p.add_argument("--output", "-o", required=True)
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("bench", help="run a benchmark suite and write a JSON record")
    p.add_argument("suite", help=", ".join(SUITES))
    p.add_argument("--output", "-o", default=None, help="JSON record path")
    p.add_argument("--time-limit", type=_seconds, default=None)
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("export", help="write a plan as Kubernetes Binding objects or pod patches")
    p.add_argument("plan", help="plan file (JSON or YAML)")
    p.add_argument("--as", dest="form", choices=["bindings", "patches"], default="bindings")
    p.add_argument("--output", "-o", default=None, help="YAML file; stdout if omitted")
    p.set_defaults(func=cmd_export)

    from toposolve.cli.replay import add_parser as add_replay

    add_replay(sub, _load, _parse_params)
    from toposolve.cli.sweep import add_parser as add_sweep

    add_sweep(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    if hasattr(signal, "SIGPIPE"):  # `toposolve show … | head` ends quietly, like other tools
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        args = build_parser().parse_args(argv)
        _check_destinations(args)
        return int(args.func(args))
    except InputError as err:
        print(f"toposolve: {err}", file=sys.stderr)
        return 2
    except ImportError as err:  # an optional dependency (matplotlib for --plot) is missing
        print(f"toposolve: {err}", file=sys.stderr)
        return 2
    except (OSError, ValueError) as err:  # e.g. an unreadable path or a bad option value
        print(f"toposolve: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
