"""CP-SAT's full defragmentation model with the waves in it, against the same model without.

On the NVL72 family of ``bench_defrag.py`` at ``--nodes`` (one ``maxUnavailable: 1`` budget per
running job, as ``--budgets 1``), defrag with ``--max-waves N`` is made to decide in the full
model (``full_model``: the master's plan is never kept). Then once with the wave variables
(``engines/defrag/wave_model.py``, ``full_model="waves"``) and once without them
(``"one-wave"``: the full model of one wave, the budgets summed over N waves, its plan
sequenced after). Per run: admitted, moved jobs/pods,
waves, status, bound, wall and CPU seconds, the full model's stages. ``docs/defrag.md``, "Waves".

    PYTHONPATH=src .venv/bin/python benchmarks/bench_defrag_wave_model.py [--nodes 144]
        [--max-waves 4] [--time-limit 60] [--output PATH]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

from bench_defrag import FAMILIES, with_budgets

from toposolve.defrag import defrag
from toposolve.generate import generate
from toposolve.generate.defrag import fragmented
from toposolve.report.tables import format_table


def _run(inst, target: str, waves: int, limit: float, in_model: bool) -> dict:
    wall, cpu = time.perf_counter(), time.process_time()
    plan = defrag(inst, [target], time_limit=limit, max_waves=waves,
                  full_model="waves" if in_model else "one-wave")
    d = plan.stats["defrag"]
    full = plan.stats["stages"][2:]  # after the master's two stages
    return {"wave_model": in_model, "path": plan.stats.get("path"),
            "admitted": bool(d["admitted"]), "moved_jobs": len(d["moved_jobs"]),
            "move_cost": d["move_cost"], "moved_pods": d["moved_pods"],
            "waves": d.get("waves"), "status": d["status"], "bound": d["bound"],
            "wall_s": round(time.perf_counter() - wall, 3),
            "cpu_s": round(time.process_time() - cpu, 3),
            "full_model_stages": [{k: s.get(k) for k in ("stage", "status", "value",
                                                         "deterministic_time")} for s in full]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="144", help="comma-separated node counts")
    parser.add_argument("--max-waves", type=int, default=4)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--output", default="benchmarks/results/defrag_wave_model.json")
    args = parser.parse_args()
    preset, _, pods, gpus, opts = FAMILIES["nvl72"]
    rows, records = [], []
    for nodes in (int(n) for n in args.nodes.split(",")):
        case = fragmented(generate(preset, seed=0, nodes=nodes), target_pods=pods,
                          target_gpus=gpus, seed=0, **{"occupancy": 0.5, **opts})
        inst = with_budgets(case.instance, 1)
        for in_model in (True, False):
            r = _run(inst, case.target, args.max_waves, args.time_limit, in_model)
            records.append({"nodes": nodes, **r})
            rows.append([nodes, "yes" if in_model else "no", "yes" if r["admitted"] else "no",
                         f"{r['moved_jobs']}/{r['moved_pods']}", r["move_cost"], r["waves"],
                         r["status"], r["bound"], r["wall_s"], r["cpu_s"]])
    head = ["nodes", "waves in model", "admitted", "moved jobs/pods", "cost", "waves", "status",
            "bound", "wall s", "cpu s"]
    print(format_table([head, *([str(c) for c in row] for row in rows)], left=(1, 2, 6)))
    out = {"benchmark": "defrag-wave-model", "max_waves": args.max_waves,
           "time_limit": args.time_limit, "machine": platform.platform(), "cases": records}
    Path(args.output).write_text(json.dumps(out, indent=1) + "\n")
    print(f"-> {args.output}")


if __name__ == "__main__":
    main()
