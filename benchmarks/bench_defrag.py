"""Defragmentation on the rack family whose fewest moves are known (``generate/defrag.py``).

Per size and shape: CP-SAT's moved jobs and move cost vs the greedy's vs the known minimum,
CP-SAT's status and whether it proved minimality, wall and CPU seconds of each engine (the
whole ``toposolve.defrag`` call: compile, engine, plan, checker). Every plan is checked.
Targets (issue 20): proven minimal at 1,024 nodes / ~300 running jobs in ≤ 10 s, at 2,048
nodes / ~700 running jobs in ≤ 30 s.

``--families``: realistic clusters (superpod-1k, Lingjun, NVL72) fragmented by small running
gangs (:func:`~toposolve.generate.defrag.fragmented`) so a pending hard tier-1 gang fits no
leaf although enough GPUs are idle; per family and seed, the jobs moved by CP-SAT (the optimum
when proven) vs the greedy baseline for the same target, and beside them what the Volcano
mirror's preemption (``evict="preempt"``, ``preemption`` profile, the target ``high`` over
running ``low`` jobs) evicts to admit it: pods and broken gangs (``docs/defrag.md``, "Value").

    .venv/bin/python benchmarks/bench_defrag.py [--time-limit 10] [--output PATH]
    .venv/bin/python benchmarks/bench_defrag.py --families [--seeds 0,1,2,3,4] [--output PATH]
    .venv/bin/python benchmarks/bench_defrag.py --repair [--seeds 0,1,2] [--fail-rate 0.03]

``--repair``: NVL72 racks (:func:`~toposolve.generate.repair.nvl72_repair`: one 8-tray and one
4-tray rack-limited gang per rack, one-tray jobs in the rest, 0, 1, 2 or 0-2 idle trays per
rack) with random tray failures; per case the gangs hit, those with a spare in their rack, those
repaired in place (no healthy pod moved), moved whole or not repaired, and the other jobs each
engine moves. Goal (issue 20): every gang with a spare is repaired in place.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

from toposolve.core.instance import LabelSelector, PodDisruptionBudget
from toposolve.defrag import defrag
from toposolve.generate import generate
from toposolve.generate.defrag import TARGET, defrag_family, fragmented
from toposolve.generate.repair import nvl72_repair
from toposolve.report.tables import format_table
from toposolve.solve import solve

# (racks of 8 nodes, shape): k pods of whole nodes; lo-hi full nodes per rack
RACKS = (8, 32, 128, 256)  # 256 racks: the 2,048-node target (≤ 30 s)
CASES = [
    *((r, dict(k=8, lo=1, hi=1)) for r in RACKS),
    *((r, dict(k=6, lo=3, hi=4)) for r in RACKS),
    # no one-job node: every node to free costs 2-4 moves
    *((r, dict(k=8, lo=1, hi=1, weights=(0, 0.5, 0.3, 0.2))) for r in RACKS),
    *((r, dict(k=6, lo=4, hi=5, weights=(0, 0.5, 0.3, 0.2))) for r in RACKS),
]


# family: (preset, generate kwargs, target pods, GPUs per pod, fragmented() options)
FAMILIES = {
    "superpod-1k": ("superpod", dict(nodes=1024), 16, 8, {}),
    "lingjun": ("lingjun", {}, 4, 8, {}),
    # a larger target on a busier Lingjun: with 4 pods some leaf is always blocked by one job
    "lingjun-busy": ("lingjun", {}, 6, 8, dict(occupancy=0.7)),
    "nvl72": ("nvl72", dict(nodes=576), 12, 4, dict(pod_gpus=(1,), pod_weights=(1.0,))),
}


def run_defrag(instance, engine: str, limit: float, target: str = TARGET) -> dict:
    wall, cpu = time.perf_counter(), time.process_time()
    plan = defrag(instance, [target], engine=engine, time_limit=limit)  # checked inside
    d = plan.stats["defrag"]
    return {"moved_jobs": len(d["moved_jobs"]), "move_cost": d["move_cost"],
            "moved_pods": d["moved_pods"], "status": d["status"],
            "proven": d["proven_minimal"],
            "admitted": d["admitted"] == [target], "path": plan.stats.get("path"),
            "wall_s": round(time.perf_counter() - wall, 3),
            "cpu_s": round(time.process_time() - cpu, 3)}


def _preempt(instance, target: str) -> dict:
    wall, cpu = time.perf_counter(), time.process_time()
    plan = solve(instance, "volcano", profile="preemption", evict="preempt")  # checked
    ev = plan.stats["eviction"]
    placed = any(j.job == target and j.placed for j in plan.jobs)
    return {"admitted": placed, "evicted_pods": ev["evicted_pods"],
            "victim_jobs": ev["victim_jobs"], "broken_gangs": ev["broken_gangs"],
            "wall_s": round(time.perf_counter() - wall, 3),
            "cpu_s": round(time.process_time() - cpu, 3)}


def families(args) -> None:
    seeds = [int(s) for s in args.seeds.split(",")]
    rows, records = [], []
    for family in args.family or list(FAMILIES):
        preset, gen, pods, gpus, opts = FAMILIES[family]
        opts = {"occupancy": 0.5, **opts}
        if args.occupancy is not None:
            opts["occupancy"] = args.occupancy
        for seed in seeds:
            case = fragmented(generate(preset, seed=seed, **gen), target_pods=pods,
                              target_gpus=gpus, seed=seed, **opts)
            cp = run_defrag(case.instance, "cpsat", args.time_limit, case.target)
            gr = run_defrag(case.instance, "greedy", 0, case.target)
            pre = _preempt(case.instance, case.target)
            ratio = gr["moved_jobs"] / cp["moved_jobs"] if cp["moved_jobs"] else None
            records.append({"family": family, "preset": preset, **gen, "seed": seed,
                            "occupancy": opts["occupancy"],
                            "nodes": len(case.instance.nodes), "leaves": case.leaves,
                            "running_jobs": case.running_jobs,
                            "running_pods": case.running_pods, "idle_gpus": case.idle_gpus,
                            "target_pods": pods, "target_gpus_per_pod": gpus,
                            "cpsat": cp, "greedy": gr, "ratio": ratio, "preempt": pre})
            cp_cell = f"{cp['moved_jobs']}/{cp['moved_pods']}"
            cp_cell += " proven" if cp["proven"] else f" {cp['status']}"
            if not (cp["admitted"] and gr["admitted"]):
                cp_cell += " (not admitted)"
            pre_cell = f"{pre['evicted_pods']}/{pre['broken_gangs']}"
            pre_cell += "" if pre["admitted"] else " (not admitted)"
            rows.append([family, seed, len(case.instance.nodes), case.running_jobs,
                         f"{pods}x{gpus}", cp_cell, f"{gr['moved_jobs']}/{gr['moved_pods']}",
                         "-" if ratio is None else f"{ratio:.2f}", pre_cell,
                         cp["wall_s"], gr["wall_s"], pre["wall_s"]])
    head = ["family", "seed", "nodes", "running jobs", "target", "cpsat moved jobs/pods",
            "greedy moved jobs/pods", "ratio (jobs)", "preempt evicted pods/broken gangs",
            "cpsat s", "greedy s", "preempt s"]
    print(format_table([head, *([str(c) for c in row] for row in rows)], left=(0, 4, 5, 6, 8)))
    out = {"benchmark": "defrag-families", "time_limit": args.time_limit, "seeds": seeds,
           "machine": platform.platform(), "python": platform.python_version(), "cases": records}
    Path(args.output).write_text(json.dumps(out, indent=1) + "\n")
    print(f"-> {args.output}")


def _repair_run(case, engine: str, limit: float) -> dict:
    wall, cpu = time.perf_counter(), time.process_time()
    plan = defrag(case.instance, fail=case.failed, engine=engine, time_limit=limit)  # checked
    d = plan.stats["defrag"]
    gangs = set(case.hit)
    repaired = [k for k in d["repaired"] if k in gangs]
    whole = [k for k in repaired if k in d["moved_jobs"]]
    others = [k for k in d["moved_jobs"] if k not in d["repaired"]]
    return {"repaired": len(repaired), "in_place": len(repaired) - len(whole),
            "moved_whole": len(whole), "unrepaired": len(gangs) - len(repaired),
            "singles_repaired": len(d["repaired"]) - len(repaired),
            "other_jobs_moved": len(others), "move_cost": d["move_cost"],
            "moved_pods": d["moved_pods"], "status": d["status"],
            "proven": d["proven_minimal"], "path": plan.stats.get("path"),
            "goal": all(k in d["repaired"] and k not in d["moved_jobs"]
                        for k in case.with_spare),
            "wall_s": round(time.perf_counter() - wall, 3),
            "cpu_s": round(time.process_time() - cpu, 3)}


def repairs(args) -> None:
    seeds = [int(s) for s in args.seeds.split(",")]
    rows, records = [], []
    for spares in ((0,), (1,), (2,), (0, 1, 2)):
        for seed in seeds:
            case = nvl72_repair(args.racks, spares=spares, fail_rate=args.fail_rate, seed=seed)
            cp = _repair_run(case, "cpsat", args.time_limit)
            gr = _repair_run(case, "greedy", 0)
            records.append({"racks": args.racks, "spares": list(spares), "seed": seed,
                            "fail_rate": args.fail_rate, "failed_trays": len(case.failed),
                            "gangs": case.gangs, "singles": case.singles,
                            "gangs_hit": len(case.hit), "with_spare": len(case.with_spare),
                            "cpsat": cp, "greedy": gr})
            rows.append(["-".join(map(str, spares)), seed, len(case.failed), len(case.hit),
                         len(case.with_spare),
                         f"{cp['in_place']}/{cp['moved_whole']}/{cp['unrepaired']}",
                         f"{gr['in_place']}/{gr['moved_whole']}/{gr['unrepaired']}",
                         f"{cp['other_jobs_moved']}" + (" proven" if cp["proven"] else
                                                        f" {cp['status']}"),
                         gr["other_jobs_moved"], "yes" if cp["goal"] and gr["goal"] else "NO",
                         cp["wall_s"], gr["wall_s"]])
    head = ["spares/rack", "seed", "failed trays", "gangs hit", "with spare",
            "cpsat in place/whole/not", "greedy in place/whole/not", "cpsat others moved",
            "greedy others moved", "goal", "cpsat s", "greedy s"]
    print(format_table([head, *([str(c) for c in row] for row in rows)], left=(0, 5, 6, 7)))
    out = {"benchmark": "defrag-repair", "time_limit": args.time_limit, "seeds": seeds,
           "machine": platform.platform(), "python": platform.python_version(),
           "cases": records}
    Path(args.output).write_text(json.dumps(out, indent=1) + "\n")
    print(f"-> {args.output}")


def with_budgets(instance, max_unavailable: int):
    """``instance`` with one PodDisruptionBudget per running job (its pods by a label of their
    own, ``maxUnavailable``), as a platform guarding every training job would."""
    inst = instance.model_copy(deep=True)
    for job in inst.jobs:
        if any(task.running for task in job.tasks):
            for task in job.tasks:
                task.labels = {**task.labels, "bench/job": job.name}
            inst.disruption_budgets.append(PodDisruptionBudget(
                namespace=job.namespace, name=f"pdb-{job.name}", max_unavailable=max_unavailable,
                selector=LabelSelector(match_labels={"bench/job": job.name})))
    return inst


def budget_waves(args) -> None:
    """The families with a budget on every running job: one wave against ``--max-waves``."""
    seeds = [int(s) for s in args.seeds.split(",")]
    rows, records = [], []
    for family in args.family or list(FAMILIES):
        preset, gen, pods, gpus, opts = FAMILIES[family]
        for seed in seeds:
            case = fragmented(generate(preset, seed=seed, **gen), target_pods=pods,
                              target_gpus=gpus, seed=seed, **{"occupancy": 0.5, **opts})
            inst = with_budgets(case.instance, args.budgets)
            for waves in (1, args.max_waves):
                wall = time.perf_counter()
                plan = defrag(inst, [case.target], time_limit=args.time_limit, max_waves=waves)
                d = plan.stats["defrag"]
                record = {"family": family, "seed": seed, "max_waves": waves,
                          "admitted": bool(d["admitted"]), "moved_jobs": len(d["moved_jobs"]),
                          "moved_pods": d["moved_pods"], "waves": d.get("waves", 1),
                          "proven": d["proven_minimal"], "path": plan.stats.get("path"),
                          "wall_s": round(time.perf_counter() - wall, 3)}
                records.append(record)
                rows.append([family, seed, waves, "yes" if record["admitted"] else "no",
                             f"{record['moved_jobs']}/{record['moved_pods']}", record["waves"],
                             "proven" if record["proven"] else d["status"], record["wall_s"]])
    head = ["family", "seed", "max waves", "admitted", "moved jobs/pods", "waves", "status",
            "wall s"]
    print(format_table([head, *([str(c) for c in row] for row in rows)], left=(0, 3, 6)))
    out = {"benchmark": "defrag-budget-waves", "max_unavailable": args.budgets,
           "time_limit": args.time_limit, "machine": platform.platform(), "cases": records}
    Path(args.output).write_text(json.dumps(out, indent=1) + "\n")
    print(f"-> {args.output}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default=None)
    parser.add_argument("--families", action="store_true",
                        help="the realistic fragmented families instead of the rack family")
    parser.add_argument("--family", action="append", choices=list(FAMILIES),
                        help="with --families: only this family (repeatable)")
    parser.add_argument("--seeds", default="0,1,2,3,4", help="with --families or --repair")
    parser.add_argument("--repair", action="store_true",
                        help="NVL72 racks with failed trays: repairs by CP-SAT and the greedy")
    parser.add_argument("--racks", type=int, default=32, help="with --repair")
    parser.add_argument("--fail-rate", type=float, default=0.03,
                        help="with --repair: fraction of the trays that fail")
    parser.add_argument("--occupancy", type=float, default=None,
                        help="with --families: busy GPU fraction before the leaves are broken "
                        "(default: the family's, 0.5 but lingjun-busy 0.7)")
    parser.add_argument("--budgets", type=int, default=None, metavar="K",
                        help="the families with a maxUnavailable K budget on every running job, "
                        "planned in one wave and in --max-waves")
    parser.add_argument("--max-waves", type=int, default=4, help="with --budgets")
    args = parser.parse_args()
    results = Path(__file__).parent / "results"
    if args.budgets is not None:
        args.output = args.output or str(results / "defrag_budget_waves.json")
        budget_waves(args)
        return
    if args.repair:
        args.output = args.output or str(results / "defrag_repair.json")
        repairs(args)
        return
    if args.families:
        args.output = args.output or str(results / "defrag_families.json")
        families(args)
        return
    args.output = args.output or str(results / "defrag.json")
    rows, records = [], []
    for racks, shape in CASES:
        fam = defrag_family(racks, seed=args.seed, **shape)
        cp = run_defrag(fam.instance, "cpsat", args.time_limit)
        gr = run_defrag(fam.instance, "greedy", 0)
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
