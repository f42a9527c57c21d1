"""Defragmentation over time: replay at 1.3× load with and without ``--defrag`` (issue 20).

Three clusters and traces, each replayed by the Volcano mirror without defrag and with each
``--policies`` entry (by default ``every=1``, a defrag call after every engine call whose
queue holds a job blocked by fragmentation only, with moved jobs restarting from scratch, and
the same with ``restart=keep``):

* ``superpod-1k``: the ``superpod`` preset at 1,024 DGX nodes, a synthetic trace of ``--jobs``
  gangs from the superpod mix (70 % hard at their tight tier, 20 % partitioned), Poisson
  arrivals at ``--load`` offered load, log-normal durations (median ``--duration``);
* ``lingjun``: the ``lingjun`` preset (847 hosts, leaves of 2–8), the same trace shape, Lingjun
  mix;
* ``superpod-1k+trees``, ``lingjun+trees``: the same with each hard multi-pod job at tier ≥ 2
  turned into a depth-3 gang tree (two halves hard one tier lower, four SubGroups);
* ``openb``: FGD's shape (``bench_replay_openb.py``): the ``alibaba`` preset (1,213 GPU nodes),
  the openb default trace tuned to ``--load`` × the cluster's GPUs (shared GPUs as ``milli``),
  one arrival per second, no departures, cycles of 20 arrivals, one attempt per job
  (``max_wait=0``: a job not placed in its cycle, defrag included, is dropped). Its figure is
  the final allocation ratio (wait is 0 by construction).

Every cycle's plan, defrag plans included, is checked. Printed per trace and policy: mean
utilisation (allocation ratio over time), wait p50/p95/mean, job moves and moves per day, jobs
moved, GPU-hours lost to moves, defrag calls and their seconds; the JSON record goes to
``--output``.

    PYTHONPATH=src .venv/bin/python benchmarks/bench_replay_defrag.py [--seeds 1] [--jobs 150]

``--merge PART.json`` (repeatable) replays nothing: it adds the rows of records this script
wrote (parts run apart) to the ``--output`` record, each row and its settings tagged with the
part's file name; a row of the same trace, seed and policy (settings: of the same part name) as
one already there replaces it.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

KEYS = ("jobs", "jobs_started", "jobs_dropped", "final_allocation_ratio", "mean_utilisation",
        "wait_mean", "wait_p50", "wait_p95",
        "end_time", "cycles", "defrag_calls", "defrag_admitted", "moved_jobs",
        "moved_jobs_distinct", "moved_pods", "moves_per_day", "lost_gpu_hours_moves",
        "lost_gpu_hours", "defrag_seconds_total", "mean_domain_tier", "defrag_calls_skipped")


# below this a figure is the same (the summation order of floats differs between runs)
TIE = 1e-9


def as_tree(job):
    """``job`` (one task of P pods, P % 4 == 0, hard at tier t ≥ 2) as a depth-3 gang tree: two
    GangGroups hard at tier t − 1, each of two SubGroups of P/4 pods; the job stays hard at t."""
    from toposolve.core.instance import GangGroup, LabelSelector, NetworkTopology, SubGroupPolicy

    task, tier = job.tasks[0], job.network_topology.highest_tier_allowed
    leaves = [("g0", "a"), ("g0", "b"), ("g1", "c"), ("g1", "d")]
    size = task.replicas // 4
    return job.model_copy(update={
        "tasks": [task.model_copy(update={"name": f"{task.name}-{leaf}", "replicas": size,
                                          "labels": {**task.labels, "sg": leaf}})
                  for _, leaf in leaves],
        "subgroup_policies": [SubGroupPolicy(
            name=f"sg-{leaf}", sub_group_size=size, parent=group, match_label_keys=["sg"],
            label_selector=LabelSelector(match_labels={"sg": leaf})) for group, leaf in leaves],
        "gang_groups": [GangGroup(name=g, network_topology=NetworkTopology(
            mode="hard", highest_tier_allowed=tier - 1)) for g in ("g0", "g1")]})


def with_trees(trace):
    """The trace with every unpartitioned job of one task of ≥ 8 pods (a multiple of 4) hard at
    tier ≥ 2 turned into a gang tree (:func:`as_tree`)."""
    for tj in trace.jobs:
        job, nt = tj.job, tj.job.network_topology
        if (len(job.tasks) == 1 and job.tasks[0].partition is None and nt is not None
                and nt.mode == "hard" and (nt.highest_tier_allowed or 0) >= 2
                and job.tasks[0].replicas >= 8 and job.tasks[0].replicas % 4 == 0):
            tj.job = as_tree(job)
    return trace


def workload(name: str, seed: int, args):
    """The cluster, the trace and the replay's ``until`` for one trace name (``+trees``: with
    gang trees, :func:`with_trees`)."""
    if name.endswith("+trees"):
        cluster, trace, shape = workload(name.removesuffix("+trees"), seed, args)
        return cluster, with_trees(trace), shape
    from toposolve.generate import generate
    from toposolve.sim.replay.synthetic import synthetic_trace

    if name == "openb":
        from toposolve.formats.trace.openb import openb_trace
        from toposolve.sim.replay.traces import cluster_gpus

        cluster = generate("alibaba", load=0.0, seed=0)
        trace = openb_trace(timing="sequence", inflate=args.load, gpu_sharing="milli",
                            capacity=cluster_gpus(cluster), seed=seed)
        return cluster, trace, {"cycle": 20, "max_wait": 0}
    preset, options = {"superpod-1k": ("superpod", {"nodes": 1024}),
                       "lingjun": ("lingjun", {})}[name]
    cluster = generate(preset, load=0.0, seed=seed, **options)
    trace = synthetic_trace(cluster, jobs=args.jobs, load=args.load, duration=args.duration,
                            mix=preset, partitioned=0.2, hard=0.7, soft=0.05, seed=seed)
    return cluster, trace, {"cycle": args.cycle}


def run_trace(name: str, seed: int, args) -> list[dict]:
    from toposolve.sim.replay import replay

    cluster, trace, shape = workload(name, seed, args)
    rows = []
    for policy in ["none", *args.policies.split(";")]:
        start, cpu = time.perf_counter(), time.process_time()
        record = replay(cluster, trace, "volcano", seed=seed, **shape,
                        defrag=None if policy == "none" else policy)
        row = {"trace": name, "seed": seed, "policy": policy,
               "wall_s": time.perf_counter() - start, "cpu_s": time.process_time() - cpu,
               **{k: record.summary[k] for k in KEYS}, "outcome": outcome(record)}
        rows.append(row)
        print(line(row), flush=True)
    return rows


def outcome(record) -> str:
    """A digest of what the replay decided for every job (starts, ends, moves, lost work):
    two policies with the same digest had the same outcome (``retry=changed`` against
    ``always``)."""
    import hashlib

    keys = ("job", "status", "start", "end", "starts", "moves", "lost_gpu_seconds")
    rows = [[j[k] for k in keys] for j in record.jobs]
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:16]


def hours(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds / 3600:.2f}"


def line(row: dict) -> str:
    return (f"{row['trace']:12s} seed {row['seed']} {row['policy']:24s} util "
            f"{row['mean_utilisation']:.2%} final {row['final_allocation_ratio']:.2%} dropped "
            f"{row['jobs_dropped']}  wait p50/p95/mean {hours(row['wait_p50'])}/"
            f"{hours(row['wait_p95'])}/{hours(row['wait_mean'])} h  moves {row['moved_jobs']} "
            f"({row['moves_per_day']:.1f}/day, {row['moved_jobs_distinct']} jobs, "
            f"{row['lost_gpu_hours_moves']:.1f} GPU-h lost)  admitted {row['defrag_admitted']} "
            f"in {row['defrag_calls']} calls ({row['defrag_seconds_total']:.0f} s, "
            f"{row['defrag_calls_skipped']} skipped)  outcome {row['outcome']}  "
            f"wall {row['wall_s']:.0f} s cpu {row['cpu_s']:.0f} s")


def verdict(rows: list[dict]) -> list[dict]:
    """Per trace, seed and policy: whether p95 wait, mean utilisation (the time-weighted
    allocation ratio) or the final allocation ratio beat no defrag."""
    base = {(r["trace"], r["seed"]): r for r in rows if r["policy"] == "none"}
    out = []
    for r in rows:
        if r["policy"] == "none":
            continue
        b = base[(r["trace"], r["seed"])]
        out.append({"trace": r["trace"], "seed": r["seed"], "policy": r["policy"],
                    "p95_wait_better": (r["wait_p95"] or 0) < (b["wait_p95"] or 0) - TIE,
                    "utilisation_better": r["mean_utilisation"] > b["mean_utilisation"] + TIE,
                    "final_allocation_better": (r["final_allocation_ratio"]
                                                > b["final_allocation_ratio"] + TIE),
                    "moves_per_day": r["moves_per_day"]})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", default="superpod-1k,lingjun,openb")
    parser.add_argument("--policies", default="every=1;every=1,restart=keep",
                        help="';'-separated --defrag policies replayed beside no defrag")
    parser.add_argument("--jobs", type=int, default=150, help="gangs per synthetic trace")
    parser.add_argument("--load", type=float, default=1.3)
    parser.add_argument("--duration", default="4h", help="median synthetic job duration")
    parser.add_argument("--cycle", default="5m", help="synthetic traces' cycle")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--output", default=str(Path(__file__).parent / "results"
                                                / "replay_defrag.json"))
    parser.add_argument("--merge", action="append", default=[], metavar="PART",
                        help="merge this record (a part run apart) into --output; no replay")
    args = parser.parse_args()
    if args.merge:
        merge(Path(args.output), [Path(p) for p in args.merge])
        return
    rows: list[dict] = []
    for seed in range(args.seed, args.seed + args.seeds):
        for name in args.traces.split(","):
            rows += run_trace(name, seed, args)
            write_record(args, rows)  # after every trace: a run cut short keeps what it did
    for v in verdict(rows):
        print(f"{v['trace']:12s} seed {v['seed']} {v['policy']:24s} p95 wait better: "
              f"{v['p95_wait_better']}, utilisation better: {v['utilisation_better']}, "
              f"final allocation better: {v['final_allocation_better']}, "
              f"{v['moves_per_day']:.1f} moves/day")
    print(f"record -> {args.output}")


def merge(output: Path, parts: list[Path]) -> None:
    """Add the rows and settings of the ``parts`` records to the ``output`` record (created if
    absent); rows of the same trace, seed and policy are replaced; the verdict is recomputed."""
    record = json.loads(output.read_text()) if output.exists() else {
        "benchmark": "replay_defrag", "note": "merged runs (parts)", "settings": [], "rows": []}
    if not isinstance(record["settings"], list):  # a single run's record becomes the first part
        record["settings"] = [{**record["settings"], "part": output.name}]
        record["rows"] = [{**r, "part": output.name} for r in record["rows"]]
    for path in parts:
        part = json.loads(path.read_text())
        new = {(r["trace"], r["seed"], r["policy"]): {**r, "part": path.name}
               for r in part["rows"]}
        record["rows"] = [r for r in record["rows"]
                          if (r["trace"], r["seed"], r["policy"]) not in new] + list(new.values())
        record["settings"] = [p for p in record["settings"] if p.get("part") != path.name] + [
            {**part["settings"], "part": path.name}]
        print(f"{path}: {len(new)} rows -> {output}")
    record["verdict"] = verdict(record["rows"])
    output.write_text(json.dumps(record, indent=1) + "\n")


def write_record(args, rows: list[dict]) -> None:
    record = {"benchmark": "replay_defrag", "machine": platform.platform(),
              "python": platform.python_version(), "settings": vars(args), "rows": rows,
              "verdict": verdict(rows)}
    Path(args.output).write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
