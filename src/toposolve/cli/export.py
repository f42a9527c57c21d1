"""``toposolve export``: write a plan as the objects each scheduler accepts."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from toposolve.cli.common import write_text

DESCRIPTION = """\
Write a plan as Kubernetes objects, one YAML document each, a comment above each saying what
it does; the file's first lines say how to apply it.

  bindings          v1 Binding per planned pod that exists and is pending (Volcano, plain
                    pods): kubectl create -f FILE. Needs no INSTANCE; with one, a pod that
                    does not exist yet, is bound or gated is refused.
  templates         pods not created yet (a suspended Job/JobSet/PyTorchJob Kueue holds, a
                    queued job, a LeaderWorkerSet not created yet): per owner, a partial object
                    whose pod templates confine each podset to its planned domain (required
                    nodeAffinity; Kueue: the podset topology annotation at the planned level):
                    kubectl apply --server-side --force-conflicts --field-manager=toposolve -f FILE
                    A LeaderWorkerSet's groups share its templates: confined to the union of their
                    domains; Kueue refuses template changes to an LWS it manages, so merge the
                    patch into the manifest before creating it (kubectl patch --local --type merge)
  kueue-admission   per Workload, status.admission with each podset's topologyAssignment
                    (--kueue-api v1beta2: compact slices; v1beta1: domains), for your own
                    admission: kubectl apply --server-side --subresource status -f FILE
  kai-bindrequests  per pending pod, the BindRequest KAI's binder acts on: kubectl create -f FILE
  evictions         per evicted pod, a policy/v1 Eviction (victims in plan order) with the
                    kubectl create --raw line that posts it; apply these first
  moves             a defrag plan's moves: with the instance, first per moved job its owner's
                    pod-template patch (required nodeAffinity to the nodes or domain it holds
                    after the plan) that steers the replacements; then in plan order per moved
                    pod an Eviction (as evictions), a comment naming its replacement's node;
                    in a plan with waves wave by wave (start each once the previous wave's
                    replacements are Ready).
                    Order: patch the owner (suspend a batch Job/JobSet first), then evict
  ranks             per job its rank order (docs/ranks.md): pods that exist get the labels
                    toposolve.io/rank and toposolve.io/node-rank (partial Pods); a job whose
                    pods are not created yet gets a ConfigMap <owner>-ranks keyed by pod index
                    (JOB_COMPLETION_INDEX, JobSet job/completion index, PyTorchJob replica
                    index): kubectl apply --server-side --field-manager=toposolve -f FILE.
                    The plan's ranks (solve --ranks) where it has them, else computed

A form that does not fit the input is refused in one line (exit 2)."""


def add_parser(sub: Any) -> None:
    """Register the ``export`` subcommand on ``sub`` (an argparse sub-parser action)."""
    from toposolve.formats.export.admission import KUEUE_APIS
    from toposolve.formats.export.forms import EXPORT_FORMS

    p = sub.add_parser("export", help="write a plan as the objects each scheduler accepts",
                       description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("plan", help="plan file (JSON or YAML)")
    p.add_argument("instance", nargs="*",
                   help="the input the plan was made from (needed except for bindings, evictions, "
                        "moves)")
    p.add_argument("--as", dest="form", choices=EXPORT_FORMS, default="bindings")
    p.add_argument("--kueue-api", choices=KUEUE_APIS, default="v1beta2",
                   help="Workload API version of --as kueue-admission (default v1beta2)")
    p.add_argument("--output", "-o", default=None, help="YAML file ('-' or omitted: stdout)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``toposolve export``; returns the exit status."""
    from toposolve.core.plan import Plan
    from toposolve.formats.export.forms import export_plan
    from toposolve.formats.export.source import load_export_source

    plan = Plan.read(args.plan)
    log = logging.getLogger("toposolve")
    source = load_export_source(args.instance, log.warning) if args.instance else None
    exported = export_plan(plan, args.form, source, plan_file=args.plan,
                           kueue_api=args.kueue_api)
    text = exported.text()
    if args.output:
        write_text(args.output, text)
    else:
        sys.stdout.write(text)
    for note in exported.notes:
        print(f"export: {note}", file=sys.stderr)
    return 0
