"""Rank order that follows the network (issue 24, docs/ranks.md): index order and Volcano's
rank-order rule (PR #4312) against the DFS-based rank assignment, on the plans of the Volcano
mirror and of CP-SAT.

Clusters: ``superpod`` (1,024 nodes), ``lingjun`` (the real 847-host Clos) and ``nvl72``
(4-GPU trays), generated at the default load, seed 0. Every job with at least two pods and
the same accelerators per pod gets an LLM-shaped ``toposolve.io/parallelism``: tp=8 and the
first pp of 8, 4 that leaves dp = GPUs / (8·pp) a whole number ≥ 4 (else the job stays one ring
over its pods). Per cluster and engine, summed over the ranked jobs: cross-leaf ring edges (PP
and DP edges, per rank, leaving a leaf domain), the largest DP-group span (tier) of any job, the
comm cost (profile defaults), in index order and ranked, and the slowest job's ranking time.
A third order, ``shuffled`` (the pods in a seeded random order, as a scheduler that ignores the
tree would number them), shows what ranking gains where pod order does not follow the network;
``volcano`` hands the same placement's ranks out by Volcano's rule (policy/volcano_ranks.py).
``--node-order shuffled`` lists the nodes in a seeded random order before solving (node index
is Volcano's stand-in for node IP, and engines bind in node order): a cluster whose IPs and
node list do not follow the tree. Its record goes to ``comm-shuffled-nodes.json``.

    .venv/bin/python benchmarks/bench_comm.py [--time-limit 10] [--node-order tree|shuffled]
        [--output benchmarks/results/comm.json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import toposolve
from toposolve.core.problem import compile_problem
from toposolve.generate import generate
from toposolve.policy.comm import layout_edges, measure
from toposolve.policy.ranks import comm_totals, compare_ranks, optimise, ranked_jobs
from toposolve.report.tables import format_table

CLUSTERS = (("superpod", 1024), ("lingjun", None), ("nvl72", None))


def llm_layout(pods: int, per_pod: int) -> str | None:
    """tp=8, pp 8 or 4, dp ≥ 4 over ``pods × per_pod`` GPUs; None when none fits."""
    world = pods * per_pod
    for pp in (8, 4):
        if world % (8 * pp) == 0 and world // (8 * pp) >= 4:
            return f"tp=8,pp={pp},dp={world // (8 * pp)}"
    return None


def annotate(instance: toposolve.Instance) -> int:
    """Give LLM-shaped layouts to the jobs that take one; returns how many did."""
    count = 0
    for job in instance.jobs:
        units = set(job.pod_accelerators())
        if job.replicas >= 2 and len(units) == 1 and min(units) > 0:
            text = llm_layout(job.replicas, units.pop())
            if text is not None:
                job.parallelism = text
                count += 1
    return count


def run_one(preset: str, nodes: int | None, engine: str, time_limit: float,
            node_order: str = "tree") -> dict:
    options = {"nodes": nodes} if nodes else {}
    instance = generate(preset, seed=0, **options)
    if node_order == "shuffled":
        order = np.random.default_rng(0).permutation(len(instance.nodes))
        instance.nodes = [instance.nodes[i] for i in order]
    annotated = annotate(instance)
    problem = compile_problem(instance)
    plan = toposolve.solve(instance, engine, time_limit=time_limit)
    jobs = compare_ranks(problem, plan)
    slowest = 0.0
    for pods in ranked_jobs(problem, plan):
        start = time.perf_counter()
        optimise(problem, pods)
        slowest = max(slowest, time.perf_counter() - start)
    totals = comm_totals(jobs)
    totals["shuffled"] = shuffled_totals(problem, plan)
    layouts = [j for j in jobs if j.layout.startswith("tp=")]
    return {"cluster": preset, "engine": engine, "node_order": node_order,
            "nodes": len(instance.nodes),
            "jobs_placed": plan.metrics["jobs_placed"], "annotated_jobs": annotated,
            "ranked_jobs": len(jobs), "ranked_layout_jobs": len(layouts),
            "all": totals, "layouts": comm_totals(layouts) if layouts else None,
            "slowest_job_s": round(slowest, 4)}


def shuffled_totals(problem, plan, seed: int = 0) -> dict:
    """Cross-leaf ring edges and comm cost summed with each job's pods in a seeded random order
    (one rank block per pod, as in index order)."""
    rng = np.random.default_rng(seed)
    edges_total, cost_total, spans = 0, 0.0, []
    for pods in ranked_jobs(problem, plan):
        order = rng.permutation(len(pods.nodes))
        node_of_block = pods.nodes[order]
        metrics = measure(problem.topology, node_of_block,
                          layout_edges(pods.layout, pods.per_pod))
        edges_total += metrics.cross_leaf_edges
        cost_total += metrics.cost
        if metrics.largest_dp_span is not None:
            spans.append(metrics.largest_dp_span)
    return {"cross_leaf_ring_edges": edges_total, "comm_cost": round(cost_total, 6),
            "largest_dp_span_tier": max(spans) if spans else None}


def _row(r: dict) -> list[str]:
    i, k, s = r["all"]["index"], r["all"]["ranked"], r["all"]["shuffled"]
    v = r["all"]["volcano"]
    drop = 1 - k["cross_leaf_ring_edges"] / max(1, i["cross_leaf_ring_edges"])
    vs_shuffled = 1 - k["cross_leaf_ring_edges"] / max(1, s["cross_leaf_ring_edges"])
    vs_volcano = 1 - k["cross_leaf_ring_edges"] / max(1, v["cross_leaf_ring_edges"])
    return [r["cluster"], r["engine"], str(r["jobs_placed"]), str(r["ranked_layout_jobs"]),
            f"{i['cross_leaf_ring_edges']} → {k['cross_leaf_ring_edges']} ({drop:.0%} fewer)",
            f"{s['cross_leaf_ring_edges']} → {k['cross_leaf_ring_edges']} "
            f"({vs_shuffled:.0%} fewer)",
            f"{v['cross_leaf_ring_edges']} → {k['cross_leaf_ring_edges']} "
            f"({vs_volcano:.0%} fewer)",
            f"{i['largest_dp_span_tier']} / {v['largest_dp_span_tier']} → "
            f"{k['largest_dp_span_tier']}",
            f"{i['comm_cost']:g} / {v['comm_cost']:g} → {k['comm_cost']:g}",
            f"{r['slowest_job_s']:.3f}"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--node-order", choices=("tree", "shuffled"), default="tree")
    ap.add_argument("--output", default=None, help="default: benchmarks/results/comm.json "
                                                   "(comm-shuffled-nodes.json when shuffled)")
    args = ap.parse_args()
    results = [run_one(preset, nodes, engine, args.time_limit, args.node_order)
               for preset, nodes in CLUSTERS for engine in ("volcano", "cpsat")]
    header = ["cluster", "engine", "jobs placed", "tp×pp×dp jobs", "cross-leaf ring edges",
              "vs shuffled", "vs Volcano rule",
              "largest DP span (index / Volcano → ranked)",
              "comm cost (index / Volcano → ranked)", "slowest job (s)"]
    print(format_table([header, *map(_row, results)], left={0, 1}))
    suffix = "" if args.node_order == "tree" else "-shuffled-nodes"
    path = Path(args.output or f"benchmarks/results/comm{suffix}.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"time_limit": args.time_limit, "results": results}, indent=1)
                    + "\n")
    print(f"-> {path}")


if __name__ == "__main__":
    main()
