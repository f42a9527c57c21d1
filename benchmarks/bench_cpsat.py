"""CP-SAT against the Volcano-mirroring heuristic (issue: CP-SAT engine, speed and quality).

Cases, on generated clusters (``toposolve.generate``), 8-GPU nodes:

* ``superpod-1k``: ``superpod`` with 1,024 nodes (32-node SUs, 4 tiers + root), 60 pending gang
  jobs at 90 % demand, one instance per seed. Target: proven optimal (all lexicographic stages)
  in ≤ 30 s, median over 10 seeds.
* ``superpod-1k-overload``: the same cluster with 120 % demand (jobs drawn until the demand is
  met), seeds 0-2: not everything fits, so the placed stage itself is at stake.
* ``scale-6k``: the ``scale-6k`` cluster (6,144 nodes, 9,458 HyperNodes in 5 tiers, per-node
  leaves) with a 3,000-pod × 8-GPU hard job (top tier, as in ``bench_heuristic.py``) and the
  first 199 of its generated jobs. Target: a checked plan at least as good as the heuristic's
  within 60 s, gap ≤ 2 %, peak memory ≤ 4 GiB.
* ``scale-6k-exact`` (``--exact-6k SECONDS``, run alone): the same instance with the exact
  model forced instead of the coarse one — the lifted model (``engines/cpsat/model/lift.py``), as
  the
  plain per-node model needs 1.4 M count variables there. Records every stage's bound and gap.

Each case runs in a fresh process (spawned), so ``peak_rss_mib`` is that case's own maximum
resident set (``ru_maxrss``), heuristic and CP-SAT included. Every plan goes through the
checker. ``gpus_placed`` counts accelerator units of new pods; ``placed`` is the priority-weighted
stage value; ``gap`` is the engine's (first stage, see ``engines/cpsat/solve/runner.py``).

    .venv/bin/python benchmarks/bench_cpsat.py [--seeds 10] [--quick] [--workers N] [--output PATH]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import platform
import resource
import statistics
import time
from pathlib import Path

BIG_JOB = {
    "name": "usecase-3000",
    "priorityClass": "high",
    "tasks": [{"name": "worker", "replicas": 3000, "requests": {"nvidia.com/gpu": 8, "cpu": "96"}}],
}


def _instance(case: str, seed: int):
    from toposolve.formats.native.reader import load_native
    from toposolve.generate import generate, generate_document

    if case == "superpod-1k":
        return generate("superpod", nodes=1024, load=0.93, seed=seed, jobs=60)  # 90.3-92.4 % demand
    if case == "superpod-1k-overload":
        return generate("superpod", nodes=1024, load=1.2, seed=seed)
    cluster = generate_document("scale-6k", seed=seed)  # also scale-6k-exact
    top = max(level["tier"] for level in cluster["topology"]["levels"])
    big = {**BIG_JOB, "networkTopology": {"mode": "hard", "highestTierAllowed": top}}
    return load_native(
        [{**cluster, "jobs": [big, *cluster["jobs"][:199]]}], source=f"scale-6k+3000 seed={seed}"
    )


def _gpus(problem, assignment) -> int:
    from toposolve.policy.objective import accelerator_units

    units = accelerator_units(problem)
    return int(sum(units[g] * sum(per.values()) for g, per in assignment.counts.items()))


def run_case(case: str, seed: int, time_limit: float, workers: int | None = None) -> dict:
    """One instance: heuristic, then CP-SAT warm-started from it; both evaluated and checked."""
    from toposolve.check.checker import check_plan
    from toposolve.core.assignment import to_plan
    from toposolve.core.problem import compile_problem
    from toposolve.engines.contract import SolveOptions
    from toposolve.engines.cpsat import solve_cpsat
    from toposolve.engines.volcano import run_heuristic
    from toposolve.policy.objective import evaluate
    from toposolve.policy.profiles import load_profile

    if case == "scale-6k-exact":
        from toposolve.engines.cpsat.solve import coarse

        coarse.LIFT_BUDGET = (
            10**9
        )  # this process only: the lifted exact model, never the coarse one
    instance = _instance(case, seed)
    problem = compile_problem(instance)
    cpu0 = time.process_time()
    profile = load_profile("lexicographic")
    t0 = time.perf_counter()
    heuristic = run_heuristic(problem, profile)
    heuristic_s = time.perf_counter() - t0
    h_value = evaluate(problem, heuristic, profile.objective)
    result = solve_cpsat(problem, profile, SolveOptions(time_limit=time_limit, workers=workers),
                         heuristic)
    plan = to_plan(problem, result.assignment, engine="cpsat", status=result.status)
    violations = check_plan(instance, plan)
    stats = result.stats
    return {
        "case": case,
        "seed": seed,
        "nodes": problem.n_nodes,
        "hypernodes": len(problem.topology.names) - 1,
        "jobs": len(problem.jobs),
        "pending_pods": sum(len(p) for p in problem.group_pending),
        "time_limit_s": time_limit,
        "heuristic_s": round(heuristic_s, 3),
        "cpsat_s": round(result.wall_time_s, 3),
        "cpu_s": round(
            time.process_time() - cpu0, 1
        ),  # heuristic, CP-SAT and checker, this process
        "status": result.status,
        "stage_status": [s["status"] for s in stats.get("stages", [])],
        "objective": dict(result.objective.stages),
        "heuristic_objective": dict(h_value.stages),
        "bound": result.bound,
        "gap": result.gap,
        "at_least_heuristic": result.objective.better_or_equal(h_value),
        "gpus_placed": _gpus(problem, result.assignment),
        "heuristic_gpus_placed": _gpus(problem, heuristic),
        "jobs_placed": len(result.assignment.placed_jobs(problem)),
        "heuristic_jobs_placed": len(heuristic.placed_jobs(problem)),
        "violations": len(violations),
        "model": {
            k: stats.get(k)
            for k in (
                "aggregation_level",
                "lifted",
                "variables",
                "constraints",
                "count_variables",
                "node_classes",
                "build_seconds",
                "plan_source",
                "hint_feasible",
                "refined_classes",
            )
        },
        "stages": stats.get("stages", []),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def _isolated(args: tuple[str, int, float, int | None]) -> dict:
    return run_case(*args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seeds", type=int, default=10, help="superpod-1k instances (seeds 0..n-1)"
    )
    parser.add_argument("--quick", action="store_true", help="3 superpod seeds only")
    parser.add_argument("--workers", type=int, default=None,
                        help="CP-SAT workers (default: the profile's; 3+: the deterministic "
                             "portfolio, docs/cpsat-formulation.md section 3a)")
    parser.add_argument(
        "--exact-6k", type=float, metavar="SECONDS", help="only scale-6k with the exact model"
    )
    parser.add_argument(
        "--output", default=None, help="default benchmarks/results/cpsat.json (cpsat_exact6k.json)"
    )
    args = parser.parse_args()
    seeds = 3 if args.quick else args.seeds
    cases = [("superpod-1k", s, 30.0) for s in range(seeds)]
    if args.exact_6k:
        cases = [("scale-6k-exact", 0, args.exact_6k)]
    elif not args.quick:
        cases += [("superpod-1k-overload", s, 30.0) for s in range(3)]
        cases.append(("scale-6k", 0, 60.0))
    ctx = multiprocessing.get_context("spawn")
    records = []
    for case in cases:
        with ctx.Pool(1) as pool:  # a fresh process per case: its own peak memory
            records.append(pool.apply(_isolated, ((*case, args.workers),)))
        rec = records[-1]
        print(
            f"{rec['case']:>12} seed={rec['seed']:<2} {rec['status']:>9} {rec['cpsat_s']:6.1f}s "
            f"gap={rec['gap'] if rec['gap'] is None else round(rec['gap'], 6)} "
            f"cpsat={rec['objective']} heuristic={rec['heuristic_objective']} "
            f"GPUs {rec['gpus_placed']} vs {rec['heuristic_gpus_placed']} "
            f"viol={rec['violations']} peak={rec['peak_rss_mib']}MiB",
            flush=True,
        )
    summary = {}
    for name in ("superpod-1k", "superpod-1k-overload"):
        sp = [r for r in records if r["case"] == name]
        if not sp:
            continue
        summary[name] = {
            "instances": len(sp),
            "proven_optimal": sum(r["status"] == "OPTIMAL" for r in sp),
            "median_cpsat_s": statistics.median(r["cpsat_s"] for r in sp),
            "max_cpsat_s": max(r["cpsat_s"] for r in sp),
            "gpus_more_than_heuristic": sum(
                r["gpus_placed"] - r["heuristic_gpus_placed"] for r in sp
            ),
            "spread_less_than_heuristic": sum(
                r["heuristic_objective"]["spread"] - r["objective"]["spread"] for r in sp
            ),
            "fragmentation_less_than_heuristic": sum(
                r["heuristic_objective"]["fragmentation"] - r["objective"]["fragmentation"]
                for r in sp
            ),
        }
    for r in records:
        if r["case"] in ("scale-6k", "scale-6k-exact"):
            summary[r["case"]] = {
                k: r[k]
                for k in (
                    "status",
                    "cpsat_s",
                    "cpu_s",
                    "gap",
                    "at_least_heuristic",
                    "violations",
                    "peak_rss_mib",
                )
            }
            summary[r["case"]]["stages"] = {
                s["stage"]: (s["status"], s["objective"], s["bound"], s["gap"]) for s in r["stages"]
            }
    print(json.dumps(summary, indent=1))
    default = (
        "benchmarks/results/cpsat_exact6k.json"
        if args.exact_6k
        else "benchmarks/results/cpsat.json"
    )
    out = Path(args.output or default)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "machine": platform.platform(),
                "python": platform.python_version(),
                "workers": args.workers,
                "summary": summary,
                "records": records,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
