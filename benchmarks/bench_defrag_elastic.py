"""Elastic targets: which pods make the minimum, greedy (searched or fixed rule) vs CP-SAT.

On the fragmented families of ``bench_defrag.py --families``, the target gang is made elastic:
beside its ``P`` pods of ``G`` GPUs (task ``w``) it gets ``P`` pods of ``ceil(R·G)`` GPUs (task
``small``, ``R`` = ``--ratio``, default 0.5), ``minAvailable`` ``P`` and no task minimum, so any
``P`` of its ``2P`` pods admit it.
Per family and seed: jobs/pods moved by CP-SAT (which searches the minimum), by the greedy
searching its candidate minimums (``engines/defrag/minimums.py``) and by the greedy with the
fixed rule only (``MAX_CANDIDATES = 1``, the behaviour before), and each one's wall seconds.
Every plan is checked (``toposolve.defrag``). ``docs/defrag.md``, "Elastic targets".

    PYTHONPATH=src .venv/bin/python benchmarks/bench_defrag_elastic.py [--family nvl72]
        [--seeds 0,1] [--time-limit 5] [--ratio 0.5] [--output PATH]
"""

from __future__ import annotations

import argparse
import json
import math
import platform
from pathlib import Path

from bench_defrag import FAMILIES, run_defrag

from toposolve.core.instance import Task
from toposolve.engines.defrag import minimums
from toposolve.generate import generate
from toposolve.generate.defrag import GPU, fragmented
from toposolve.report.tables import format_table


def _elastic(instance, target: str, gpus: int, ratio: float = 0.5):
    """``instance`` with the target (pods of ``gpus`` GPUs) given a ``small`` task
    (``ceil(ratio · gpus)`` GPUs per pod) and ``minAvailable`` its first task's pods."""
    inst = instance.model_copy(deep=True)
    job = next(j for j in inst.jobs if f"{j.namespace}/{j.name}" == target)
    first = job.tasks[0]
    small = str(math.ceil(ratio * gpus))
    job.tasks.append(Task(name="small", replicas=first.replicas, requests={GPU: small},
                          labels=dict(first.labels)))
    job.min_available = first.replicas
    return inst


def _cell(run: dict) -> str:
    if not run["admitted"]:
        return "not admitted"
    return f"{run['moved_jobs']}/{run['moved_pods']}" + (" proven" if run["proven"] else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", action="append", choices=list(FAMILIES))
    parser.add_argument("--seeds", default="0,1")
    parser.add_argument("--time-limit", type=float, default=5.0)
    parser.add_argument("--ratio", type=float, default=0.5,
                        help="GPUs of the second task's pods, as a fraction of the first's")
    parser.add_argument("--output", default=str(Path(__file__).parent / "results"
                                                / "defrag_elastic.json"))
    args = parser.parse_args()
    rows, records = [], []
    for family in args.family or list(FAMILIES):
        preset, gen, pods, gpus, opts = FAMILIES[family]
        for seed in (int(s) for s in args.seeds.split(",")):
            case = fragmented(generate(preset, seed=seed, **gen), target_pods=pods,
                              target_gpus=gpus, seed=seed, **{"occupancy": 0.5, **opts})
            inst = _elastic(case.instance, case.target, gpus, args.ratio)
            cp = run_defrag(inst, "cpsat", args.time_limit, case.target)
            searched = run_defrag(inst, "greedy", 0, case.target)
            kept = minimums.MAX_CANDIDATES
            minimums.MAX_CANDIDATES = 1  # the fixed rule only: the greedy before the search
            try:
                fixed = run_defrag(inst, "greedy", 0, case.target)
            finally:
                minimums.MAX_CANDIDATES = kept
            records.append({"family": family, "seed": seed, "target_pods": pods,
                            "small_gpus_per_pod": math.ceil(args.ratio * gpus),
                            "target_gpus_per_pod": gpus, "cpsat": cp, "greedy_search": searched,
                            "greedy_fixed_rule": fixed})
            small = math.ceil(args.ratio * gpus)
            rows.append([family, seed, f"{pods}x{gpus} + {pods}x{small}, min {pods}",
                         _cell(cp), _cell(searched), _cell(fixed), cp["wall_s"],
                         searched["wall_s"], fixed["wall_s"]])
    head = ["family", "seed", "target", "cpsat jobs/pods", "greedy search", "greedy fixed rule",
            "cpsat s", "search s", "fixed s"]
    print(format_table([head, *([str(c) for c in row] for row in rows)], left=(0, 2, 3, 4, 5)))
    out = {"benchmark": "defrag-elastic", "time_limit": args.time_limit, "ratio": args.ratio,
           "machine": platform.platform(), "python": platform.python_version(), "cases": records}
    Path(args.output).write_text(json.dumps(out, indent=1) + "\n")
    print(f"-> {args.output}")


if __name__ == "__main__":
    main()
