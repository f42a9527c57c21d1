"""FGD's own experiment, per GPU device: allocation ratio at 130 % arrived load on openb.

Setting (docs/fgd.md): the 1,213 openb GPU nodes (6,212 GPUs of 1000 milli each), the default
trace (8,152 pods) shuffled and tuned up to 1.3 × the cluster's milli-GPUs per seed (42–51),
one attempt per pod in order, no departures; a shared pod takes ``gpu_milli`` of one device.
Policies: the simulator's Random, BestFit, GpuPacking and FGD score plugins
(``toposolve.sim.fgd``), and toposolve's own BalancedFGD (FGD's score, ties broken by
CPU-to-GPU balance). Printed beside FGD's published means (ATC '23: FGD 95.4 %, BestFit
93.1 %, GpuPacking 92.0 %, Random 87.5 %); a policy "reproduces" when its mean is within ±0.5
points.

    .venv/bin/python benchmarks/bench_fgd.py [--seeds 10] [--first-seed 42] [--policies ...]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

from bench_replay_openb import source_commit

PUBLISHED = {"Random": 0.875, "BestFit": 0.931, "GpuPacking": 0.920, "FGD": 0.954}
TOLERANCE = 0.005


def run_seed(seed: int, policies: list[str], nodes, trace, tp, ratio: float) -> list[dict]:
    from toposolve.sim.fgd import experiment, make_policy, run_experiment

    exp = experiment(nodes, trace, seed, ratio=ratio)
    rows = []
    for name in policies:
        run = run_experiment(nodes, exp, make_policy(name, exp.rank, seed, tp), name)
        rows.append({
            "policy": name,
            "seed": seed,
            "pods": len(exp.pods),
            "arrived_load": float(run.arrived[-1]) / run.capacity,
            "allocation_ratio": run.ratio,
            "dropped": int((run.node < 0).sum()),
            "curve": run.curve(),
            "wall_s": run.wall_s,
            "cpu_s": run.cpu_s,
        })
        print(f"  seed {seed} {name:<11} {100 * run.ratio:6.2f} %  "
              f"dropped {rows[-1]['dropped']:5d}  {run.wall_s:5.1f} s", flush=True)
    return rows


def summarise(rows: list[dict]) -> dict:
    out = {}
    for name in dict.fromkeys(r["policy"] for r in rows):
        mine = [r for r in rows if r["policy"] == name]
        ratios = [r["allocation_ratio"] for r in mine]
        mean = statistics.mean(ratios)
        published = PUBLISHED.get(name)
        out[name] = {
            "seeds": [r["seed"] for r in mine],
            "per_seed": ratios,
            "mean": mean,
            "min": min(ratios),
            "max": max(ratios),
            "stdev": statistics.stdev(ratios) if len(ratios) > 1 else 0.0,
            "published": published,
            "reproduces": None if published is None else abs(mean - published) <= TOLERANCE,
            "wall_s_total": sum(r["wall_s"] for r in mine),
            "cpu_s_total": sum(r["cpu_s"] for r in mine),
        }
    return out


def print_table(summary: dict) -> None:
    print(f"\n{'policy':<12}{'mean %':>8}{'min':>8}{'max':>8}{'published':>11}{'diff':>7}"
          f"{'  reproduces':<13}{'wall s':>8}{'CPU s':>8}")
    for name, s in summary.items():
        pub = s["published"]
        diff = f"{100 * (s['mean'] - pub):+.2f}" if pub is not None else "—"
        verdict = {True: "yes", False: "NO", None: "—"}[s["reproduces"]]
        print(f"{name:<12}{100 * s['mean']:8.2f}{100 * s['min']:8.2f}{100 * s['max']:8.2f}"
              f"{'—' if pub is None else f'{100 * pub:.1f}':>11}{diff:>7}  {verdict:<11}"
              f"{s['wall_s_total']:8.1f}{s['cpu_s_total']:8.1f}")


def main() -> None:
    from toposolve.sim.fgd import POLICIES, load_nodes, load_pods, typical_pods
    from toposolve.sim.fgd.experiment import target_workload

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=42)
    parser.add_argument("--load", type=float, default=1.3, help="FGD's tune ratio")
    parser.add_argument("--policies", default=",".join(POLICIES))
    parser.add_argument("--output", default="benchmarks/results/fgd.json")
    args = parser.parse_args()
    policies = [p for p in args.policies.split(",") if p]
    nodes = load_nodes()
    trace = load_pods(nodes.models)
    tp = typical_pods(trace)
    start = time.perf_counter()
    rows: list[dict] = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        rows += run_seed(seed, policies, nodes, trace, tp, args.load)
    summary = summarise(rows)
    print_table(summary)
    record = {
        "benchmark": "fgd",
        "machine": platform.platform(),
        "python": platform.python_version(),
        "commit": source_commit(),
        "settings": vars(args),
        "cluster": {"nodes": len(nodes.names), "gpus": int(nodes.gpus.sum())},
        "target_workload": target_workload(tp),
        "summary": summary,
        "rows": rows,
        "wall_s": time.perf_counter() - start,
    }
    Path(args.output).write_text(json.dumps(record, indent=1) + "\n")
    print(f"record -> {args.output}")


if __name__ == "__main__":
    main()
