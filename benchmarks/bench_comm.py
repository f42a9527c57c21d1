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
    .venv/bin/python benchmarks/bench_comm.py --rank-timing    (the 1,024-node gang, 5 runs)

``--families`` (phase 2, docs/ranks.md section 6) runs the LLM families on busy clusters
instead: Volcano + index order, Volcano + Volcano's rank rule, Volcano + ranked, CP-SAT default
+ ranked and CP-SAT with the ``comm``, ``comm-dp``, ``comm-align``, ``comm-floor`` and ``comm-pp``
profiles + ranked with each profile's weights (``--profiles`` picks some, and adds any other
profile named or given by path, e.g. ``comm-joint``; record:
``benchmarks/results/comm_families.json``). Each run also reports the edge floor of its
placement (the fewest cross-leaf ring edges any rank order reaches, section 7), its span floor
at the profile's ``dp_span_from_level`` (section 8) and, for CP-SAT plans with the stages, the
``edge_floor`` and ``span_floor`` stages' values and proven bounds.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import toposolve
from toposolve.check.checker import check_plan
from toposolve.core.instance import (
    HyperNode,
    Job,
    Member,
    MemberSelector,
    NetworkTopology,
    Node,
    Task,
)
from toposolve.core.parallelism import parse_parallelism
from toposolve.core.problem import compile_problem
from toposolve.engines.common.capacity import fit_in
from toposolve.generate import generate
from toposolve.policy.comm import layout_edges, measure
from toposolve.policy.comm_stage import comm_jobs, job_pods, level_tiers, node_cells, ranked_groups
from toposolve.policy.edge_floor import plan_edge_floor
from toposolve.policy.placement_floor import placement_floor
from toposolve.policy.profiles import CommWeights, load_profile
from toposolve.policy.ranks import (
    JobPods,
    by_method,
    comm_totals,
    compare_ranks,
    optimise,
    plan_span_cap,
    ranked_jobs,
)
from toposolve.policy.span_floor import plan_span_floor
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


# ---- phase 2: LLM families on busy clusters (--families) -------------------------------------
# (cluster, generator options, background: "occupancy" = generate/occupancy.py, else "churn")
FAMILY_CLUSTERS = (("superpod", {"nodes": 1024}, "occupancy"), ("lingjun", {}, "churn"),
                   ("nvl72", {}, "occupancy"))
OCCUPANCY = 0.6  # share of the nodes the background keeps busy
QUEUE_SHARE = 0.8  # pending LLM GPUs as a share of the idle nodes' GPUs
DP_SIZES = (4, 8, 16, 32)
FAMILY_RUNS = (("volcano", None, "index"), ("volcano", None, "Volcano rule"),
               ("volcano", None, "ranked"), ("cpsat", "lexicographic", "ranked"),
               ("cpsat", "comm", "ranked"), ("cpsat", "comm-dp", "ranked"),
               ("cpsat", "comm-align", "ranked"), ("cpsat", "comm-floor", "ranked"),
               ("cpsat", "comm-pp", "ranked"))
FAMILY_METHOD = {"index": "index", "Volcano rule": "volcano", "ranked": "optimal"}


def churned(instance: toposolve.Instance, seed: int) -> toposolve.Instance:
    """Background for a generator without an ``occupancy`` option: Volcano places the
    generated queue, its bound gangs become running, then a seeded random half finish."""
    plan = toposolve.solve(instance, "volcano")
    node_of = {b.pod: b.node for b in plan.bindings}
    rng = np.random.default_rng(seed)
    running = []
    for job in instance.jobs:
        names = [[f"{job.namespace}/{t.pod_name(job.name, i)}" for i in range(t.replicas)]
                 for t in job.tasks]
        if all(p in node_of for pods in names for p in pods) and rng.random() < 0.5:
            for task, pods in zip(job.tasks, names, strict=True):
                task.running = {i: node_of[p] for i, p in enumerate(pods)}
            running.append(job)
    instance.jobs = running
    return instance


def idle_nodes(instance: toposolve.Instance) -> int:
    busy = {n for job in instance.jobs for t in job.tasks for n in t.running.values()}
    return sum(1 for node in instance.nodes if node.name not in busy)


