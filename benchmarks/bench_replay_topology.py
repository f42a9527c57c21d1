"""A topology-heavy replay: gangs with hard tier limits on superpod-1k and on Lingjun.

Clusters: the ``superpod`` preset at 1,024 DGX nodes (32-node SUs, spines of 4 SUs, cores of 4
spines) and the ``lingjun`` preset (the real 847-host Alibaba Lingjun Clos: 119 leaves of 2–8
hosts under 3 PSWs). Trace (seeded, per cluster): ``--jobs`` gangs from the cluster's job mix,
70 % hard at their tight tier (or the one above), 20 % partitioned (hard partitions), 10 % soft
or none; log-normal durations (median ``--duration``), Poisson arrivals at ``--load`` offered
load (above 1: a queue builds up). Replay with ``--cycle`` cycles, Volcano mirror vs CP-SAT
(``--time-limit`` deterministic seconds per cycle, warm-started from the mirror's plan). Every
cycle's plan is checked.

Engines are ``NAME`` or ``NAME@PROFILE`` (a profile of ``models/`` or a path), e.g.
``--engines volcano,cpsat,cpsat@replay``: several CP-SAT profiles against the same mirror.
``--seeds N`` replays seeds ``--seed`` … ``--seed + N − 1`` (a fresh trace per seed) and prints
the mean per cluster and engine, with how many seeds each engine beat the mirror on mean wait.

Reported per cluster and engine: jobs started, time-weighted utilisation, mean and p95 queueing
delay, mean domain tier of multi-pod gangs, the end of the replay (makespan), cycles, and the
CP-SAT cycle time (median after the first; target ≤ 1 s at 1,024 nodes with ≤ 50 pending jobs).

    .venv/bin/python benchmarks/bench_replay_topology.py [--jobs 150] [--seed 0] [--seeds 1]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

CLUSTERS = {
    "superpod-1k": ("superpod", {"nodes": 1024}, "superpod"),
    "lingjun": ("lingjun", {}, "lingjun"),
}
KEYS = (
    "jobs_started",
    "mean_utilisation",
    "wait_mean",
    "wait_p95",
    "mean_domain_tier",
    "end_time",
    "cycles",
    "cycle_statuses",
    "cycles_wall_clock",
    "cycle_seconds_median_after_first",
    "cycle_seconds_max",
    "mean_pending_jobs",
    "wait_mean_by_priority",
)


def run_cluster(name: str, seed: int, args) -> list[dict]:
    from toposolve.generate import generate
    from toposolve.sim.replay import replay
    from toposolve.sim.replay.synthetic import synthetic_trace

    preset, options, mix = CLUSTERS[name]
    cluster = generate(preset, load=0.0, seed=seed, **options)
    trace = synthetic_trace(
        cluster,
        jobs=args.jobs,
        load=args.load,
        duration=args.duration,
        mix=mix,
        partitioned=0.2,
        hard=0.7,
        soft=0.05,
        seed=seed,
    )
    rows = []
    for label in args.engines.split(","):
        engine, _, profile = label.partition("@")
        start = time.perf_counter()
        record = replay(
            cluster,
            trace,
            engine,
            profile=profile or None,
            cycle=args.cycle,
            time_limit=args.time_limit,
            seed=seed,
            wall_factor=args.wall_factor,
        )
        pending = max((c["pending_jobs"] for c in record.cycles), default=0)
        row = {
            "cluster": name,
            "seed": seed,
            "engine": label,
            "wall_s": time.perf_counter() - start,
            "max_pending_jobs": pending,
            **{k: record.summary[k] for k in KEYS},
        }
        rows.append(row)
        print(
            f"{name:12s} seed {seed} {label:16s} started {row['jobs_started']:4d}  util "
            f"{row['mean_utilisation']:.1%}  "
            f"wait mean {row['wait_mean'] / 3600:6.2f} h p95 {row['wait_p95'] / 3600:6.2f} h  "
            f"domain tier {row['mean_domain_tier']:.2f}  end {row['end_time'] / 3600:6.1f} h  "
            f"cycles {row['cycles']:4d} (median after first "
            f"{row['cycle_seconds_median_after_first']:.2f}s, "
            f"max pending {pending}, cut by the wall clock {row['cycles_wall_clock']})  wall "
            f"{row['wall_s']:.0f}s",
            flush=True,
        )
    return rows


def summarise(rows: list[dict]) -> list[dict]:
    """Mean per cluster and engine over the seeds, and on how many seeds the engine's mean wait
    was shorter than the first engine's (the mirror's) on the same trace."""
    out = []
    for cluster in dict.fromkeys(r["cluster"] for r in rows):
        mine = [r for r in rows if r["cluster"] == cluster]
        base = {r["seed"]: r for r in mine if r["engine"] == mine[0]["engine"]}
        for engine in dict.fromkeys(r["engine"] for r in mine):
            these = [r for r in mine if r["engine"] == engine]
            mean = {
                k: statistics.mean(r[k] for r in these)
                for k in (
                    "mean_utilisation",
                    "wait_mean",
                    "wait_p95",
                    "mean_domain_tier",
                    "end_time",
                )
            }
            shorter = sum(1 for r in these if r["wait_mean"] < base[r["seed"]]["wait_mean"])
            out.append(
                {
                    "cluster": cluster,
                    "engine": engine,
                    "seeds": len(these),
                    **mean,
                    "shorter_wait_seeds": shorter,
                }
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", default="superpod-1k,lingjun")
    parser.add_argument("--engines", default="volcano,cpsat")
    parser.add_argument("--jobs", type=int, default=150)
    parser.add_argument("--load", type=float, default=1.2)
    parser.add_argument("--duration", default="4h")
    parser.add_argument("--cycle", default="5m")
    parser.add_argument(
        "--wall-factor",
        type=float,
        default=1.0,
        help="CP-SAT's wall-clock deadline per cycle in multiples of --time-limit (shared "
             "machine: 30)",
    )
    parser.add_argument("--time-limit", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--seeds", type=int, default=1, help="number of seeds (a fresh trace each)")
    parser.add_argument(
        "--output", default=str(Path(__file__).parent / "results" / "replay_topology.json")
    )
    args = parser.parse_args()
    rows = [
        row
        for name in args.clusters.split(",")
        for seed in range(args.seed, args.seed + args.seeds)
        for row in run_cluster(name, seed, args)
    ]
    summary = summarise(rows)
    print(
        f"\nmean over {args.seeds} seed(s) from {args.seed} (shorter wait: seeds on which the "
        f"mean wait beat the first engine's)"
    )
    for s in summary:
        print(
            f"{s['cluster']:12s} {s['engine']:16s} util {s['mean_utilisation']:.1%}  wait mean "
            f"{s['wait_mean'] / 3600:5.2f} h  "
            f"p95 {s['wait_p95'] / 3600:5.2f} h  domain tier {s['mean_domain_tier']:.2f}  end "
            f"{s['end_time'] / 3600:5.1f} h  "
            f"shorter wait {s['shorter_wait_seeds']}/{s['seeds']}"
        )
    record = {
        "benchmark": "replay_topology",
        "machine": platform.platform(),
        "python": platform.python_version(),
        "settings": vars(args),
        "rows": rows,
        "summary": summary,
    }
    Path(args.output).write_text(json.dumps(record, indent=1) + "\n")
    print(f"record -> {args.output}")


if __name__ == "__main__":
    main()
