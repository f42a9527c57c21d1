"""Defragmentation on the rack family whose fewest moves are known (``generate/defrag.py``).

Per size and shape: CP-SAT's moved jobs and move cost vs the greedy's vs the known minimum,
CP-SAT's status and whether it proved minimality, wall and CPU seconds of each engine (the
whole ``toposolve.defrag`` call: compile, engine, plan, checker). Every plan is checked.
Target (issue 20): proven minimal at 1,024 nodes / ~300 running jobs in ≤ 10 s.

    .venv/bin/python benchmarks/bench_defrag.py [--time-limit 10] [--output PATH]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

from toposolve.defrag import defrag
from toposolve.generate.defrag import TARGET, defrag_family
from toposolve.report.tables import format_table

# (racks of 8 nodes, shape): k pods of whole nodes; lo-hi full nodes per rack
CASES = [
    (8, dict(k=8, lo=1, hi=1)), (32, dict(k=8, lo=1, hi=1)), (128, dict(k=8, lo=1, hi=1)),
    (8, dict(k=6, lo=3, hi=4)), (32, dict(k=6, lo=3, hi=4)), (128, dict(k=6, lo=3, hi=4)),
    # no one-job node: every node to free costs 2-4 moves
    *((r, dict(k=8, lo=1, hi=1, weights=(0, 0.5, 0.3, 0.2))) for r in (8, 32, 128)),
    *((r, dict(k=6, lo=4, hi=5, weights=(0, 0.5, 0.3, 0.2))) for r in (8, 32, 128)),
]


def _run(instance, engine: str, limit: float) -> dict:
    wall, cpu = time.perf_counter(), time.process_time()
    plan = defrag(instance, [TARGET], engine=engine, time_limit=limit)  # checked inside
    d = plan.stats["defrag"]
    return {"moved_jobs": len(d["moved_jobs"]), "move_cost": d["move_cost"],
            "status": d["status"], "proven": d["proven_minimal"],
            "admitted": d["admitted"] == [TARGET], "path": plan.stats.get("path"),
            "wall_s": round(time.perf_counter() - wall, 3),
            "cpu_s": round(time.process_time() - cpu, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default=str(Path(__file__).parent / "results/defrag.json"))
    args = parser.parse_args()
    rows, records = [], []
    for racks, shape in CASES:
        fam = defrag_family(racks, seed=args.seed, **shape)
        cp, gr = _run(fam.instance, "cpsat", args.time_limit), _run(fam.instance, "greedy", 0)
        records.append({"nodes": racks * 8, "running_jobs": fam.running_jobs, **shape,
                        "known_minimum": fam.minimum, "cpsat": cp, "greedy": gr})
        fills = "" if "weights" not in shape else " no 8-fill"
        rows.append([racks * 8, fam.running_jobs, f"k={shape['k']} full={shape['lo']}-"
                     f"{shape['hi']}{fills}", fam.minimum, cp["moved_jobs"], gr["moved_jobs"],
                     cp["status"] + (" proven" if cp["proven"] else ""), cp["wall_s"],
                     cp["cpu_s"], gr["wall_s"], gr["cpu_s"]])
    head = ["nodes", "jobs", "shape", "minimum", "cpsat moved", "greedy moved", "cpsat status",
            "cpsat wall s", "cpsat cpu s", "greedy wall s", "greedy cpu s"]
    print(format_table([head, *([str(c) for c in row] for row in rows)], left=(2, 6)))
    out = {"benchmark": "defrag", "time_limit": args.time_limit, "seed": args.seed,
           "machine": platform.platform(), "python": platform.python_version(),
           "cases": records}
    Path(args.output).write_text(json.dumps(out, indent=1) + "\n")
    print(f"-> {args.output}")


if __name__ == "__main__":
    main()
