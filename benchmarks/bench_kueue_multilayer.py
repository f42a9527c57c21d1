"""Kueue multi-layer slices at scale: read, compile and place a GB200-like Kueue dump.

The cluster: 1 datacenter × 4 AI zones × 4 blocks × 4 racks × 18 nodes (1,152 nodes of 2 GPUs,
levels datacenter → aizone → block → rack → hostname, as Kueue's GB200 table case). The queue:
``--jobs`` Workloads of 96 to 384 one-GPU pods, required in one AI zone, in 3 layers (block
slices of 96, rack slices of 32, host slices of 2), plus as many in 2 layers (AI zone slices of
48, rack slices of 16) required in the datacenter. Times the reader, the compiler and the kueue
engine; every plan is checked (violations must be 0). Writes a JSON record (``--output``).

    PYTHONPATH=src .venv/bin/python benchmarks/bench_kueue_multilayer.py
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

import yaml

from toposolve.check.checker import check_plan
from toposolve.core.assignment import to_plan
from toposolve.core.problem import compile_problem
from toposolve.engines.kueue import run_kueue
from toposolve.formats.load import load_instance

LEVELS = ["cloud.com/datacenter", "cloud.com/aizone", "cloud.com/topology-block",
          "cloud.com/topology-rack", "kubernetes.io/hostname"]
GROUP = "kueue.x-k8s.io/v1beta2"


def cluster() -> list[dict]:
    docs = []
    for z in range(4):
        for b in range(4):
            for r in range(4):
                for n in range(18):
                    name = f"z{z}-b{b}-r{r}-n{n:02d}"
                    values = ["dc0", f"z{z}", f"z{z}-b{b}", f"z{z}-b{b}-r{r}", name]
                    docs.append({"apiVersion": "v1", "kind": "Node", "metadata": {
                        "name": name, "labels": dict(zip(LEVELS, values, strict=True))},
                        "status": {"allocatable": {"nvidia.com/gpu": "2", "pods": "110"}}})
    docs += [
        {"apiVersion": GROUP, "kind": "Topology", "metadata": {"name": "gb200"},
         "spec": {"levels": [{"nodeLabel": k} for k in LEVELS]}},
        {"apiVersion": GROUP, "kind": "ResourceFlavor", "metadata": {"name": "gpu"},
         "spec": {"topologyName": "gb200"}},
        {"apiVersion": GROUP, "kind": "ClusterQueue", "metadata": {"name": "cq"},
         "spec": {"resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [
             {"name": "gpu",
              "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "4096"}]}]}]}},
        {"apiVersion": GROUP, "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": "ml"},
         "spec": {"clusterQueue": "cq"}},
    ]
    return docs


def workload(k: int) -> dict:
    three = k % 2 == 0
    count = 96 * (1 + k % 4) if three else 48 * (1 + k % 3)
    layers = ([(LEVELS[2], 96), (LEVELS[3], 32), (LEVELS[4], 2)] if three
              else [(LEVELS[1], 48), (LEVELS[3], 16)])
    created = f"2026-11-01T10:{k % 60:02d}:00Z"
    return {"apiVersion": GROUP, "kind": "Workload", "metadata": {
        "name": f"w{k:03d}", "namespace": "ml", "creationTimestamp": created},
        "spec": {"queueName": "lq", "podSets": [{"name": "workers", "count": count, "template": {
            "spec": {"containers": [{"name": "c", "resources": {
                "requests": {"nvidia.com/gpu": "1"}}}]}}, "topologyRequest": {
            "required": LEVELS[1] if three else LEVELS[0],
            "podsetSliceRequiredTopologyConstraints": [
                {"topology": t, "size": s} for t, s in layers]}}]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=40)
    parser.add_argument("--output", default="benchmarks/results/kueue_multilayer.json")
    args = parser.parse_args()
    path = Path(tempfile.mkdtemp()) / "gb200.yaml"
    docs = cluster() + [workload(k) for k in range(args.jobs)]
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    clock = [time.perf_counter()]
    instance = load_instance(path, warn=lambda _: None)
    clock.append(time.perf_counter())
    problem = compile_problem(instance)
    clock.append(time.perf_counter())
    assignment = run_kueue(problem)
    clock.append(time.perf_counter())
    plan = to_plan(problem, assignment, engine="kueue", status="FEASIBLE")
    record = {
        "nodes": len(instance.nodes), "jobs": len(instance.jobs),
        "pods": sum(j.replicas for j in instance.jobs),
        "jobs_placed": sum(1 for j in plan.jobs if j.placed), "pods_bound": len(plan.bindings),
        "read_s": round(clock[1] - clock[0], 3), "compile_s": round(clock[2] - clock[1], 3),
        "kueue_s": round(clock[3] - clock[2], 3),
        "violations": len(check_plan(instance, plan)),
    }
    print(json.dumps(record))
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "machine": platform.platform(), "python": platform.python_version(),
        "command": " ".join(["benchmarks/bench_kueue_multilayer.py", *sys.argv[1:]]),
        "note": "machine shared by several sessions: timings are noisy", "record": record,
    }, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
