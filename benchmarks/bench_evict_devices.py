"""Eviction with per-device GPU sharing (issue 22): the Volcano mirror against CP-SAT.

Instances (one per seed, ``numpy.random.default_rng(seed)``): 4-8 nodes of 4 or 8 GPUs whose
devices low-priority shared pods (100-1000m, one device each) nearly fill, one in two nodes
also running a low 2-device share (100m on devices 0 and 1); 3-9 pending jobs, high or low
priority: whole GPUs (1-2 per pod, 1-2 pods) or 300/500/700m shares (1-3 pods); jobs spread
over two queues of weight 1. Both engines solve with ``--evict MODE``; both plans go through
the checker. Reported: placed (the stage's value), evicted pods, how often CP-SAT places more
or evicts fewer at the same placement, CP-SAT's statuses, warm-start feasibility and times.

    .venv/bin/python benchmarks/bench_evict_devices.py [--mode both] [--seeds 30]
        [--time-limit 10] [--output benchmarks/results/evict_devices.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np

from toposolve.check.checker import check_plan
from toposolve.core.assignment import from_plan
from toposolve.core.instance import Instance, Job, Node, PriorityClass, Queue, Task
from toposolve.core.problem import compile_problem
from toposolve.engines.contract import SolveOptions
from toposolve.policy.objective import stage_values
from toposolve.solve import solve_problem

GPU = "nvidia.com/gpu"
CLASSES = [PriorityClass(name="low", value=1), PriorityClass(name="high", value=100)]


def job(name, gpu, priority, replicas=1, share=None, running=None, use=None):
    task = Task(name="w", replicas=replicas, requests={"cpu": 1, GPU: gpu},
                device_share=share, running=running or {}, device_use=use or {})
    return Job(name=name, min_available=replicas, tasks=[task], priority_class=priority)


def instance(seed: int) -> Instance:
    rng = np.random.default_rng(seed)
    nodes = [Node(name=f"n{i}", allocatable={"cpu": 64, GPU: int(g)})
             for i, g in enumerate(rng.choice([4, 8], size=int(rng.integers(4, 9))))]
    jobs = []
    for n, node in enumerate(nodes):
        for d in range(node.allocatable[GPU] // 1000):
            left = 1000
            while left >= 200 and rng.integers(0, 4):
                milli = int(rng.choice([m for m in (100, 300, 500, 1000) if m <= left - 100]))
                left -= milli
                jobs.append(job(f"run{n}-{d}-{left}", f"{milli}m", "low", share={"milli": milli},
                                running={0: node.name}, use={0: {d: milli}}))
    for n, node in enumerate(nodes):
        if rng.integers(0, 2):
            jobs.append(job(f"multi{n}", "200m", "low", share={"milli": 100, "count": 2},
                            running={0: node.name}, use={0: {0: 100, 1: 100}}))
    for k in range(int(rng.integers(3, 10))):
        if rng.integers(0, 2):
            jobs.append(job(f"p{k}", int(rng.integers(1, 3)), "high",
                            replicas=int(rng.integers(1, 3))))
        else:
            milli = int(rng.choice([300, 500, 700]))
            jobs.append(job(f"p{k}", f"{milli}m", str(rng.choice(["high", "high", "low"])),
                            replicas=int(rng.integers(1, 4)), share={"milli": milli}))
    for j in jobs:
        j.queue = str(rng.choice(["default", "default", "other"]))
    return Instance(nodes=nodes, jobs=jobs, priority_classes=CLASSES,
                    queues=[Queue(name=q, weight=1) for q in ("default", "other")])


def run_seed(seed: int, mode: str, limit: float) -> dict:
    inst = instance(seed)
    problem = compile_problem(inst)
    out: dict = {"seed": seed}
    for engine, options in (("volcano", SolveOptions(evict=mode)),
                            ("cpsat", SolveOptions(evict=mode, time_limit=limit,
                                                   deterministic=True))):
        start = time.perf_counter()
        plan = solve_problem(problem, engine, options=options)
        seconds = time.perf_counter() - start
        violations = check_plan(inst, plan, eviction_mode=mode)
        out[engine] = {"placed": int(stage_values(problem, from_plan(problem, plan))["placed"]),
                       "evicted": len(plan.evictions), "status": str(plan.status),
                       "seconds": round(seconds, 3), "violations": len(violations),
                       "hint_feasible": plan.stats.get("hint_feasible")}
    return out


def summary(rows: list[dict]) -> dict:
    m, c = [r["volcano"] for r in rows], [r["cpsat"] for r in rows]
    return {
        "instances": len(rows),
        "violations": sum(x["violations"] for x in m + c),
        "cpsat_places_more": sum(b["placed"] > a["placed"] for a, b in zip(m, c, strict=True)),
        "same_placed_fewer_evictions": sum(b["placed"] == a["placed"] and b["evicted"]
                                           < a["evicted"] for a, b in zip(m, c, strict=True)),
        "placed": {"volcano": sum(x["placed"] for x in m), "cpsat": sum(x["placed"] for x in c)},
        "evicted": {"volcano": sum(x["evicted"] for x in m), "cpsat": sum(x["evicted"] for x in c)},
        "cpsat_statuses": sorted({x["status"] for x in c}),
        "hint_feasible": sorted({str(x["hint_feasible"]) for x in c}),
        "cpsat_seconds_median": float(np.median([x["seconds"] for x in c])),
        "cpsat_seconds_max": max(x["seconds"] for x in c),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="both", choices=["preempt", "reclaim", "both"])
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--output", default="benchmarks/results/evict_devices.json")
    args = parser.parse_args()
    rows = [run_seed(s, args.mode, args.time_limit) for s in range(args.seeds)]
    record = {"mode": args.mode, "seeds": f"0-{args.seeds - 1}", "time_limit": args.time_limit,
              "machine": platform.machine(), "summary": summary(rows), "runs": rows}
    Path(args.output).write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps(record["summary"]))


if __name__ == "__main__":
    main()
