"""Speed of the Volcano-mirroring heuristic (issue: heuristic engine, speed targets).

Cases, all on generated clusters (``toposolve.generate``), 8-GPU nodes:

* ``single-3000``: one hard-tier 3,000-pod × 8-GPU job on the ``scale-6k`` cluster
  (6,144 nodes, ≥ 9,000 HyperNodes). Target ≤ 0.5 s.
* ``queue-200``: the ``scale-6k`` queue of 200 mixed gang jobs (1–3,000 pods, hard / soft /
  partitioned) plus a 3,000-pod job. Target ≤ 10 s.
* ``scaling``: ``superpod`` clusters of 1k, 2k, 4k, 8k nodes at 90 % demand; time per
  (nodes × jobs) should not grow.

Prints a table and writes a JSON record (``--output``, default
``benchmarks/results/heuristic.json``).
Peak memory is the process's maximum resident set (``ru_maxrss``) after each case.

    .venv/bin/python benchmarks/bench_heuristic.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import time
from pathlib import Path

from toposolve.check.checker import check_plan
from toposolve.core.assignment import to_plan
from toposolve.core.problem import compile_problem
from toposolve.engines.volcano import run_heuristic
from toposolve.formats.native.reader import load_native
from toposolve.generate import generate_document
from toposolve.policy.profiles import load_profile


def big_job(pods: int, tier: int) -> dict:
    return {
        "name": "usecase-3000",
        "priorityClass": "high",
        "networkTopology": {"mode": "hard", "highestTierAllowed": tier},
        "tasks": [
            {"name": "worker", "replicas": pods, "requests": {"nvidia.com/gpu": 8, "cpu": "96"}}
        ],
    }


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_case(name: str, doc: dict, profile, *, check: bool) -> dict:
    t0 = time.perf_counter()
    instance = load_native([doc], source=name)
    t1 = time.perf_counter()
    problem = compile_problem(instance)
    t2 = time.perf_counter()
    assignment = run_heuristic(problem, profile)
    t3 = time.perf_counter()
    plan = to_plan(problem, assignment, engine="heuristic", status="FEASIBLE")
    violations = len(check_plan(instance, plan)) if check else None
    t4 = time.perf_counter()
    placed = sum(1 for j in plan.jobs if j.placed)
    return {
        "case": name,
        "nodes": len(instance.nodes),
        "hypernodes": len(instance.hypernodes),
        "jobs": len(instance.jobs),
        "pending_pods": sum(len(p) for p in problem.group_pending),
        "jobs_placed": placed,
        "pods_bound": len(plan.bindings),
        "load_s": round(t1 - t0, 3),
        "compile_s": round(t2 - t1, 3),
        "heuristic_s": round(t3 - t2, 3),
        "check_s": round(t4 - t3, 3) if check else None,
        "violations": violations,
        "peak_rss_mib": round(peak_mib(), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the 8k scaling point")
    parser.add_argument("--output", default="benchmarks/results/heuristic.json")
    args = parser.parse_args()
    profile = load_profile("volcano-default")
    records = []

    cluster = generate_document("scale-6k", seed=0)
    top_tier = max(level["tier"] for level in cluster["topology"]["levels"])
    single = {**cluster, "jobs": [big_job(3000, top_tier)]}
    records.append(run_case("single-3000", single, profile, check=True))

    queue = {**cluster, "jobs": [big_job(3000, top_tier), *cluster["jobs"][:199]]}
    records.append(run_case("queue-200", queue, profile, check=True))

    for nodes in (1024, 2048, 4096) if args.quick else (1024, 2048, 4096, 8192):
        doc = generate_document("superpod", nodes=nodes, load=0.9, seed=1)
        rec = run_case(f"scaling-{nodes}", doc, profile, check=False)
        rec["us_per_node_job"] = round(
            1e6 * rec["heuristic_s"] / (rec["nodes"] * max(rec["jobs"], 1)), 3
        )
        records.append(rec)

    cols = [
        "case",
        "nodes",
        "hypernodes",
        "jobs",
        "pending_pods",
        "jobs_placed",
        "heuristic_s",
        "compile_s",
        "check_s",
        "violations",
        "peak_rss_mib",
    ]
    print(" ".join(f"{c:>13}" for c in cols))
    for rec in records:
        print(" ".join(f"{str(rec.get(c)):>13}" for c in cols))
    for rec in records:
        if "us_per_node_job" in rec:
            print(f"{rec['case']}: {rec['us_per_node_job']} µs per node×job")
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "machine": platform.platform(),
                "python": platform.python_version(),
                "records": records,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
