"""Where greedy loses (issue 13): the Volcano mirror against CP-SAT, family by family.

Families (generated with ``toposolve.generate``, pending demand 120 % of the GPUs unless
said, seeds 0-2):

* ``superpod``: 256 DGX nodes in 32-node SUs.
* ``nvl72``: GB200 trays (4 GPUs) in 18-tray NVLink racks, 8 racks per leaf group.
* ``fattree``: arity 4, depth 3 (64 nodes), 8-GPU nodes.
* ``lingjun``: the real 847-host Alibaba Lingjun Clos (irregular leaves of 2-8 hosts).
* ``partition-heavy``: the superpod with 70 % of the jobs partitioned (hard partitions in SUs).
* ``heterogeneous``: ``alibaba``, 256 nodes of the real trace's node mix (several GPU models,
  shared GPUs), synthesised racks.
* ``occupancy``: the superpod with 40 % of the nodes held by running gangs.
* ``preemption``: the superpod at 40 % occupancy and 80 % pending demand, with ``--evict
  preempt`` for both engines (pending gangs may evict lower-priority running ones).

Per family: accelerators placed (new pods' GPUs) and priority-weighted value (Σ priority value
× GPUs placed: high 1000, normal 100, low 10) summed over the seeds, by the mirror and by CP-SAT
(default profile, deterministic, ``--time-limit`` 30, warm-started from the mirror), CP-SAT's
worst ``placed`` gap (at the first priority where bound and incumbent differ) and how many
instances it proved. Every plan is checked (``toposolve.solve`` raises otherwise).

    .venv/bin/python benchmarks/bench_quality.py [--seeds 3] [--time-limit 30] [--families a,b]
        [--output benchmarks/results/quality.json] [--markdown]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from placed_stage import outcome, placed_stages, proven

import toposolve
from toposolve.core.problem import compile_problem
from toposolve.formats.native.reader import load_native
from toposolve.generate import generate
from toposolve.generate.common import gpu_cluster
from toposolve.generate.jobs import SUPERPOD_MIX, ConstraintMix
from toposolve.generate.superpod import DGX_H100, tier_names_for
from toposolve.generate.tree import regular_tree

LOAD = 1.2


def _partition_heavy(seed: int) -> toposolve.Instance:
    tree = regular_tree(256, 32, (4, 4), tier_names_for(4))
    doc = gpu_cluster(
        np.random.default_rng(seed),
        name="partition-heavy",
        description="superpod, 70 % of jobs partitioned",
        tree=tree,
        shape=DGX_H100,
        mix=SUPERPOD_MIX,
        load=LOAD,
        jobs=None,
        occupancy=0.0,
        cordoned=0.0,
        constraints=ConstraintMix(partitioned=0.7, hard=0.2, soft=0.05),
    )
    return load_native([doc], source=f"partition-heavy seed={seed}")


FAMILIES: dict[str, tuple[Callable[[int], toposolve.Instance], str | None]] = {
    "superpod": (lambda s: generate("superpod", nodes=256, load=LOAD, seed=s), None),
    "nvl72": (lambda s: generate("nvl72", nodes=288, load=LOAD, seed=s), None),
    "fattree": (lambda s: generate("fattree", load=LOAD, seed=s), None),
    "lingjun": (lambda s: generate("lingjun", load=LOAD, seed=s), None),
    "partition-heavy": (_partition_heavy, None),
    "heterogeneous": (lambda s: generate("alibaba", nodes=256, load=LOAD, seed=s), None),
    "occupancy": (
        lambda s: generate("superpod", nodes=256, load=LOAD, seed=s, occupancy=0.4),
        None,
    ),
    "preemption": (
        lambda s: generate("superpod", nodes=256, load=0.8, seed=s, occupancy=0.4),
        "preempt",
    ),
}


def _weighted(problem, plan) -> int:
    """Σ priority value × accelerator units of the plan's new pods."""
    metrics = toposolve.plan_metrics(problem, plan)
    return int(sum(int(p) * units for p, units in metrics.accelerators_placed_by_priority.items()))


