"""Deterministic CP-SAT on several threads (issue 22): the same plan bytes for any thread count?

Solves each instance in deterministic mode once per ``--workers`` value: ``1`` (or ``2``) is
the sequential search, ``3`` or more the fixed interleaved portfolio on that many threads
(``engines/cpsat/solve/parameters.pin_portfolio``). Per run it records the SHA-256 of the plan
as ``toposolve solve --no-timings`` writes it (``plan_sha``), each stage's value, status and
deterministic time, and the wall and CPU seconds. The deterministic budget is ``--time-limit``;
the wall clock is capped at ``--wall-cap`` seconds (default 600) so that a loaded machine does
not cut a search short (a run the wall clock did cut is flagged in ``cut_short``).

Instances (``superpod``, 15 % of the nodes held by running gangs): ``sp256-120-s{0,1,2}`` (256
nodes, 120 % demand), ``sp1k-90-s0`` (1,024 nodes, 93 % demand, 60 jobs: ``bench_cpsat``'s
``superpod-1k`` seed 0) and, with ``--overload``, ``sp1k-120-s0`` (``bench_overload``'s 120 %
seed 0).

    PYTHONPATH=src .venv/bin/python benchmarks/bench_parallel.py [--workers 1,3,4,8,16]
        [--overload] [--tag NAME] [--output benchmarks/results/parallel.json]
    taskset -c 0 ... --tag one-core         # the same, pinned to one core
    PYTHONPATH=src .venv/bin/python benchmarks/bench_parallel.py --compare A.json B.json ...

``--compare`` prints, per instance, whether every portfolio run (3+ workers) of every file has
the same ``plan_sha`` (and every sequential run likewise), and exits 1 if not.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
import time
from pathlib import Path

import toposolve
from toposolve.core.deadline import Deadline
from toposolve.core.problem import compile_problem
from toposolve.engines.cpsat.solve.parameters import SEQUENTIAL_UP_TO
from toposolve.generate import generate

OCCUPANCY = 0.15
INSTANCES = {  # name -> generate() arguments
    "sp256-120-s0": dict(nodes=256, load=1.2, seed=0, occupancy=OCCUPANCY),
    "sp256-120-s1": dict(nodes=256, load=1.2, seed=1, occupancy=OCCUPANCY),
    "sp256-120-s2": dict(nodes=256, load=1.2, seed=2, occupancy=OCCUPANCY),
    "sp1k-90-s0": dict(nodes=1024, load=0.93, seed=0, jobs=60),
}
OVERLOAD = {"sp1k-120-s0": dict(nodes=1024, load=1.2, seed=0, occupancy=OCCUPANCY)}


def mode(workers: int) -> str:
    return "sequential" if workers <= SEQUENTIAL_UP_TO else "portfolio"


def run_one(problem, workers: int, time_limit: float, wall_cap: float) -> dict:
    deadline = Deadline(time_limit, deterministic=True, wall_cap=wall_cap)
    options = toposolve.SolveOptions(time_limit=time_limit, workers=workers, deterministic=True,
                                     deadline=deadline)
    wall, cpu = time.perf_counter(), time.process_time()
    plan = toposolve.solve_problem(problem, "cpsat", options=options)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "workers": workers,
        "mode": mode(workers),
        "plan_sha": hashlib.sha256(plan.to_json(timings=False).encode()).hexdigest(),
        "status": plan.status,
        "stages": [(s["stage"], s["status"], s["objective"], round(s["deterministic_time"], 3))
                   for s in plan.stats.get("stages", [])],
        "dtime": round(sum(s["deterministic_time"] for s in plan.stats.get("stages", [])), 3),
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "cut_short": plan.stats.get("cut_short", []),
    }


def measure(args: argparse.Namespace) -> None:
    workers = [int(w) for w in args.workers.split(",")]
    instances = {**INSTANCES, **(OVERLOAD if args.overload else {})}
    records = []
    for name, spec in instances.items():
        problem = compile_problem(generate("superpod", **spec))
        for w in workers:
            rec = {"instance": name, **run_one(problem, w, args.time_limit, args.wall_cap)}
            records.append(rec)
            print(f"{name} workers {w:>2} ({rec['mode']}): {rec['plan_sha'][:12]} {rec['status']}"
                  f" dtime {rec['dtime']} wall {rec['wall_s']}s cpu {rec['cpu_s']}s"
                  + (f" CUT {rec['cut_short']}" if rec["cut_short"] else ""), flush=True)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    out.write_text(json.dumps({
        "tag": args.tag, "machine": platform.platform(), "cpu_count": os.cpu_count(),
        "cores_usable": affinity, "python": platform.python_version(),
        "ortools": _ortools_version(), "time_limit": args.time_limit,
        "records": records,
    }, indent=1) + "\n")
    print(f"wrote {out}")


def _ortools_version() -> str:
    import ortools

    return ortools.__version__


def compare(paths: list[str]) -> int:
    """Print per instance and mode the distinct plan hashes over all files; 1 if any differ."""
    shas: dict[tuple[str, str], set[str]] = {}
    runs: dict[tuple[str, str], list[str]] = {}
    for path in paths:
        data = json.loads(Path(path).read_text())
        for r in data["records"]:
            key = (r["instance"], r["mode"])
            shas.setdefault(key, set()).add(r["plan_sha"])
            runs.setdefault(key, []).append(f"{data.get('tag') or path}:{r['workers']}")
    same = True
    for (instance, kind), found in sorted(shas.items()):
        ok = len(found) == 1
        same &= ok
        print(f"{instance:<14} {kind:<10} {'same' if ok else 'DIFFERENT'}: {len(found)} plan(s)"
              f" over {len(runs[(instance, kind)])} runs ({', '.join(runs[(instance, kind)])})")
    return 0 if same else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="1,3,4,8,16")
    parser.add_argument("--time-limit", type=float, default=30.0, help="deterministic units")
    parser.add_argument("--wall-cap", type=float, default=600.0)
    parser.add_argument("--overload", action="store_true", help="also the 1,024-node 120 % case")
    parser.add_argument("--tag", default="")
    parser.add_argument("--output", default="benchmarks/results/parallel.json")
    parser.add_argument("--compare", nargs="+", metavar="JSON", help="compare result files")
    args = parser.parse_args()
    if args.compare:
        sys.exit(compare(args.compare))
    measure(args)


if __name__ == "__main__":
    main()
