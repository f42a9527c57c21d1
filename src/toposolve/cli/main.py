"""``toposolve`` command line: one module per subcommand, dispatched from here.

Exit status: 0 on success, 1 when ``check`` finds violations, 2 on bad input (one line on stderr,
``file: object: field: what is wrong``, no traceback, nothing written).
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence

from toposolve.cli import bench, check, compare, export, generate, replay, show, solve, sweep
from toposolve.cli.common import Parser, check_destinations
from toposolve.core.errors import InputError

SUBCOMMANDS = (show, check, solve, compare, generate, bench, export, replay, sweep)


def build_parser() -> argparse.ArgumentParser:
    """The ``toposolve`` parser with every subcommand registered."""
    parser = Parser(
        prog="toposolve",
        description="Topology-aware gang placement: Volcano-faithful heuristic vs CP-SAT optimum.",
    )
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
        check_destinations(args)
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