def run_one(family: str, seed: int, time_limit: float) -> dict:
    build, evict = FAMILIES[family]
    problem = compile_problem(build(seed))
    mirror = toposolve.solve_problem(
        problem, "volcano", options=toposolve.SolveOptions(evict=evict)
    )
    start = time.perf_counter()
    plan = toposolve.solve_problem(
        problem, "cpsat", options=toposolve.SolveOptions(time_limit=time_limit, evict=evict)
    )
    seconds = time.perf_counter() - start
    placed = placed_stages(plan)
    mine, theirs = toposolve.plan_metrics(problem, plan), toposolve.plan_metrics(problem, mirror)
    return {
        "family": family,
        "seed": seed,
        "nodes": problem.n_nodes,
        "jobs": len(problem.jobs),
        "status": plan.status,
        "seconds": round(seconds, 2),
        "placed_proven": proven(placed),
        "placed_gap": max((s["gap"] for s in placed if s["gap"] is not None), default=None),
        "gpus": mine.accelerators_placed,
        "mirror_gpus": theirs.accelerators_placed,
        "weighted": _weighted(problem, plan),
        "mirror_weighted": _weighted(problem, mirror),
        "jobs_placed": mine.jobs_placed,
        "mirror_jobs_placed": theirs.jobs_placed,
    }


def summarise(records: list[dict]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for r in records:
        s = out.setdefault(
            r["family"],
            {
                "instances": 0,
                "proven": 0,
                "gpus": 0,
                "mirror_gpus": 0,
                "weighted": 0,
                "mirror_weighted": 0,
                "worst_gap": 0.0,
                "nodes": r["nodes"],
            },
        )
        s["instances"] += 1
        s["proven"] += r["placed_proven"]
        for key in ("gpus", "mirror_gpus", "weighted", "mirror_weighted"):
            s[key] += r[key]
        if r["placed_gap"] is None and not r["placed_proven"]:
            s["worst_gap"] = None
        elif s["worst_gap"] is not None and r["placed_gap"] is not None:
            s["worst_gap"] = max(s["worst_gap"], r["placed_gap"])
    for s in out.values():
        s["gpus_lost_by_mirror_pct"] = round(
            100 * (s["gpus"] - s["mirror_gpus"]) / max(1, s["gpus"]), 1
        )
        s["weighted_lost_by_mirror_pct"] = round(
            100 * (s["weighted"] - s["mirror_weighted"]) / max(1, s["weighted"]), 1
        )
    return out


def markdown(summary: dict[str, dict]) -> str:
    lines = [
        "| family | nodes | GPUs placed: mirror / CP-SAT | priority-weighted: mirror / CP-SAT | "
        "mirror loses | CP-SAT `placed` proven, worst gap |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for family, s in summary.items():
        gap = "no bound" if s["worst_gap"] is None else f"{100 * s['worst_gap']:.2g} %"
        lines.append(
            f"| {family} | {s['nodes']:,} | {s['mirror_gpus']:,} / {s['gpus']:,} | "
            f"{s['mirror_weighted']:,} / {s['weighted']:,} | {s['gpus_lost_by_mirror_pct']} % "
            f"GPUs, "
            f"{s['weighted_lost_by_mirror_pct']} % weighted | {s['proven']}/{s['instances']}, "
            f"{gap} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=30.0)
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--output", default="benchmarks/results/quality.json")
    args = parser.parse_args()
    records = []
    for family in args.families.split(","):
        for seed in range(args.seeds):
            rec = run_one(family, seed, args.time_limit)
            records.append(rec)
            print(
                f"{family:>16} seed {seed}: {rec['status']:>8} {rec['seconds']:6.1f}s GPUs "
                f"{rec['mirror_gpus']} -> "
                f"{rec['gpus']}, weighted {rec['mirror_weighted']} -> {rec['weighted']}, "
                f"placed {outcome(rec)}",
                flush=True,
            )
    summary = summarise(records)
    table = markdown(summary)
    print(table)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "machine": platform.platform(),
                "python": platform.python_version(),
                "time_limit_s": args.time_limit,
                "summary": summary,
                "table": table,
                "records": records,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
