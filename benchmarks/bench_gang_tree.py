"""Gang trees deeper than job → SubJob: the engines on a KAI dump of depth-3 SubGroup trees.

The instance (built here as KAI objects and read by toposolve's KAI reader): a zone / spine /
rack Topology of 2 zones × 4 spines × 4 racks × 4 nodes (128 nodes, 8 GPUs each) and 24
PodGroups required at the zone, each of 2 or 3 replicas (SubGroups required at a spine) of two
leaf SubGroups (required at a rack, 2 pods of 8 GPUs each, ``minMember`` 2): 240 pods, 1,920
GPUs asked of 1,024. No target: it records what each engine places (every plan is checked) —
``volcano`` places the stricter two-level stand-in, ``kai`` mirrors KAI's SubGroup recursion,
``cpsat`` models the tree exactly.

    .venv/bin/python benchmarks/bench_gang_tree.py [--time-limit 60] [--output PATH]
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path

import yaml

LEVELS = ("k8s.io/zone", "k8s.io/spine", "k8s.io/rack")


def _nodes() -> list[dict]:
    docs, n = [], 0
    for z in range(2):
        for s in range(4):
            for r in range(4):
                for _ in range(4):
                    labels = dict(
                        zip(LEVELS, (f"zone{z}", f"spine{z}-{s}", f"rack{z}-{s}-{r}"), strict=True)
                    )
                    docs.append(
                        {
                            "apiVersion": "v1",
                            "kind": "Node",
                            "metadata": {"name": f"node{n}", "labels": labels},
                            "status": {
                                "allocatable": {
                                    "cpu": "96",
                                    "memory": "1Ti",
                                    "pods": "110",
                                    "nvidia.com/gpu": "8",
                                }
                            },
                        }
                    )
                    n += 1
    return docs


def _podgroup(k: int) -> list[dict]:
    def constraint(level: str) -> dict:
        return {"topologyConstraint": {"topology": "t", "requiredTopologyLevel": level}}

    replicas = 2 + k % 2
    subgroups, pods = [], []
    for r in range(replicas):
        subgroups.append({"name": f"r{r}", **constraint("k8s.io/spine")})
        for leaf in range(2):
            name = f"r{r}-l{leaf}"
            subgroups.append(
                {"name": name, "parent": f"r{r}", "minMember": 2, **constraint("k8s.io/rack")}
            )
            pods += [name, name]
    group = {
        "apiVersion": "scheduling.run.ai/v2alpha2",
        "kind": "PodGroup",
        "metadata": {"name": f"job{k}", "namespace": "default"},
        "spec": {
            "queue": "queue0",
            "minMember": len(pods),
            "subGroups": subgroups,
            **constraint("k8s.io/zone"),
        },
    }
    return [group] + [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"job{k}-{i}",
                "namespace": "default",
                "annotations": {"pod-group-name": f"job{k}"},
                "labels": {"kai.scheduler/subgroup-name": sg},
            },
            "spec": {
                "schedulerName": "kai-scheduler",
                "containers": [
                    {"name": "c", "resources": {"requests": {"cpu": "1", "nvidia.com/gpu": "8"}}}
                ],
            },
        }
        for i, sg in enumerate(pods)
    ]


def documents() -> list[dict]:
    topology = {
        "apiVersion": "kai.scheduler/v1alpha1",
        "kind": "Topology",
        "metadata": {"name": "t"},
        "spec": {"levels": [{"nodeLabel": k} for k in LEVELS]},
    }
    queue = {
        "apiVersion": "scheduling.run.ai/v2",
        "kind": "Queue",
        "metadata": {"name": "queue0"},
        "spec": {},
    }
    return [topology, queue, *_nodes(), *(d for k in range(24) for d in _podgroup(k))]


def main() -> None:
    import toposolve
    from toposolve.core.problem import compile_problem
    from toposolve.formats.load import load_instance

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument(
        "--output", type=Path, default=Path(__file__).parent / "results" / "gang_tree.json"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kai-depth3.yaml"
        path.write_text(yaml.safe_dump_all(documents()))
        inst = load_instance(path, warn=lambda _: None)
    depth = compile_problem(inst).max_gang_depth
    rows = []
    for engine in ("volcano", "kai", "cpsat"):
        start = time.perf_counter()
        plan = toposolve.solve(inst, engine, time_limit=args.time_limit)  # checked
        rows.append(
            {
                "engine": engine,
                "status": plan.status,
                "jobs_placed": plan.metrics["jobs_placed"],
                "gpus_placed": plan.metrics["accelerators_placed"],
                "gap": plan.gap,
                "seconds": round(time.perf_counter() - start, 3),
            }
        )
    print(
        f"KAI dump, gang depth {depth}: 128 nodes, 24 PodGroups, 240 pods (time limit "
        f"{args.time_limit:g} s)"
    )
    print(f"{'engine':<8} {'status':<9} {'jobs':>5} {'GPUs':>6} {'gap':>7} {'seconds':>8}")
    for r in rows:
        gap = "-" if r["gap"] is None else f"{r['gap']:.3f}"
        print(
            f"{r['engine']:<8} {r['status']:<9} {r['jobs_placed']:>5} {r['gpus_placed']:>6} "
            f"{gap:>7} {r['seconds']:>8.2f}"
        )
    record = {
        "benchmark": "gang_tree",
        "depth": depth,
        "time_limit": args.time_limit,
        "rows": rows,
        "machine": platform.platform(),
        "python": platform.python_version(),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(record, indent=2) + "\n")
    print(f"-> {args.output}")


if __name__ == "__main__":
    main()
