"""Repair over time: NVL72 racks with 0–2 spare trays, node failures injected (issue 20).

The cluster: ``--racks`` GB200 NVL72-like racks of 18 trays (4 GPUs each). The trace: gangs of
18 − spares trays (one 4-GPU pod per tray), each hard-limited to one rack, arriving at
``--load`` offered load (Poisson), durations log-normal around ``--duration``; so every busy
rack holds one gang and ``spares`` idle trays. Nodes fail ``--rate`` times per node per day
(``replay --fail-rate``, failed trays down ``--down``); with ``--scopes node,1`` also a
correlated row per case, ``scope=1``: each rack (tier 1) fails ``--rate`` times per day, its 18
trays together — the same expected number of failed trays, in bursts. Each spares count is
replayed with
``repair=defrag`` (``toposolve.defrag(fail=...)`` re-places the failed pods in the rack) and
``repair=evict`` (every gang hit is evicted whole, Kueue's behaviour today), under each
``--restarts`` rule (``keep``: repaired gangs keep their progress, evicted ones start over;
``checkpoint:30m``: every gang a failure touches resumes from its last checkpoint). Printed per
row: scope, restart rule, node failures, gangs hit, repaired, evicted, GPU-hours lost (all, and
by repaired or moved gangs), mean allocation ratio, wait p50/p95; the JSON record goes to
``--output``. Every plan is checked.

    PYTHONPATH=src .venv/bin/python benchmarks/bench_replay_repair.py [--racks 8] [--days 4] \
        [--seeds 0,1,2] [--scopes node,1,node+1] [--restarts keep,checkpoint:30m]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np

KEYS = ("node_failures", "failure_jobs_hit", "failure_jobs_repaired", "failure_jobs_evicted",
        "failure_lost_gpu_hours", "failure_lost_gpu_hours_repairs", "lost_gpu_hours",
        "mean_utilisation", "wait_p50", "wait_p95", "jobs_started", "cycles",
        "unit_failures_by_scope")


def rack_trace(spares: int, seed: int, args):
    """Rack-hard gangs of 18 − ``spares`` trays at ``args.load`` offered load."""
    from toposolve.formats.trace.native import load_trace_documents

    rng = np.random.default_rng(seed)
    mean = args.duration * 3600
    # offered load = arrival rate × mean duration × gang GPUs / cluster GPUs, counted in racks
    gap = mean / (args.load * args.racks)
    t, jobs = 0.0, []
    while t < args.days * 86400:
        duration = float(rng.lognormal(np.log(mean), 0.5))
        jobs.append({"name": f"gang-{len(jobs)}", "arrival": round(t),
                     "duration": round(duration),
                     "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
                     "tasks": [{"name": "w", "replicas": 18 - spares,
                                "requests": {"nvidia.com/gpu": 4}}]})
        t += float(rng.exponential(gap))
    return load_trace_documents([{"apiVersion": "toposolve/v1", "kind": "Trace",
                                  "jobs": jobs}], f"<racks spares={spares}>")


def run_row(cluster, spares: int, repair: str, scope: str, seed: int, args,
            restart: str = "keep") -> dict:
    from toposolve.sim.replay import replay

    trace = rack_trace(spares, seed, args)
    start, cpu = time.perf_counter(), time.process_time()
    record = replay(cluster, trace, "volcano", cycle=args.cycle, seed=seed,
                    until=args.days * 86400,
                    failures=f"{args.rate},repair={repair},down={args.down},scope={scope},"
                             f"restart={restart}")
    return {"seed": seed, "scope": scope, "restart": restart, "spares": spares, "repair": repair,
            "jobs": len(trace.jobs), "wall_s": time.perf_counter() - start,
            "cpu_s": time.process_time() - cpu, **{k: record.summary[k] for k in KEYS}}


def line(row: dict) -> str:
    def hours(s):
        return "-" if s is None else f"{s / 3600:.1f}"
    return (f"{row['seed']:4d} {row['scope']:6s} {row['restart']:15s} {row['spares']:6d} "
            f"{row['repair']:7s} "
            f"{row['node_failures']:8d} "
            f"{row['failure_jobs_hit']:4d} {row['failure_jobs_repaired']:8d} "
            f"{row['failure_jobs_evicted']:7d} {row['failure_lost_gpu_hours']:9.0f} "
            f"{row['failure_lost_gpu_hours_repairs']:9.0f} "
            f"{row['mean_utilisation']:6.1%} {hours(row['wait_p50']):>8s} "
            f"{hours(row['wait_p95']):>8s} {row['wall_s']:6.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--racks", type=int, default=8)
    parser.add_argument("--days", type=float, default=4.0, help="replay length")
    parser.add_argument("--rate", type=float, default=0.1, help="failures per node per day")
    parser.add_argument("--down", default="4h", help="how long a failed tray stays down")
    parser.add_argument("--load", type=float, default=1.3, help="offered load (racks)")
    parser.add_argument("--duration", type=float, default=8.0, help="median gang hours")
    parser.add_argument("--cycle", default="5m")
    parser.add_argument("--seeds", default="0", help="comma-separated seeds (trace, failures)")
    parser.add_argument("--scopes", default="node",
                        help="comma-separated failure scopes: node, or a tier (1: the rack), "
                        "or several at once (node+1)")
    parser.add_argument("--restarts", default="keep",
                        help="comma-separated --fail-rate restart rules (keep, lose, "
                        "checkpoint:30m)")
    parser.add_argument("--output", default=str(Path(__file__).parent / "results"
                                                / "replay_repair.json"))
    args = parser.parse_args()
    from toposolve.generate import generate

    # the cluster has no randomness: the seed varies the trace and the failures
    cluster = generate("nvl72", nodes=18 * args.racks, load=0.0, seed=0)
    print("seed scope  restart         spares repair  failures  hit repaired evicted lost GPU-h "
          "(repairs)  alloc wait p50h wait p95h wall s")
    rows = []
    for seed in (int(s) for s in args.seeds.split(",")):
        for scope, restart in ((s, r) for s in args.scopes.split(",")
                               for r in args.restarts.split(",")):
            for spares in (0, 1, 2):
                for repair in ("defrag", "evict"):
                    rows.append(run_row(cluster, spares, repair, scope, seed, args, restart))
                    print(line(rows[-1]), flush=True)
                    record = {"benchmark": "replay_repair", "machine": platform.platform(),
                              "python": platform.python_version(), "settings": vars(args),
                              "rows": rows}
                    Path(args.output).write_text(json.dumps(record, indent=1) + "\n")
    print(f"record -> {args.output}")


if __name__ == "__main__":
    main()
