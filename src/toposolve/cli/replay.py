"""``toposolve replay CLUSTER TRACE``: replay a trace with one or more engines, print one table.

``TRACE`` is a trace file (native YAML/JSON/CSV, or an openb pod-list CSV), ``openb`` (the
bundled openb trace) or ``synthetic`` (:func:`toposolve.sim.replay.synthetic.synthetic_trace`);
``--trace-option NAME=VALUE`` passes options to the openb reader or the generator. With
``inflate``, the openb capacity defaults to the cluster's GPUs. ``CLUSTER`` gives the nodes, the
topology and the running jobs; its pending jobs are dropped with one warning line. Every engine,
flag and trace option is checked before the first cycle.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from toposolve.cli.common import load_input, parse_params
from toposolve.core.errors import InputError
from toposolve.formats.trace.model import parse_duration
from toposolve.report.tables import format_table
from toposolve.sim.replay.defrag import SPEC, parse_defrag_policy
from toposolve.sim.replay.engine import cycle_solver
from toposolve.sim.replay.failures import SPEC as FAIL_SPEC
from toposolve.sim.replay.failures import parse_failure_policy
from toposolve.sim.replay.loop import background_jobs
from toposolve.sim.replay.traces import make_trace

COLUMNS = (
    ("engine", "engine", "{}"),
    ("jobs started", "jobs_started", "{:,}"),
    ("dropped", "jobs_dropped", "{:,}"),
    ("mean util", "mean_utilisation", "{:.1%}"),
    ("peak util", "peak_allocation_ratio", "{:.1%}"),
    ("util @130% arrived", "allocation_at_fgd_point", "{:.1%}"),
    ("wait mean s", "wait_mean", "{:,.0f}"),
    ("wait p95 s", "wait_p95", "{:,.0f}"),
    ("lost GPU-h", "lost_gpu_hours", "{:,.1f}"),
    ("moved jobs", "moved_jobs", "{:,}"),
    ("moves/day", "moves_per_day", "{:,.1f}"),
    ("failed nodes", "node_failures", "{:,}"),
    ("jobs repaired", "failure_jobs_repaired", "{:,}"),
    ("jobs evicted", "failure_jobs_evicted", "{:,}"),
    ("domain tier", "mean_domain_tier", "{:.2f}"),
    ("cycles", "cycles", "{:,}"),
    ("cycle s p50", "cycle_seconds_median", "{:.3f}"),
    ("wall s", "wall_time_s", "{:.1f}"),
)


def replay_table(records: list[Any]) -> str:
    """One line per engine, columns aligned."""
    rows = [[title for title, _, _ in COLUMNS]]
    for record in records:
        values = {**record.summary, "engine": record.engine}
        rows.append(["-" if values.get(key) is None else fmt.format(values[key])
                     for _, key, fmt in COLUMNS])
    return format_table(rows)


def run(args: argparse.Namespace) -> int:
    """Replay the trace with each engine and print one table."""
    from toposolve.sim.replay import replay, write_records

    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if not engines:
        raise InputError("no engine named", obj="command line", field="--engines")
    for engine in engines:  # every engine and flag checked before the first cycle of any
        try:
            cycle_solver(engine, args.profile, time_limit=args.time_limit, seed=args.seed,
                         evict=None, wall_factor=args.wall_factor)
        except InputError as err:
            flag = "--engines" if err.field == "engine" else f"--{err.field or ''}"
            raise InputError(err.message, file=err.file, obj=err.obj or "command line",
                             field=flag.replace("_", "-")) from None
    policy = parse_defrag_policy(args.defrag) if args.defrag else None
    failures = parse_failure_policy(args.fail_rate) if args.fail_rate else None
    options = parse_params(args.trace_option)
    cluster = load_input(argparse.Namespace(instances=[args.cluster],
                                            topology_labels=args.topology_labels))
    # the pending jobs dropped once, with one warning line, whatever the number of engines
    cluster = cluster.model_copy(update={"jobs": background_jobs(cluster)})
    trace = make_trace(args.trace, cluster, options)
    records = []
    for engine in engines:
        record = replay(
            cluster, trace, engine, profile=args.profile, cycle=args.cycle,
            time_limit=args.time_limit,
            evict=None if args.evict == "none" else args.evict, max_wait=args.max_wait,
            until=args.until, seed=args.seed,
            wall_factor=args.wall_factor, defrag=policy, failures=failures,
        )
        print(
            f"{engine}: {record.summary['cycles']} cycles in {record.summary['wall_time_s']:.1f}s",
            file=sys.stderr,
        )
        records.append(record)
    if args.output:
        write_records(records, args.output)
    if args.plot:
        from toposolve.report.plots import plot_replay

        plot_replay(records, args.plot)
    print(replay_table(records))
    return 0


DEFRAG_HELP = (
    f"defragment over time: {SPEC}. After every N-th engine call, the pending jobs "
    "blocked by fragmentation only (the idle resources of the nodes they may use, summed, "
    "would hold them), at most T (default 1) from the head of the queue, are offered to "
    "'toposolve defrag' (engine cpsat, 2 s deterministic, wall clock capped at F x that, "
    "F=10, by default), whose checked plan moves running jobs (at most K) and starts the "
    "admitted ones; a moved job restarts from scratch (restart=lose: its run so far is "
    "lost work; cost=work adds those GPU-hours to its move cost; max-lost=H keeps jobs "
    "that would lose more in place), keeps its progress (restart=keep) or loses the run "
    "since its last checkpoint (restart=checkpoint:30m: checkpoints every 30 min of run "
    "time from its start; checkpoint:30m:save=2m:restore=5m: each checkpoint takes 2 min "
    "and a restarted job spends 5 min loading it). horizon=S: only "
    "for a job the engine would not start within S with the running jobs' projected "
    "departures; max-cost-per-gpu=C: apply a plan only if its move cost per admitted "
    "accelerator is at most C; region=all|K: list only the movable jobs in the targets' "
    "candidate domains (K: the K closest to holding it) and skip a target no move can "
    "admit; retry=changed: skip a call whose targets were offered in vain while no pod "
    "changed in their candidate domains; reserve=head|ahead: apply a plan only if it "
    "delays no projected start of the head of the queue (or of any job queued ahead of "
    "its target), as EASY (conservative) backfilling; gain=F: offer only a job whose "
    "projected wait is at least F times its run time; jump=no: with horizon, offer no job "
    "behind one the horizon expects to start. 'waiting' names a measured trade (fewer moves) "
    "(docs/defrag.md). The cluster file's "
    "running jobs never move."
)
FAIL_HELP = (
    "inject node failures: each node fails R times per day on average (exponential "
    "times between failures, drawn from --seed) and stays down S seconds (down=, default "
    "3600), then returns. A failed node's pods are gone; with repair=defrag (default) "
    "'toposolve defrag --fail' re-places them inside their jobs' required domains moving "
    "the fewest other jobs (a repaired job keeps its progress), and a job it cannot repair "
    "is evicted whole (its run so far is lost work; it waits again); repair=evict evicts "
    "every job hit whole. scope=TIER (a tier number or name, e.g. rack) makes each "
    "HyperNode of that tier fail R times per day instead, all its nodes together (a "
    "switch or power failure); scope=node+rack runs both failure processes at once, each "
    "at R (the first scope draws from --seed as it would alone); scope=node:2+rack:0.1 "
    "gives each scope its own rate (failures per unit of that scope per day; a scope "
    "without :RATE fails at R). restart=lose restarts "
    "repaired and moved jobs from scratch too; restart=checkpoint:30m makes every job a "
    "failure repairs, moves or evicts resume from its last checkpoint (one every 30 min "
    "of run time; :save=2m:restore=5m adds what taking and loading one costs). "
    "Columns 'failed nodes', 'jobs repaired', 'jobs evicted'."
)


def add_parser(sub: Any) -> None:
    """Register the ``replay`` subcommand on ``sub`` (an argparse sub-parser action)."""
    p = sub.add_parser(
        "replay", help="replay a trace over time with one or more engines",
        description="Replay a workload trace over time, one scheduling cycle every --cycle, with "
                    "each engine, and print one table row per engine.",
        epilog="Table: jobs started and dropped; 'mean util' is accelerators in use / the "
               "cluster's, averaged over time; 'peak util' its highest sample; 'util @130%% "
               "arrived' the utilisation when the accelerators asked for by the jobs arrived "
               "so far first reach 130%% of the cluster's (FGD's headline figure; '-' if the "
               "trace never gets there); wait mean / p95 in seconds; lost GPU-hours of work "
               "stopped by evictions and by defrag moves; 'moved jobs' the job moves of "
               "--defrag (a job moved twice counts twice) and 'moves/day' the same per day of "
               "replay; the mean domain tier of multi-pod jobs; cycles and their "
               "median seconds. The JSON record (-o) has every figure and the timeline.")
    p.add_argument("cluster",
                   help="cluster: a YAML file or directory; its nodes, topology and running jobs "
                   "(there from the start); its pending jobs are dropped with one warning line")
    p.add_argument("trace", help="trace file (YAML/JSON/CSV, openb CSV), 'openb' or 'synthetic'")
    p.add_argument("--trace-option", action="append", metavar="NAME=VALUE",
                   help="option of the openb reader or generator")
    p.add_argument("--engines", default="volcano", help="comma-separated engines (volcano, cpsat)")
    p.add_argument("--cycle", type=_cycle, default=10.0,
                   help="seconds between scheduling cycles (10s, 1m…)")
    p.add_argument("--time-limit", type=float, default=None,
                   help="CP-SAT seconds per cycle (deterministic units)")
    p.add_argument(
        "--wall-factor",
        type=float,
        default=1.0,
        help="CP-SAT's wall-clock deadline per cycle in multiples of --time-limit "
        "(shared machine: 10-30)",
    )
    p.add_argument("--evict", choices=["none", "preempt", "reclaim", "both"], default="none")
    p.add_argument(
        "--defrag", default=None, metavar="every=N,...",
        help=DEFRAG_HELP)
    p.add_argument(
        "--fail-rate", default=None, metavar=FAIL_SPEC,
        help=FAIL_HELP)
    p.add_argument("--max-wait", type=_duration, default=None,
                   help="drop a job pending this long (0: one attempt)")
    p.add_argument("--until", type=_duration, default=None, help="stop the replay at this time")
    p.add_argument("--profile", default=None, help="profile name in models/ or a YAML path")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--topology-labels", metavar="LABEL,LABEL,...", default=None,
                   help="build the cluster's HyperNodes from these node labels, top level first")
    p.add_argument("--output", "-o", default=None, help="JSON record of every engine")
    p.add_argument("--plot", default=None, help="write the engines side by side (PNG)")
    p.set_defaults(func=run)


def _duration(text: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _cycle(text: str) -> float:
    seconds = _duration(text)
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"a cycle must last more than 0 s, got {text!r}")
    return seconds
