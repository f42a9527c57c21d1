"""FGD's experiment shape on the openb trace: GPU allocation ratio at 130 % arrived load.

Cluster: the ``alibaba`` preset with every one of the trace's 1,213 GPU nodes (6,212 GPUs; racks
and pools synthesised — single-pod jobs never constrain them). Trace (one per seed): the openb
default trace, every pod a one-pod job, in trace order (``--order shuffle`` for FGD's artifact
order), shared GPUs as ``--sharing`` (``milli`` by default: FGD's GPU counts, node-pooled
shares; see docs/replay.md), tuned to ``--load`` (1.3) × the cluster's GPUs with FGD's tuning
rule, arriving one per second, never ending (``timing=sequence``). Replay: cycles of ``--batch``
arrivals, each job gets one attempt (``max_wait=0``), the scheduler mirrors of ``--engines``
(``volcano`` by default; ``kai``, ``kube``, ``kueue``) vs CP-SAT (``--time-limit`` deterministic
seconds per cycle). Every cycle's plan is checked.

Printed beside FGD's published table (ATC '23, mean of 10 seeds): FGD 95.4 %, BestFit 93.1 %,
GPU packing 92.0 %, random 87.5 %. The settings differ (docs/replay.md, "Differences from FGD's
setting"): read the comparison as an order of magnitude, not a ranking.

Also measured (``--speed``): the Volcano mirror replaying the whole trace in time
(``timing=trace``: real arrivals and durations, 10 s cycles).

    .venv/bin/python benchmarks/bench_replay_openb.py [--seeds 10] [--cpsat-seeds 1] [--speed]

FGD's setting, per device (issue 22): ``--setting fgd`` (``--sharing device``: a shared pod takes
``gpu_milli`` of one device; ``--order shuffle``; Volcano mirror; ``--engines
volcano,kai,kube,kueue`` for the other mirrors, and ``--policies fgd:BalancedFGD,fgd:FGD`` runs
FGD's policies as replay engines on the same traces).
``--cpsat-profile fgd`` runs CP-SAT with that profile (rows ``cpsat@fgd``); ``--nodes N`` draws a
smaller cluster of N openb nodes (the trace is tuned to its GPUs), for quick comparisons.

Long runs in parts: ``--first-seed 45 --seeds 0 --cpsat-seeds 3 --merge`` runs CP-SAT seeds 45–47
and merges them into the existing record at ``--output`` (rows of the same engine and seed are
replaced; the record's settings must match). The record is rewritten after every seed, so a run
cut short keeps the seeds it finished. ``--merge-from OTHER.json`` (repeatable) also takes the
rows of records written in parallel with other ``--output`` files (``--seeds 0 --cpsat-seeds 0``
only merges).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

FGD_PUBLISHED = {"FGD": 0.954, "BestFit": 0.931, "GPU packing": 0.920, "random": 0.875}
FIRST_SEED = 42  # FGD's artifact: tune seeds 42..51
# Settings that change a row's result: a merged record must agree on them.
RESULT_SETTINGS = ("sharing", "order", "load", "batch", "time_limit", "wall_factor", "nodes")


def cluster(nodes: int | None = None):
    """The alibaba preset: every openb GPU node, or ``nodes`` drawn from them (seed 0)."""
    from toposolve.generate import generate

    return generate("alibaba", nodes=nodes, load=0.0, seed=0)


def run(engine: str, seed: int, args, nodes) -> dict:
    from toposolve.formats.trace.openb import openb_trace
    from toposolve.sim.replay import replay
    from toposolve.sim.replay.traces import cluster_gpus

    trace = openb_trace(
        gpu_sharing=args.sharing,
        timing="sequence",
        inflate=args.load,
        capacity=cluster_gpus(nodes),
        order=args.order,
        seed=seed,
    )
    start, cpu = time.perf_counter(), time.process_time()
    name, _, profile = engine.partition("@")
    record = replay(
        nodes,
        trace,
        name,
        profile=profile or None,
        cycle=args.batch,
        max_wait=0,
        time_limit=args.time_limit,
        seed=seed,
        wall_factor=args.wall_factor,
    )
    s = record.summary
    return {
        "engine": engine,
        "seed": seed,
        "batch": args.batch,
        "jobs": s["jobs"],
        "dropped": s["jobs_dropped"],
        "allocation_ratio": s["final_allocation_ratio"],
        "arrived_load": s["final_arrived_load"],
        "cycles": s["cycles"],
        "cycle_statuses": s["cycle_statuses"],
        "cycles_cut_short": s["cycles_cut_short"],
        "cycles_wall_clock": s["cycles_wall_clock"],
        "cycle_seconds_median": s["cycle_seconds_median"],
        "wall_s": time.perf_counter() - start,
        "cpu_s": time.process_time() - cpu,  # this process only: the machine is shared
        "commit": source_commit(),
    }


def source_commit() -> str | None:
    """The commit of the toposolve source this row ran (rows merged from several runs may
    differ)."""
    import subprocess

    import toposolve

    src = Path(toposolve.__file__).resolve().parent
    out = subprocess.run(
        ["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    )
    return out.stdout.strip() or None


def speed(nodes, sharing: str) -> dict:
    from toposolve.formats.trace.openb import openb_trace
    from toposolve.sim.replay import replay

    trace = openb_trace(gpu_sharing=sharing)
    start, cpu = time.perf_counter(), time.process_time()
    record = replay(nodes, trace, "volcano", cycle=10)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    s = record.summary
    return {
        "what": "volcano, whole openb trace in time (timing=trace, 10 s cycles)",
        "jobs": s["jobs"],
        "cycles": s["cycles"],
        "wall_s": wall,
        "cpu_s": cpu,
        "cycle_seconds_median": s["cycle_seconds_median"],
        "mean_utilisation": s["mean_utilisation"],
        "wait_p95": s["wait_p95"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seeds", type=int, default=10, help="seeds of each --engines mirror (from --first-seed)"
    )
    parser.add_argument(
        "--engines", default="volcano",
        help="comma-separated scheduler mirrors run on --seeds seeds, rows labelled by engine "
             "(volcano, kai, kube, kueue; default volcano)",
    )
    parser.add_argument(
        "--cpsat-seeds", type=int, default=1, help="CP-SAT seeds (from --first-seed; 0 = none)"
    )
    parser.add_argument(
        "--cpsat-profile", default=None,
        help="CP-SAT's profile (a profile of models/ or a path; rows are labelled cpsat@NAME)",
    )
    parser.add_argument(
        "--first-seed", type=int, default=FIRST_SEED, help="first seed of this part of the run"
    )
    parser.add_argument(
        "--merge", action="store_true", help="merge the rows into the record at --output"
    )
    parser.add_argument(
        "--merge-from",
        action="append",
        default=[],
        metavar="RECORD",
        help="also merge the rows of this record (same settings)",
    )
    parser.add_argument(
        "--setting", choices=["fgd"], default=None,
        help="fgd: FGD's setting — per-device sharing, shuffled, 130 %% load, Volcano mirror "
             "(CP-SAT with --cpsat-seeds, 0 by default); defaults the options below",
    )
    parser.add_argument(
        "--policies", default="",
        help="comma-separated FGD policies run as replay engines on --seeds seeds "
             "(fgd:FGD, fgd:BalancedFGD, fgd:BestFit, fgd:GpuPacking, fgd:Random; "
             "needs --sharing device)",
    )
    parser.add_argument(
        "--policy-seeds", type=int, default=None, help="seeds of each --policies entry "
        "(default: --seeds)"
    )
    parser.add_argument("--sharing", choices=["milli", "whole", "device"], default="milli")
    parser.add_argument("--order", choices=["trace", "shuffle"], default="trace")
    parser.add_argument("--load", type=float, default=1.3)
    parser.add_argument(
        "--nodes", type=int, default=None,
        help="a smaller cluster: this many nodes drawn from openb's (default: all 1,213)",
    )
    parser.add_argument("--batch", type=int, default=20, help="arrivals per cycle")
    parser.add_argument(
        "--wall-factor",
        type=float,
        default=1.0,
        help="CP-SAT's wall-clock deadline per cycle in multiples of --time-limit (shared "
             "machine: 30)",
    )
    parser.add_argument(
        "--time-limit", type=float, default=2.0, help="CP-SAT deterministic seconds per cycle"
    )
    parser.add_argument(
        "--speed", action="store_true", help="also time the whole trace replayed in time"
    )
    parser.add_argument(
        "--output", default=str(Path(__file__).parent / "results" / "replay_openb.json")
    )
    known, _ = parser.parse_known_args()
    if known.setting == "fgd":
        parser.set_defaults(sharing="device", order="shuffle", load=1.3, cpsat_seeds=0,
                            output=str(Path(__file__).parent / "results" / "replay_openb_fgd.json"))
    args = parser.parse_args()
    record = start_record(args)
    rows = record["rows"]
    nodes = cluster(args.nodes)
    mirrors = [e.strip() for e in args.engines.split(",") if e.strip()]
    plan = [(m, args.first_seed + k) for m in mirrors for k in range(args.seeds)]
    cpsat = "cpsat" + (f"@{args.cpsat_profile}" if args.cpsat_profile else "")
    plan += [(cpsat, args.first_seed + k) for k in range(args.cpsat_seeds)]
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    policy_seeds = args.seeds if args.policy_seeds is None else args.policy_seeds
    plan += [(p, args.first_seed + k) for p in policies for k in range(policy_seeds)]
    for engine, seed in plan:
        row = run(engine, seed, args, nodes)
        rows[:] = [r for r in rows if (r["engine"], r["seed"]) != (engine, seed)] + [row]
        rows.sort(key=row_order)
        print(
            f"{engine:15s} seed {seed}: allocation {row['allocation_ratio']:.2%} at "
            f"{row['arrived_load']:.1%} arrived, "
            f"{row['dropped']} of {row['jobs']} dropped, {row['cycles']} cycles, "
            f"{row['wall_s']:.1f}s "
            f"({row['cpu_s']:.1f}s CPU), cycles cut short {row['cycles_cut_short']} "
            f"(by the wall clock {row['cycles_wall_clock']})",
            flush=True,
        )
        record["summary"] = summarise(rows)
        Path(args.output).write_text(
            json.dumps(record, indent=1) + "\n"
        )  # kept if a later run is cut short
    print(
        f"\nGPU allocation ratio at {args.load:.0%} arrived load (openb default, "
        f"sharing={args.sharing}, order={args.order})"
    )
    print(f"{'policy':14s} {'allocation':>10s}  source")
    for engine, s in record["summary"].items():
        print(
            f"{engine:14s} {s['mean']:>10.2%}  toposolve, {s['seeds']} seed(s) {s['seed_list']}, "
            f"min–max {s['min']:.2%}–{s['max']:.2%}, ± {s['stdev']:.2%}"
        )
    for name, value in FGD_PUBLISHED.items():
        print(f"{name:14s} {value:>10.1%}  FGD paper (ATC '23), 10 seeds, per-device GPU sharing")
    if args.speed:
        record["speed"] = speed(nodes, args.sharing)
        sp = record["speed"]
        print(
            f"\nspeed: {sp['what']}: {sp['jobs']} jobs, {sp['cycles']} cycles in "
            f"{sp['wall_s']:.1f}s "
            f"({sp['cpu_s']:.1f}s CPU; target ≤ 60 s)"
        )
    Path(args.output).write_text(json.dumps(record, indent=1) + "\n")
    print(f"record -> {args.output}")


def start_record(args) -> dict:
    """A fresh record, or with ``--merge`` the one at ``--output`` (its settings must match)."""
    settings = {k: v for k, v in vars(args).items() if k not in ("merge", "merge_from", "output")}
    fresh = {
        "benchmark": "replay_openb",
        "machine": platform.platform(),
        "python": platform.python_version(),
        "settings": settings,
        "rows": [],
        "summary": {},
        "fgd_published": FGD_PUBLISHED,
    }
    path = Path(args.output)
    record = read_matching(path, settings) if args.merge and path.exists() else fresh
    for other in args.merge_from:
        rows = read_matching(Path(other), settings)["rows"]
        keys = {(r["engine"], r["seed"]) for r in rows}
        record["rows"] = [r for r in record["rows"] if (r["engine"], r["seed"]) not in keys] + rows
    record["settings"].update(settings)
    record["rows"].sort(key=row_order)
    record["summary"] = summarise(record["rows"])
    return record


def row_order(row: dict) -> tuple:
    return row["engine"] != "volcano", row["engine"], row["seed"]


def read_matching(path: Path, settings: dict) -> dict:
    """The record at ``path``; exits naming the settings that differ from ``settings``."""
    record = json.loads(path.read_text())
    differ = [k for k in RESULT_SETTINGS if record["settings"].get(k) != settings[k]]
    if differ:
        raise SystemExit(
            f"{path}: cannot merge, settings differ: "
            + ", ".join(f"{k} {record['settings'].get(k)} != {settings[k]}" for k in differ)
        )
    return record


def summarise(rows: list[dict]) -> dict:
    summary = {}
    for engine in dict.fromkeys(r["engine"] for r in rows):
        ratios = [r["allocation_ratio"] for r in rows if r["engine"] == engine]
        summary[engine] = {
            "seeds": len(ratios),
            "seed_list": [r["seed"] for r in rows if r["engine"] == engine],
            "mean": statistics.mean(ratios),
            "min": min(ratios),
            "max": max(ratios),
            "stdev": statistics.stdev(ratios) if len(ratios) > 1 else 0.0,
        }
    return summary


if __name__ == "__main__":
    main()
