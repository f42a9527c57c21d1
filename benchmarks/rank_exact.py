"""The exact best rank order of each job of a plan, for its own placement (docs/ranks.md, 8b).

A CP-SAT model over one job's rank assignments: ``x[b, l]`` (block ``b`` on a pod of leaf ``l``),
each leaf taking as many blocks as it holds pods (pods of one leaf are interchangeable for the
cross-leaf ring edges), optionally every DP group inside one level-``--level`` cell, minimising
the ring edges between leaves. Printed per job against the ranker (under the profile's
weights, with the plan's span cap) and the edge and span floors; OPTIMAL settles which side is
short, FEASIBLE only bounds the best order from above.

    PYTHONPATH=src .venv/bin/python benchmarks/rank_exact.py --only superpod:4 --seed 0 \\
        [--profile comm-joint] [--level 1] [--time-limit 30] [--solve-time 10]
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_comm import FAMILY_CLUSTERS, family_instance
from ortools.sat.python import cp_model

import toposolve
from toposolve.core.problem import compile_problem
from toposolve.policy.comm import RING_KINDS, layout_edges
from toposolve.policy.comm_stage import level_tiers, node_cells
from toposolve.policy.edge_floor import plan_edge_floor
from toposolve.policy.profiles import load_profile
from toposolve.policy.ranks import optimise, plan_span_cap, ranked_jobs
from toposolve.policy.span_floor import plan_span_floor


def exact_order(problem, pods, level: int | None, hint: np.ndarray, seconds: float):
    """(status, best edges found, proven bound) of the model above; ``hint``: pod_of_block."""
    cells = node_cells(problem.topology, level_tiers(problem.topology))[pods.nodes]
    _, leaf_of = np.unique(cells[:, 0], return_inverse=True)
    _, capped_of = np.unique(cells[:, level if level is not None else 0], return_inverse=True)
    leaves, capped = leaf_of.max() + 1, capped_of.max() + 1
    capped_of_leaf = np.zeros(leaves, dtype=np.int64)
    capped_of_leaf[leaf_of] = capped_of
    count = np.bincount(leaf_of, minlength=leaves)
    edges = layout_edges(pods.layout, pods.per_pod)
    ring = np.isin(edges.kind, RING_KINDS)
    pairs, weight = np.unique(np.stack([edges.a[ring], edges.b[ring]], axis=1), axis=0,
                              return_counts=True)
    blocks = len(pods.nodes)
    model = cp_model.CpModel()
    x = [[model.NewBoolVar("") for _ in range(leaves)] for _ in range(blocks)]
    for row in x:
        model.AddExactlyOne(row)
    for leaf in range(leaves):
        model.Add(sum(x[b][leaf] for b in range(blocks)) == int(count[leaf]))
    if level is not None:
        for group in np.unique(edges.dp_groups, axis=0):
            cell = [model.NewBoolVar("") for _ in range(capped)]
            model.AddExactlyOne(cell)
            for b in group.tolist():
                for leaf in range(leaves):
                    model.AddImplication(x[b][leaf], cell[capped_of_leaf[leaf]])
    cut = []
    for (a, b), w in zip(pairs.tolist(), weight.tolist(), strict=True):
        apart = model.NewBoolVar("")
        for leaf in range(leaves):
            model.Add(x[a][leaf] - x[b][leaf] <= apart)
        cut.append(w * apart)
    model.Minimize(sum(cut))
    for b in range(blocks):
        for leaf in range(leaves):
            model.AddHint(x[b][leaf], int(leaf_of[hint[b]] == leaf))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = seconds
    solver.parameters.num_workers = 1
    status = solver.Solve(model)
    return (solver.StatusName(status), round(solver.ObjectiveValue()),
            round(solver.BestObjectiveBound()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", required=True, metavar="CLUSTER:PP")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", default="comm-joint")
    ap.add_argument("--level", type=int, default=1, help="DP groups inside this level's cells "
                                                         "(-1: no cap)")
    ap.add_argument("--time-limit", type=float, default=30.0, help="per job")
    ap.add_argument("--solve-time", type=float, default=10.0, help="the placement's CP-SAT run")
    args = ap.parse_args()
    preset, pp = args.only.split(":")
    options, background = {p: (o, b) for p, o, b in FAMILY_CLUSTERS}[preset]
    instance = family_instance(preset, options, background, int(pp), args.seed)
    problem = compile_problem(instance)
    plan = toposolve.solve(instance, "cpsat", args.profile, time_limit=args.solve_time)
    weights = load_profile(args.profile).comm
    jobs = ranked_jobs(problem, plan)
    cap = plan_span_cap(problem, jobs, weights)
    level = None if args.level < 0 else args.level
    for pods in jobs:
        name, pod_of_block, metrics = optimise(problem, pods, weights, span_cap=cap)
        text, per_pod = pods.layout.text, pods.per_pod
        floor = plan_edge_floor(problem, pods.nodes, text, per_pod)
        span = plan_span_floor(problem, pods.nodes, text, per_pod, level) if level else None
        status, best, bound = exact_order(problem, pods, level, pod_of_block, args.time_limit)
        print(f"{pods.key} {text}: ranker {metrics.cross_leaf_edges} ({name}), edge floor "
              f"{floor}, span floor {span}, exact {status} {best} (bound {bound})", flush=True)


if __name__ == "__main__":
    main()
