"""``toposolve generate``: write a seeded synthetic instance."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from toposolve.cli.common import fraction_load, integer, parse_params, write_text
from toposolve.core.errors import InputError
from toposolve.core.limits import MAX_NODES, MAX_SEED


def add_parser(sub: Any) -> None:
    """Register the ``generate`` subcommand on ``sub`` (an argparse sub-parser action)."""
    from toposolve.generate import PRESETS

    p = sub.add_parser("generate", help="write a seeded synthetic instance",
                       epilog="presets:\n"
                       + "\n".join(f"  {k:<12} {v}" for k, v in PRESETS.items()),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("preset", metavar="PRESET", help=", ".join(PRESETS) + " (see below)")
    p.add_argument("--nodes", type=integer(1, MAX_NODES), default=None)
    p.add_argument("--load", type=fraction_load, default=0.9,
                   help="pending demand as a fraction of the cluster")
    p.add_argument("--seed", type=integer(0, MAX_SEED), default=0)
    p.add_argument("--format", choices=["native", "manifests", "kueue", "kai", "kube"],
                   default=None,
                   help="native (default), Volcano manifests, or the Kueue / KAI / Kubernetes "
                        "Workload API objects of the same cluster")
    p.add_argument("--option", action="append", metavar="NAME=VALUE",
                   help="preset option (repeatable)")
    p.add_argument("--output", "-o", required=True)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``toposolve generate``; returns the exit status."""
    from toposolve.formats.native.reader import load_native
    from toposolve.generate import PRESETS, generate_document

    if args.preset not in PRESETS:
        raise InputError(f"unknown preset {args.preset!r} (choose from {', '.join(PRESETS)})",
                         obj="command line", field="PRESET")
    options = parse_params(args.option)
    doc = generate_document(args.preset, nodes=args.nodes, load=args.load, seed=args.seed,
                            **options)
    instance = load_native([doc], source=args.output)
    if args.format == "manifests":
        from toposolve.formats.volcano.writer import write_manifests

        write_manifests(instance, args.output, warn=logging.getLogger("toposolve").warning)
    elif args.format in ("kueue", "kai", "kube"):
        from toposolve.formats.write import write_scheduler_form

        write_scheduler_form(instance, args.format, args.output,
                             warn=logging.getLogger("toposolve").warning)
    else:
        from toposolve.formats.native.writer import dump_native

        nodes = f" --nodes {args.nodes}" if args.nodes is not None else ""
        header = f"toposolve generate {args.preset}{nodes} --load {args.load} --seed {args.seed}"
        write_text(args.output, dump_native(doc, header=header))  # compact: a few dozen lines
    print(
        f"{args.preset}: {len(instance.nodes)} nodes, {len(instance.hypernodes)} HyperNodes, "
        f"{len(instance.jobs)} jobs -> {args.output}",
        file=sys.stderr,
    )
    return 0