def llm_queue(instance: toposolve.Instance, pp: int, seed: int) -> list[Job]:
    """Pending LLM jobs (tp=8, ``pp``, dp from :data:`DP_SIZES`), whole-node pods shaped as the
    cluster's nodes, soft topology, until :data:`QUEUE_SHARE` of the idle nodes' GPUs."""
    rng = np.random.default_rng(seed)
    node = instance.nodes[0]
    gpus = int(node.allocatable["nvidia.com/gpu"]) // 1000
    requests = {"nvidia.com/gpu": gpus}  # whole units (the reader's quantities)
    idle = idle_nodes(instance)
    budget = int(QUEUE_SHARE * idle)
    jobs: list[Job] = []
    while True:  # no job over half the idle nodes
        fits = [dp for dp in DP_SIZES if 8 * pp * dp // gpus <= min(budget, idle // 2)]
        if not fits:
            return jobs
        dp = int(rng.choice(fits))
        pods = 8 * pp * dp // gpus
        budget -= pods
        jobs.append(Job(name=f"llm-{len(jobs):02d}", min_available=pods,
                        network_topology=NetworkTopology(mode="soft"),
                        creation_index=1000 + len(jobs), parallelism=f"tp=8,pp={pp},dp={dp}",
                        tasks=[Task(name="worker", replicas=pods, requests=requests)]))


def family_instance(preset: str, options: dict, background: str, pp: int,
                    seed: int) -> toposolve.Instance:
    if background == "occupancy":
        instance = generate(preset, seed=seed, load=0.0001, occupancy=OCCUPANCY, **options)
    else:
        instance = churned(generate(preset, seed=seed, load=OCCUPANCY * 1.6, **options), seed)
    instance.jobs = [*instance.jobs, *llm_queue(instance, pp, seed)]
    return instance


def dp_leaves(problem, pods, pod_of_block) -> int:
    """Leaves the widest DP group of a job touches (a node outside every leaf counts alone)."""
    edges = layout_edges(pods.layout, pods.per_pod)
    if not len(edges.dp_groups):
        return 1
    nodes = pods.nodes[pod_of_block][edges.dp_groups]
    leaf = problem.topology.node_leaf[nodes]
    cell = np.where(leaf >= 0, leaf, -1 - nodes)
    return max(len(set(row)) for row in cell.tolist())


def family_run(problem, instance, engine: str, profile: str | None, order: str,
               time_limit: float) -> dict:
    start = time.perf_counter()
    plan = toposolve.solve(instance, engine, profile, time_limit=time_limit)
    seconds = time.perf_counter() - start
    violations = check_plan(instance, plan)  # every plan must pass the independent checker
    edges_total, cost, spans, leaves = 0, 0.0, [], []
    weights = load_profile(profile).comm if profile else None  # the profile's rank weights
    jobs = ranked_jobs(problem, plan)
    cap = plan_span_cap(problem, jobs, weights) if order == "ranked" else None
    floor, edge_floor, tp_floor, reached = 0.0, 0, 0, 0
    # the span floor at the profile's capped level (section 8); None once a job has none
    span_level = (weights or CommWeights()).dp_span_from_level
    span_floor: int | None = 0
    for pods in jobs:
        _, pod_of_block, _ = by_method(problem, pods, FAMILY_METHOD[order], weights,
                                       span_cap=cap)
        # measured under the default cost model, so every row compares like with like
        edges = layout_edges(pods.layout, pods.per_pod)
        metrics = measure(problem.topology, pods.nodes[pod_of_block], edges)
        # every edge between two nodes at the lowest multiplier: no placement or order of
        # whole-node pods costs less (docs/ranks.md, section 6c)
        floor += measure(problem.topology, pods.nodes[pod_of_block], edges,
                         CommWeights(tier_factor=1.0)).cost
        edges_total += metrics.cross_leaf_edges
        # the fewest cross-leaf ring edges any rank order reaches on this placement (section 7)
        job_floor = plan_edge_floor(problem, pods.nodes, pods.layout.text, pods.per_pod)
        edge_floor += job_floor or 0
        # the same over the orders that keep each TP group inside a leaf (None: not possible)
        tp_floor = plan_tp_floor(tp_floor, problem, pods)
        reached += job_floor == metrics.cross_leaf_edges
        job_span = plan_span_floor(problem, pods.nodes, pods.layout.text, pods.per_pod,
                                   span_level)
        span_floor = None if span_floor is None or job_span is None else span_floor + job_span
        cost += metrics.cost
        spans.append(metrics.largest_dp_span)
        leaves.append(dp_leaves(problem, pods, pod_of_block))
    return {"engine": engine, "profile": profile, "order": order,
            "jobs_placed": plan.metrics["jobs_placed"],
            "gpus_placed": plan.metrics.get("accelerators_placed"),
            "cross_leaf_ring_edges": edges_total, "edge_floor": edge_floor,
            "edge_floor_whole_tp": tp_floor, "jobs_at_floor": reached, "ranked_jobs": len(jobs),
            "edge_floor_stage": stage_record(plan, "edge_floor"),
            "span_floor": span_floor, "span_floor_level": span_level,
            "span_floor_stage": stage_record(plan, "span_floor"),
            "comm_cost": round(cost, 3),
            "comm_cost_floor": round(floor, 3),
            "largest_dp_span_tier": max(spans) if spans else None,
            "mean_dp_span_tier": round(float(np.mean(spans)), 3) if spans else None,
            "mean_dp_leaves": round(float(np.mean(leaves)), 3) if leaves else None,
            "max_dp_leaves": max(leaves) if leaves else None,
            "solve_s": round(seconds, 2), "status": plan.status,
            "cut_short": list(plan.stats.get("cut_short", [])), "violations": len(violations)}


def plan_tp_floor(total: int | None, problem, pods) -> int | None:
    """``total`` plus the job's edge floor with TP groups kept inside leaves (None once a job
    has a leaf whose count splits a TP group, or whose layout has no floor)."""
    job = plan_edge_floor(problem, pods.nodes, pods.layout.text, pods.per_pod, whole_tp=True)
    return None if total is None or job is None else total + job


def placement_bounds(problem) -> dict:
    """Σ over the pending layout jobs of :func:`placement_floor`, each job alone in the leaves'
    free capacity (its pods that fit on the nodes the background leaves idle): no plan placing
    all of them has fewer cross-leaf ring edges under any rank order (``whole_tp``: any order
    keeping each TP group inside one leaf); None when some job has no floor (docs/ranks.md,
    section 7b)."""
    free = problem.allocatable - problem.used
    cells = node_cells(problem.topology, level_tiers(problem.topology))[:, 0]
    _, cell_of = np.unique(cells, return_inverse=True)
    out: dict[str, int | None] = {"all_orders": 0, "whole_tp": 0}
    for j in comm_jobs(problem):
        text, pods = problem.jobs[j].parallelism, job_pods(problem, j)
        group = ranked_groups(problem, j)[0]
        fits = fit_in(free, problem.group_request[group], problem.group_feasible[group])
        capacity = np.bincount(cell_of, weights=fits).astype(np.int64)
        per_pod = parse_parallelism(text).world // pods
        for key, whole in (("all_orders", False), ("whole_tp", True)):
            floor = placement_floor(text, per_pod, capacity, whole)
            out[key] = None if out[key] is None or floor is None else out[key] + floor
    return out


def stage_record(plan, name: str) -> dict | None:
    """The last solve record of stage ``name`` in a CP-SAT plan's stats (value, proven bound,
    status) and whether the model was exact (not aggregated, not lifted); None without one."""
    found = [s for s in plan.stats.get("stages", []) if s.get("stage") == name]
    if not found:
        return None
    last = found[-1]
    exact = not plan.stats.get("aggregation_level") and not plan.stats.get("lifted", False)
    return {"value": last.get("objective"), "bound": last.get("bound"),
            "status": last.get("status"), "exact_model": exact}


def family_runs(profiles: list[str] | None) -> list[tuple[str, str | None, str]]:
    """The runs of one family: the Volcano runs, then :data:`FAMILY_RUNS`' CP-SAT profiles (all
    without ``profiles``, else those named, in its order), then any other profile named (a
    bundled name or a YAML path), ranked with its own weights."""
    if profiles is None:
        return list(FAMILY_RUNS)
    listed = {profile for _, profile, _ in FAMILY_RUNS}
    return ([run for run in FAMILY_RUNS if run[1] is None or run[1] in profiles]
            + [("cpsat", p, "ranked") for p in profiles if p not in listed])


def run_families(time_limit: float, seed: int, only: str | None = None,
                 profiles: list[str] | None = None) -> list[dict]:
    out = []
    for preset, options, background in FAMILY_CLUSTERS:
        for pp in (4, 8):
            if only is not None and only != f"{preset}:{pp}":
                continue
            instance = family_instance(preset, options, background, pp, seed)
            problem = compile_problem(instance)
            llm = [j for j in instance.jobs if j.parallelism]
            runs = [family_run(problem, instance, engine, profile, order, time_limit)
                    for engine, profile, order in family_runs(profiles)]
            bounds = placement_bounds(problem)
            out.append({"cluster": preset, "pp": pp, "nodes": len(instance.nodes),
                        "idle_nodes": idle_nodes(instance), "llm_jobs": len(llm),
                        "llm_gpus": sum(sum(j.pod_accelerators()) for j in llm), "runs": runs,
                        "placement_floor": bounds})
            print(format_table([FAMILY_HEADER, *family_rows(out[-1])], left={0, 1, 2}),
                  flush=True)
            print(f"placement floor (every placement of all {len(llm)} jobs, every order): "
                  f"{bounds['all_orders']}; TP groups inside leaves: {bounds['whole_tp']}",
                  flush=True)
    return out


FAMILY_HEADER = ["family", "placement", "ranks", "jobs placed", "cross-leaf ring edges",
                 "edge floor (jobs at it)", "comm cost", "largest DP span", "mean DP span",
                 "DP leaves (mean/max)", "solve (s)"]


def family_rows(record: dict) -> list[list[str]]:
    base = record["runs"][0]
    rows = []
    for r in record["runs"]:
        # change against the first run (Volcano + index order): negative is fewer / cheaper
        fewer = r["cross_leaf_ring_edges"] / max(1, base["cross_leaf_ring_edges"]) - 1
        cheaper = r["comm_cost"] / max(1e-9, base["comm_cost"]) - 1
        where = r["engine"] + (f" {r['profile']}" if r["profile"] else "")
        rows.append([f"{record['cluster']} pp={record['pp']}", where, r["order"],
                     f"{r['jobs_placed']}/{record['llm_jobs']}",
                     f"{r['cross_leaf_ring_edges']} ({fewer:+.0%})",
                     f"{r['edge_floor']} ({r['jobs_at_floor']}/{r['ranked_jobs']})",
                     f"{r['comm_cost']:g} ({cheaper:+.0%})", str(r["largest_dp_span_tier"]),
                     f"{r['mean_dp_span_tier']}",
                     f"{r['mean_dp_leaves']}/{r['max_dp_leaves']}", f"{r['solve_s']:.1f}"])
    return rows


def rank_timing(repeats: int = 5) -> list[float]:
    """Seconds to rank one 1,024-node gang (``tp=8,pp=8,dp=128``, nodes in a seeded random
    order) on 32 leaves of 32 nodes under 8 spines — the gang of
    ``tests/policy/test_comm.py::test_a_1024_node_gang_is_ranked_within_a_second``."""
    def hypernode(name, tier, kind, members):
        return HyperNode(name=name, tier=tier, members=[
            Member(type=kind, selector=MemberSelector(exact_match=m)) for m in members])

    tree = [hypernode(f"l{k}", 1, "Node", [f"node{32 * k + i}" for i in range(32)])
            for k in range(32)]
    tree += [hypernode(f"s{k}", 2, "HyperNode", [f"l{4 * k + i}" for i in range(4)])
             for k in range(8)]
    nodes = [Node(name=f"node{i}", allocatable={"cpu": 64, "nvidia.com/gpu": 8})
             for i in range(1024)]
    problem = compile_problem(toposolve.Instance(nodes=nodes, hypernodes=tree, jobs=[]))
    pods = JobPods("gang", tuple(map(str, range(1024))),
                   np.random.default_rng(0).permutation(1024),
                   parse_parallelism("tp=8,pp=8,dp=128"), 8)
    optimise(problem, pods)  # warm the tree's cached keys
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        optimise(problem, pods)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--node-order", choices=("tree", "shuffled"), default="tree")
    ap.add_argument("--output", default=None, help="default: benchmarks/results/comm.json "
                                                   "(comm-shuffled-nodes.json when shuffled, "
                                                   "comm_families.json with --families)")
    ap.add_argument("--families", action="store_true",
                    help="phase 2: LLM families on busy clusters, five placement + rank runs")
    ap.add_argument("--seed", type=int, default=0, help="--families: generator seed")
    ap.add_argument("--only", default=None, metavar="CLUSTER:PP",
                    help="--families: one family only, e.g. superpod:4")
    ap.add_argument("--profiles", default=None, metavar="P,Q",
                    help="--families: only these CP-SAT profiles (the Volcano runs always)")
    ap.add_argument("--rank-timing", action="store_true",
                    help="only time the rank assignment of one 1,024-node gang (5 runs)")
    args = ap.parse_args()
    if args.rank_timing:
        times = rank_timing()
        print(f"1,024-node gang tp=8,pp=8,dp=128 ranked in {min(times):.3f}–{max(times):.3f} s "
              f"({len(times)} runs)")
        return
    if args.families:
        profiles = args.profiles.split(",") if args.profiles else None
        records = run_families(args.time_limit, args.seed, args.only, profiles)
        path = Path(args.output or "benchmarks/results/comm_families.json")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"time_limit": args.time_limit, "seed": args.seed,
                                    "occupancy": OCCUPANCY, "families": records}, indent=1)
                        + "\n")
        print(f"-> {path}")
        return
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
