"""Speed of the scheduler mirrors — volcano, kueue (also with Kueue's ``TASBalancedPlacement``
gate on), kai — on the heuristic benchmark's cases.

* ``single-3000``: one hard-topology 3,000-pod × 8-GPU job on the ``scale-6k`` cluster
  (6,144 nodes). Target ≤ 0.5 s per engine.
* ``queue-200``: the ``scale-6k`` queue of 200 mixed jobs (the 3,000-pod job and 199 generated
  hard / soft / partitioned gangs). Target ≤ 10 s per engine.

Each plan is checked (violations must be 0). Prints a table and writes a JSON record (``--output``,
default ``benchmarks/results/mirrors.json``).

    .venv/bin/python benchmarks/bench_mirrors.py
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import time
from pathlib import Path

from bench_heuristic import big_job, peak_mib

from toposolve.check.checker import check_plan
from toposolve.core.assignment import to_plan
from toposolve.core.problem import compile_problem
from toposolve.engines.kai import run_kai
from toposolve.engines.kueue import run_kueue
from toposolve.engines.volcano import run_heuristic
from toposolve.formats.native.reader import load_native
from toposolve.generate import generate_document
from toposolve.policy.profiles import load_profile

TARGETS = {"single-3000": 0.5, "queue-200": 10.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="benchmarks/results/mirrors.json")
    args = parser.parse_args()
    profile = load_profile("volcano-default")
    runs = {
        "volcano": lambda p: run_heuristic(p, profile),
        "kueue": run_kueue,
        "kueue-balanced": lambda p: run_kueue(
            p, balanced_placement=True
        ),  # gate TASBalancedPlacement on
        "kai": run_kai,
    }
    cluster = generate_document("scale-6k", seed=0)
    top_tier = max(level["tier"] for level in cluster["topology"]["levels"])
    cases = {
        "single-3000": {**cluster, "jobs": [big_job(3000, top_tier)]},
        "queue-200": {**cluster, "jobs": [big_job(3000, top_tier), *cluster["jobs"][:199]]},
    }
    records = []
    for case, doc in cases.items():
        instance = load_native([doc], source=case)
        problem = compile_problem(instance)
        for engine, run in runs.items():
            # each engine starts from a clean heap (the previous one's garbage is not its cost)
            gc.collect()
            start = time.perf_counter()
            assignment = run(problem)
            elapsed = time.perf_counter() - start
            plan = to_plan(problem, assignment, engine=engine, status="FEASIBLE")
            records.append(
                {
                    "case": case,
                    "engine": engine,
                    "nodes": len(instance.nodes),
                    "jobs": len(instance.jobs),
                    "jobs_placed": sum(1 for j in plan.jobs if j.placed),
                    "pods_bound": len(plan.bindings),
                    "seconds": round(elapsed, 3),
                    "target_s": TARGETS[case],
                    "met": elapsed <= TARGETS[case],
                    "violations": len(check_plan(instance, plan)),
                    "peak_rss_mib": round(peak_mib(), 1),
                }
            )
    cols = [
        "case",
        "engine",
        "nodes",
        "jobs",
        "jobs_placed",
        "pods_bound",
        "seconds",
        "target_s",
        "met",
        "violations",
    ]
    print(" ".join(f"{c:>14}" for c in cols))
    for rec in records:
        print(" ".join(f"{str(rec[c]):>14}" for c in cols))
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "machine": platform.platform(),
                "python": platform.python_version(),
                "note": "machine shared by several sessions: timings are noisy",
                "records": records,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
