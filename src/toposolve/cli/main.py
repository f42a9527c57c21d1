"""``toposolve`` command line: one module per subcommand, dispatched from here.

Exit status: 0 on success, 1 when ``check`` finds violations, 2 on bad input (one line on stderr,
``file: object: field: what is wrong``, no traceback, nothing written), 130 on Ctrl-C and 143 on
SIGTERM (within a fraction of a second, even inside a CP-SAT search: nothing is written).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib import metadata

from toposolve.cli import (
    bench,
    check,
    compare,
    defrag,
    diff,
    export,
    generate,
    ranks,
    replay,
    show,
    solve,
    sweep,
)
from toposolve.cli.common import (
    Parser,
    Terminated,
    check_destinations,
    interrupted_status,
    sigterm_raises,
)
from toposolve.core.errors import InputError
from toposolve.core.paths import remove_in_flight

SUBCOMMANDS = (show, check, solve, defrag, compare, diff, generate, bench, export, ranks, replay,
               sweep)


def build_parser() -> argparse.ArgumentParser:
    """The ``toposolve`` parser with every subcommand registered."""
    parser = Parser(
        prog="toposolve",
        description="Topology-aware gang placement: Volcano-faithful heuristic vs CP-SAT optimum.",
    )
    parser.add_argument("--version", action="version",
                        version=f"toposolve {metadata.version('toposolve')}")
    verbosity = parser.add_mutually_exclusive_group()
    verbosity.add_argument("-q", "--quiet", action="store_true",
                           help="errors only: no warning lines")
    verbosity.add_argument("-v", "--verbose", action="store_true",
                           help="also informational lines")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in SUBCOMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    if hasattr(signal, "SIGPIPE"):  # `toposolve show … | head` ends quietly, like other tools
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        args = build_parser().parse_args(argv)
        level = logging.ERROR if args.quiet else logging.INFO if args.verbose else logging.WARNING
        with logging_to_stderr(level):
            check_destinations(args)
            if args.command == "sweep":  # stops its own worker processes (sim.sweep)
                return int(args.func(args))
            return _interruptible(args)
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


class _StderrLines(logging.Handler):
    """Each record as one line on the current ``sys.stderr`` (looked up per line, so a
    redirected or captured stderr gets it)."""

    def emit(self, record: logging.LogRecord) -> None:
        print(self.format(record), file=sys.stderr)


_HANDLER = _StderrLines()


@contextmanager
def logging_to_stderr(level: int) -> Iterator[None]:
    """Send the ``toposolve`` logger's records at ``level`` and above to stderr, one line each
    (warnings of skipped input, dropped constraints; ``-q`` / ``-v`` set the level), for the
    time of one command: a program that calls :func:`main` keeps its own logging set-up."""
    log = logging.getLogger("toposolve")
    saved = log.level, log.propagate
    log.setLevel(level)
    log.addHandler(_HANDLER)
    log.propagate = False
    try:
        yield
    finally:
        log.removeHandler(_HANDLER)
        log.setLevel(saved[0])
        log.propagate = saved[1]


def _interruptible(args: argparse.Namespace) -> int:
    """Run the command in a worker thread while the main thread waits for signals: a CP-SAT
    search holds the thread that runs it in C++ until its budget ends, so the signal is taken
    here and the process ends at once (writes in progress removed, nothing written)."""
    if threading.current_thread() is not threading.main_thread():
        return int(args.func(args))
    outcome: dict[str, object] = {}

    def work() -> None:
        try:
            outcome["status"] = int(args.func(args))
        except BaseException as exc:  # re-raised in the main thread
            outcome["error"] = exc

    worker = threading.Thread(target=work, name="toposolve-command", daemon=True)
    try:
        with sigterm_raises():
            worker.start()
            while worker.is_alive():
                worker.join(0.1)
    except (KeyboardInterrupt, Terminated) as exc:
        remove_in_flight()
        os._exit(interrupted_status(exc))
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return int(outcome["status"])  # type: ignore[arg-type]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
