"""What the subcommands share: loading the input, option types, solver flags, writing files."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from toposolve.core.errors import InputError
from toposolve.core.limits import MAX_SEED, MAX_WORKERS, count_problem, time_limit_problem
from toposolve.core.paths import DEFAULT_INSTANCE, write_file
from toposolve.core.yaml_guard import STDIN

LOG = logging.getLogger("toposolve")


def load_input(args: argparse.Namespace):
    from toposolve.formats.load import load_instance

    paths = args.instances
    if not paths:
        if not DEFAULT_INSTANCE.exists():
            raise InputError("no instance given and the bundled default instance is missing",
                             file=str(DEFAULT_INSTANCE))
        paths = [str(DEFAULT_INSTANCE)]
        LOG.warning(f"no instance given: running on the bundled demo instance {paths[0]}")
    if STDIN in paths and len(paths) > 1:
        raise InputError("standard input cannot be combined with files", file=STDIN)
    instance = load_instance(list(paths), topology_labels=args.topology_labels)
    if getattr(args, "scheduler_config", None):
        from toposolve.formats.load import with_scheduler_config

        instance = with_scheduler_config(instance, args.scheduler_config)
    return instance


def add_scheduler_config_arg(p: argparse.ArgumentParser) -> None:
    """``--scheduler-config FILE``: the KubeSchedulerConfiguration the kube engine follows."""
    p.add_argument("--scheduler-config", metavar="FILE", default=None,
                   help="kube-scheduler's KubeSchedulerConfiguration (its score plugins' weights "
                        "and scoring strategies) for the kube engine; replaces one in the input")


def parse_params(items: Sequence[str] | None) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for item in items or []:
        if "=" not in item:
            raise InputError(f"expected NAME=VALUE, got {item!r}", obj="command line",
                             field="--param")
        name, value = item.split("=", 1)
        params[name.strip()] = yaml.safe_load(value)
    return params


def solve_options(args: argparse.Namespace) -> dict[str, Any]:
    params = parse_params(args.param)
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


def write_text(path: str, text: str) -> None:
    """Write ``text`` to ``path`` all or nothing (:func:`toposolve.core.paths.write_file`);
    ``-`` is standard output."""
    if path == STDIN:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    write_file(path, text)


DESTINATIONS = {"output": "--output", "plot": "--plot", "export_model": "--export-model"}


def check_destinations(args: argparse.Namespace) -> None:
    """Refuse an output path that cannot be written before any work is done (one line)."""
    for attr, flag in DESTINATIONS.items():
        path = getattr(args, attr, None)
        if not isinstance(path, str) or (path == STDIN and attr == "output"):
            continue
        folder = Path(path).parent
        if Path(path).is_dir():
            raise InputError(f"is a directory, not a file ({flag})", file=path)
        if not folder.is_dir():
            raise InputError(f"cannot write: directory {str(folder)!r} does not exist ({flag})",
                             file=path)


class Parser(argparse.ArgumentParser):
    """Command-line mistakes follow the input contract: one line, exit status 2."""

    def error(self, message: str):  # type: ignore[override]
        raise InputError(" ".join(message.split()), obj="command line")


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    why = time_limit_problem(value)
    if why:
        raise argparse.ArgumentTypeError(why)
    return value


def integer(low: int, high: int):
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


def fraction_load(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 <= value <= 10:  # false for nan too
        raise argparse.ArgumentTypeError(f"expected a number in [0, 10], got {text!r}")
    return value


def engine_choices() -> tuple[str, ...]:
    from toposolve.engines.registry import engine_names

    return engine_names()


def add_solver_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profile", default=None,
                   help="profile name in models/ or a YAML path (default: volcano-default)")
    p.add_argument("--time-limit", type=seconds, default=None, help="CP-SAT time limit in seconds")
    p.add_argument("--workers", type=integer(1, MAX_WORKERS), default=None,
                   help="CP-SAT threads (default: the profile's, 2). Deterministic (the default): "
                        "1-2 run one sequential search; 3 or more CP-SAT's interleaved portfolio "
                        "on that many threads: reproducible, the same plan whatever the count "
                        ">= 3, but not the sequential search's plan, and slower on small machines "
                        "(docs/cpsat-formulation.md section 3a)")
    p.add_argument("--seed", type=integer(0, MAX_SEED), default=None, help="CP-SAT random seed")
    p.add_argument("--deterministic", action="store_true",
                   help="same plan every run and on every machine (the default: the time limit in "
                        "CP-SAT's deterministic units)")
    p.add_argument(
        "--parallel", action="store_true",
        help="CP-SAT's parallel portfolio on --workers threads under a wall-clock limit: NOT "
             "reproducible (the plan may change from run to run), often faster on many cores",
    )
    p.add_argument("--log", action="store_true", help="print the CP-SAT search log on stderr")
    p.add_argument("--progress", action="store_true",
            help="CP-SAT progress on stderr, a line at least every 5 s (the default on a terminal)")
    p.add_argument("--param", action="append", metavar="NAME=VALUE",
                   help="raw CP-SAT parameter (repeatable)")
    p.add_argument(
        "--evict",
        choices=["none", "preempt", "reclaim", "both"],
        default="none",
        help="let pending gangs evict running ones: preempt (same queue, lower priority), reclaim "
             "(over-quota queues)",
    )


def add_instance_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("instances", nargs="*",
                   help="YAML/JSON files or directories, or - for standard input (default: the "
                        "bundled demo instance, said in one line)")
    p.add_argument(
        "--topology-labels",
        metavar="LABEL,LABEL,...",
        default=None,
        help="build HyperNodes from these node labels, top level first (Volcano label discovery "
             "rules)",
    )


class Terminated(Exception):
    """SIGTERM, raised in the main thread by the handler :func:`sigterm_raises` installs."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """While inside, SIGTERM raises :class:`Terminated` in the main thread (as Ctrl-C raises
    ``KeyboardInterrupt``), so a command can stop its work and exit 143."""
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def interrupted_status(exc: BaseException) -> int:
    """Say the command was interrupted; its exit status: 143 for SIGTERM, 130 for Ctrl-C."""
    print("toposolve: interrupted", file=sys.stderr, flush=True)
    return 128 + (signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)
