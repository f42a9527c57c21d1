"""Alibaba GPU-share manifests at openb scale: the 1,213 openb GPU nodes and the trace's GPU pods
written as FGD's simulator writes them (``data/pod_csv_to_yaml.py``: annotations
``alibabacloud.com/gpu-milli`` / ``gpu-count`` / ``gpu-card-model``; nodes'
``alibabacloud.com/gpu-count``), then read, solved by the Volcano mirror on devices and checked.

``python benchmarks/bench_gpushare.py [--pods N]`` prints one JSON line: the timings of each step,
the devices and shares read, the pods placed and the checker's verdict.
"""

from __future__ import annotations

import argparse
import csv
import json
import tempfile
import time
from pathlib import Path

import yaml

from toposolve.check.checker import check_plan
from toposolve.core.paths import TRACE_DIR
from toposolve.core.problem import compile_problem
from toposolve.formats.load import load_instance
from toposolve.solve import solve_problem

MODEL = "alibabacloud.com/gpu-card-model"


def rows(name: str) -> list[dict[str, str]]:
    with (TRACE_DIR / name).open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def node_doc(row: dict[str, str]) -> dict:
    gpus = int(row["gpu"])
    amounts = {"alibabacloud.com/gpu-count": str(gpus), "alibabacloud.com/gpu-milli":
               str(1000 * gpus), "cpu": f"{row['cpu_milli']}m", "memory": f"{row['memory_mib']}Mi",
               "pods": "1001"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": row["sn"], "labels": {MODEL: row["model"]}},
            "status": {"allocatable": amounts, "capacity": amounts}}


def pod_doc(row: dict[str, str]) -> dict:
    annotations = {}
    if int(row["num_gpu"]):
        annotations = {"alibabacloud.com/gpu-milli": row["gpu_milli"],
                       "alibabacloud.com/gpu-count": row["num_gpu"]}
        if row["gpu_spec"]:
            annotations[MODEL] = row["gpu_spec"]
    amounts = {"cpu": f"{row['cpu_milli']}m", "memory": f"{row['memory_mib']}Mi"}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": row["name"], "namespace": "openb", "annotations": annotations},
            "spec": {"schedulerName": "volcano", "containers": [
                {"name": "main", "resources": {"requests": amounts, "limits": amounts}}]},
            "status": {"phase": "Pending"}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=2000, help="first N trace pods (default 2000)")
    args = parser.parse_args()
    nodes = [node_doc(r) for r in rows("openb_gpu_nodes.csv")]
    pods = [pod_doc(r) for r in rows("openb_pod_default.csv")[: args.pods]]
    out: dict = {"nodes": len(nodes), "pods": len(pods)}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "openb-gpushare.yaml"
        start = time.perf_counter()
        path.write_text(yaml.safe_dump_all([*nodes, *pods]), encoding="utf-8")
        out["write_s"] = round(time.perf_counter() - start, 2)
        start = time.perf_counter()
        instance = load_instance(path, warn=lambda _: None)
        out["load_s"] = round(time.perf_counter() - start, 2)
    start = time.perf_counter()
    problem = compile_problem(instance)
    out["compile_s"] = round(time.perf_counter() - start, 2)
    out["devices"] = int(problem.node_devices.sum())
    out["shared_pods"] = sum(t.replicas for j in instance.jobs for t in j.tasks
                             if t.device_share is not None and t.device_share.milli < 1000)
    start = time.perf_counter()
    plan = solve_problem(problem, "volcano")
    out["solve_s"] = round(time.perf_counter() - start, 2)
    out["placed_pods"] = len(plan.bindings)
    out["placed_milli_gpu"] = sum(
        len(b.devices or ()) * problem.device_shape(problem.pod_group[b.pod])[0]
        for b in plan.bindings)
    start = time.perf_counter()
    out["violations"] = len(check_plan(instance, plan, eviction_mode="none"))
    out["check_s"] = round(time.perf_counter() - start, 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
