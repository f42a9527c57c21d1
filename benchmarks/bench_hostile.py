"""Hostile inputs (issue 9 §4): how long ``toposolve show`` takes to refuse each one.

Every case writes one input file, runs the command line in this process
(``toposolve.cli.main.main``,
so interpreter start-up and imports are not counted; they are paid once, before the first case)
and records the exit status, the one stderr line and the elapsed wall time. Target: exit 2, one
line, well under a second each. The inputs are those the issue measured: a YAML alias bomb (nine
levels of ten), ``replicas: 99999999999``, a node group of a billion, a GPU quantity ``1e308``,
CPU ``90Ei``, ``highestTierAllowed: 10**30``, a 10,000-deep HyperNode chain, the name pattern
``n-{i:999999999d}``, ``generate superpod --nodes 100000000``, ``--time-limit nan``,
``--workers 1000000`` and ``compare --plot /nonexistent/x.png``; plus one accepted case, a
HyperNode with 100,000 members (exit 0), for scale.

    .venv/bin/python benchmarks/bench_hostile.py [--output PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import platform
import tempfile
import time
from pathlib import Path

import yaml

from toposolve.cli.main import main

RESULTS = Path(__file__).resolve().parent / "results" / "hostile.json"
EXAMPLE = str(Path(__file__).resolve().parents[1] / "instances" / "seed000-example1.yaml")


def _native(folder: Path, name: str, **top) -> str:
    doc = {
        "apiVersion": "toposolve/v1",
        "kind": "Instance",
        "nodeGroups": [
            {"name": "n-{i}", "count": 4, "allocatable": {"cpu": "8", "nvidia.com/gpu": 8}}
        ],
        "jobs": [
            {
                "name": "j",
                "tasks": [{"name": "w", "replicas": 2, "requests": {"nvidia.com/gpu": 1}}],
            }
        ],
    }
    for key, value in top.items():
        doc[key] = value
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def _bomb(folder: Path) -> str:
    lines = ["x0: &x0 [" + ", ".join(["{selector: {exactMatch: {name: n0}}}"] * 10) + "]"]
    lines += [f"x{k}: &x{k} [" + ", ".join([f"*x{k - 1}"] * 10) + "]" for k in range(1, 9)]
    text = (
        "apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata:\n  name: bomb\n  "
        "annotations:\n"
        + "".join(f"    {line}\n" for line in lines)
        + "spec: {tier: 1, members: *x8}\n"
    )
    path = folder / "bomb.yaml"
    path.write_text(text)
    return str(path)


def _chain(folder: Path) -> str:
    hns = [{"name": f"h{k}", "tier": 1, "children": [f"h{k + 1}"]} for k in range(9_999)]
    hns.append({"name": "h9999", "tier": 1, "nodes": ["n-0"]})
    return _native(folder, "chain", topology={"hyperNodes": hns})


def cases(folder: Path) -> dict[str, list[str]]:
    job = {"name": "j", "tasks": [{"name": "w", "replicas": 2, "requests": {"nvidia.com/gpu": 1}}]}
    group = {"name": "n-{i}", "count": 4, "allocatable": {"cpu": "8", "nvidia.com/gpu": 8}}
    wide_group = {**group, "count": 100_000}
    return {
        "alias bomb (9 levels x 10)": ["show", _bomb(folder)],
        "replicas 99999999999": [
            "show",
            _native(
                folder,
                "replicas",
                jobs=[{**job, "tasks": [{**job["tasks"][0], "replicas": 99_999_999_999}]}],
            ),
        ],
        "node group count 1e9": [
            "show",
            _native(folder, "count", nodeGroups=[{**group, "count": 1_000_000_000}]),
        ],
        "GPU 1e308": [
            "show",
            _native(
                folder, "gpu", nodeGroups=[{**group, "allocatable": {"nvidia.com/gpu": 1e308}}]
            ),
        ],
        "CPU 90Ei": [
            "show",
            _native(folder, "cpu", nodeGroups=[{**group, "allocatable": {"cpu": "90Ei"}}]),
        ],
        "highestTierAllowed 10**30": [
            "show",
            _native(
                folder, "tier", jobs=[{**job, "networkTopology": {"highestTierAllowed": 10**30}}]
            ),
        ],
        "HyperNode chain 10,000 deep": ["show", _chain(folder)],
        "name pattern n-{i:999999999d}": [
            "show",
            _native(folder, "pattern", nodeGroups=[{**group, "name": "n-{i:999999999d}"}]),
        ],
        "generate --nodes 100000000": [
            "generate",
            "superpod",
            "--nodes",
            "100000000",
            "-o",
            str(folder / "g.yaml"),
        ],
        "--time-limit nan": [
            "solve",
            EXAMPLE,
            "--engine",
            "cpsat",
            "--time-limit",
            "nan",
            "-o",
            str(folder / "p.json"),
        ],
        "--workers 1000000": [
            "solve",
            EXAMPLE,
            "--engine",
            "cpsat",
            "--workers",
            "1000000",
            "-o",
            str(folder / "p.json"),
        ],
        "compare --plot /nonexistent/x.png": [
            "compare",
            EXAMPLE,
            "--engines",
            "heuristic",
            "--plot",
            "/nonexistent/x.png",
        ],
        "HyperNode with 100,000 members (accepted)": [
            "show",
            _native(
                folder,
                "wide",
                nodeGroups=[wide_group],
                topology={
                    "hyperNodes": [{"name": "big", "tier": 1, "nodes": ["n-0", "n-1..n-99999"]}]
                },
            ),
        ],
        **cases_plans(folder),
        **cases_traces(folder),
        **cases_kueue_kai(folder),
        **cases_sweep(folder),
    }


def _k8s(folder: Path, name: str, docs: list[dict]) -> str:
    """Four nodes (rack r0/r1, hostname) followed by ``docs``, as one manifest file."""
    nodes = [{"apiVersion": "v1", "kind": "Node",
              "metadata": {"name": f"n{i}", "labels": {"rack": f"r{i // 2}",
                                                      "kubernetes.io/hostname": f"n{i}"}},
              "status": {"allocatable": {"cpu": "8", "nvidia.com/gpu": "8"}}} for i in range(4)]
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump_all(nodes + docs))
    return str(path)


def _kai(folder: Path, name: str, subgroups: list[dict], pods: list[str], levels=None,
         gpu: dict | None = None) -> str:
    """A KAI Topology (rack, hostname), a PodGroup with ``subgroups``, one pod per ``pods``."""
    levels = levels or ["rack", "kubernetes.io/hostname"]
    docs: list[dict] = [
        {"apiVersion": "kai.scheduler/v1alpha1", "kind": "Topology", "metadata": {"name": "t"},
         "spec": {"levels": [{"nodeLabel": k} for k in levels]}},
        {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
         "metadata": {"name": "pg", "namespace": "default"},
         "spec": {"queue": "q", "subGroups": subgroups}}]
    if gpu is not None:
        docs.append({"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
                     "metadata": {"name": "q"}, "spec": {"resources": {"gpu": gpu}}})
    docs += [{"apiVersion": "v1", "kind": "Pod",
              "metadata": {"name": f"p{i}", "namespace": "default",
                           "annotations": {"pod-group-name": "pg"},
                           "labels": {"kai.scheduler/subgroup-name": sg}},
              "spec": {"schedulerName": "kai-scheduler", "containers": [{"name": "c"}]}}
             for i, sg in enumerate(pods)]
    return _k8s(folder, name, docs)


def _kueue(folder: Path, name: str, levels: list[str], assignment: dict | None = None) -> str:
    """A Kueue Topology of ``levels``, its flavor and queues, and one two-pod Workload, admitted
    with ``assignment`` when given."""
    group = "kueue.x-k8s.io/v1beta2"
    workload = {"apiVersion": group, "kind": "Workload",
                "metadata": {"name": "w", "namespace": "default"},
                "spec": {"queueName": "lq", "podSets": [
                    {"name": "main", "count": 2, "template": {"spec": {"containers": [
                        {"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}]}}
    if assignment is not None:
        workload["status"] = {"admission": {"clusterQueue": "cq", "podSetAssignments": [
            {"name": "main", "count": 2, "topologyAssignment": assignment}]}}
    flavors = [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": "8"}]}]
    return _k8s(folder, name, [
        {"apiVersion": group, "kind": "Topology", "metadata": {"name": "t"},
         "spec": {"levels": [{"nodeLabel": k} for k in levels]}},
        {"apiVersion": group, "kind": "ResourceFlavor", "metadata": {"name": "f"},
         "spec": {"topologyName": "t"}},
        {"apiVersion": group, "kind": "ClusterQueue", "metadata": {"name": "cq"},
         "spec": {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": flavors}]}},
        {"apiVersion": group, "kind": "LocalQueue", "metadata": {"name": "lq",
                                                                 "namespace": "default"},
         "spec": {"clusterQueue": "cq"}},
        workload])


def cases_kueue_kai(folder: Path) -> dict[str, list[str]]:
    """Issue 19, Kueue / KAI / label-topology readers: each refused in one line but the last."""
    host = "kubernetes.io/hostname"
    required = {"topology": "t", "requiredTopologyLevel": "rack"}
    chain = [{"name": f"s{k}", **({"parent": f"s{k - 1}"} if k else {}),
              "topologyConstraint": required} for k in range(10_000)]
    slices = [{"domainCount": 10**12, "valuesPerLevel": [{"universal": "n1"}],
               "podCounts": {"universal": 1}}]
    conf = yaml.safe_dump({"networkTopologyDiscovery": [{"source": "label", "enabled": True,
        "config": {"networkTopologyTypes": {"p": [{"nodeLabel": f"l{i}"} for i in range(20_000)]
                                            + [{"nodeLabel": host}]}}}]})
    configmap = {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "volcano-controller-configmap", "namespace": "volcano"},
                 "data": {"volcano-controller.conf": conf}}
    plain = _k8s(folder, "plain", [])
    return {
        "KAI Queue gpu.limit .inf": ["show", _kai(folder, "inf", [], ["a"],
                                                  gpu={"limit": float("inf")})],
        "KAI Queue quota 1e300": ["show", _kai(folder, "q300", [], ["a"], gpu={"quota": 1e300})],
        "KAI SubGroup chain 10,000 deep": ["solve", _kai(folder, "chain", chain, ["s9999"]),
                                           "--engine", "kai", "-o", str(folder / "p.json")],
        "KAI 20,000 flat SubGroups (accepted)": [
            "show", _kai(folder, "flat", [{"name": f"s{k}", "minMember": 0}
                                          for k in range(20_000)], ["s0"])],
        "KAI Topology of 20,001 levels": [
            "show", _kai(folder, "kai-levels", [], ["a"], [f"l{i}" for i in range(20_001)])],
        "Kueue domainCount 1e12": ["show", _kueue(folder, "dcount", [host],
                                                  {"levels": [host], "slices": slices})],
        "Kueue Topology of 20,001 levels": [
            "show", _kueue(folder, "kueue-levels", [f"l{i}" for i in range(20_000)] + [host])],
        "discovery ConfigMap of 20,001 levels": ["show", _k8s(folder, "cm", [configmap])],
        "--topology-labels of 10,000 labels": [
            "show", plain, "--topology-labels", ",".join(f"l{i}" for i in range(10_000))],
        "--topology-labels no node has (warning)": ["show", plain, "--topology-labels", "nosuch"],
    }


def _plan(folder: Path, name: str, bindings: list, tail: str = "") -> str:
    """A JSON plan file with ``bindings``; ``tail`` (raw JSON) goes in as a ``stats`` value."""
    text = json.dumps({"schema": 1, "engine": "x", "status": "FEASIBLE", "bindings": bindings})
    if tail:
        text = text[:-1] + f', "stats": {{"x": {tail}}}}}'
    path = folder / f"{name}.json"
    path.write_text(text)
    return str(path)


def cases_plans(folder: Path) -> dict[str, list[str]]:
    """Issue 19: hostile plans for ``export`` and a full disk under ``export -o``."""
    ok = {"pod": "ns/a-0", "node": "n-0"}
    wide = [{"pod": f"ns/j{k // 8}-w-{k % 8}", "node": f"n-{k % 5000}"} for k in range(100_000)]
    out = str(folder / "export.yaml")
    return {
        "plan: pod: 5": ["export", _plan(folder, "pod5", [{**ok, "pod": 5}]), "-o", out],
        'plan: nominated: "yes"': [
            "export", _plan(folder, "yes", [{**ok, "nominated": "yes"}]), "-o", out],
        "plan: one pod bound twice": [
            "export", _plan(folder, "twice", [ok, {**ok, "node": "n-1"}]), "-o", out],
        "plan: a name holding a newline and ---": [
            "export", _plan(folder, "newline", [{**ok, "pod": "ns/a\n---\nkind: Secret"}]),
            "-o", out],
        "plan nested 50,000 deep": [
            "export", _plan(folder, "deep", [ok], "[" * 50_000 + "]" * 50_000), "-o", out],
        "plan with 2,000,001 bindings": [
            "export", _plan(folder, "many", [0] * 2_000_001), "-o", out],
        "export -o /dev/full": ["export", _plan(folder, "full", [ok]), "-o", "/dev/full"],
        "export of 100,000 bindings (accepted)": [
            "export", _plan(folder, "wide", wide), "-o", out],
    }


def cases_traces(folder: Path) -> dict[str, list[str]]:
    """Issue 19: hostile workload traces and replay options, each refused in one line."""
    header = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
              "deletion_time,scheduled_time\n")
    pod = "p1,1000,2048,{gpus},1000,,LS,Running,{t},100000,{t}\n"
    files = {
        "trace CSV cell of 140,000 characters": ("cell.csv",
                                                 "name,arrival,replicas\na,0," + "1" * 140_000),
        "trace CSV of 300,000 lines": ("long.csv", "name,arrival,replicas\n" + "".join(
            f"j{i},{i},1\n" for i in range(300_000))),
        "trace CSV name with a newline": ("newline.csv", 'name,arrival,replicas\n"a\nb",0,1\n'),
        "openb 40-digit integer": ("digits.csv", header + pod.format(gpus=1, t="9" * 40)),
        "openb pod name twice": ("twice.csv", header + pod.format(gpus=1, t=0)
                                 + pod.format(gpus=1, t=50)),
        "openb negative GPUs": ("negative.csv", header + pod.format(gpus=-1, t=0)),
        "openb name of 401 characters": ("name.csv", header + pod.replace("p1", "p" * 401).format(
            gpus=1, t=0)),
    }
    cases = {}
    for title, (name, text) in files.items():
        (folder / name).write_text(text)
        cases[title] = ["replay", EXAMPLE, str(folder / name)]
    synthetic = ["replay", EXAMPLE, "synthetic"]
    cases.update({
        "replay --trace-option inflate=1e12": ["replay", EXAMPLE, "openb", "--trace-option",
                                               "inflate=1e12"],
        "replay --trace-option jobs=100000000": [*synthetic, "--trace-option", "jobs=100000000"],
        "replay --engines volcano,nope": [*synthetic, "--engines", "volcano,nope"],
    })
    return cases


def _sweep(folder: Path, name: str, grid: dict | None = None, **base) -> str:
    doc = {
        "kind": "Sweep",
        "base": {
            "cluster": {"preset": "superpod", "nodes": 32, "options": {"leaf_size": 8}},
            "trace": {"synthetic": {"jobs": 5}},
            **base,
        },
        "grid": grid or {},
    }
    path = folder / f"sweep-{name}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def cases_sweep(folder: Path) -> dict[str, list[str]]:
    """Hostile sweep specs and options (issue 19, sweeps): each refused before any scenario."""
    out = ["-o", str(folder / "sweep-out")]
    last_bad = {"cluster.seed": list(range(100)), "trace.synthetic.seed": [*range(99), "x"]}
    return {
        "sweep: misspelt key engnie": ["sweep", _sweep(folder, "engnie", engnie="cpsat"), *out],
        "sweep: cluster options a list": [
            "sweep",
            _sweep(folder, "options", cluster={"preset": "superpod", "options": [1]}),
            *out,
        ],
        "sweep: grid key cluster..": ["sweep", _sweep(folder, "dots", {"cluster..": [1]}), *out],
        "sweep: grid of 10^6 scenarios": [
            "sweep",
            _sweep(folder, "huge", {f"cluster.options.k{i}": list(range(10)) for i in range(6)}),
            *out,
        ],
        "sweep: seed 'x' in the last of 10,000": [
            "sweep", _sweep(folder, "last", last_bad), *out,
        ],
        "sweep: missing cluster file": [
            "sweep", _sweep(folder, "nofile", cluster={"file": "missing.yaml"}), *out,
        ],
        "sweep --ray 127.0.0.1:1": ["sweep", _sweep(folder, "ray"), *out, "--ray", "127.0.0.1:1"],
        "sweep --workers -3": ["sweep", _sweep(folder, "workers"), *out, "--workers", "-3"],
    }


def run_case(argv: list[str]) -> dict:
    err, out = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        status = main(argv)
    seconds = time.perf_counter() - start
    lines = err.getvalue().strip().splitlines()
    return {
        "exit": status,
        "seconds": round(seconds, 3),
        "stderr_lines": len(lines),
        "message": lines[0] if lines else "",
    }


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=str(RESULTS))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        records = {name: run_case(argv) for name, argv in cases(Path(tmp)).items()}
    print(f"{'case':<44}{'exit':>5}{'lines':>6}{'seconds':>9}")
    for name, rec in records.items():
        print(f"{name:<44}{rec['exit']:>5}{rec['stderr_lines']:>6}{rec['seconds']:>9.3f}")
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(
        json.dumps(
            {
                "command": "benchmarks/bench_hostile.py",
                "machine": platform.platform(),
                "note": "in-process (imports excluded); the machine was shared with other work, "
                        "figures are noisy",
                "cases": records,
            },
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    main_bench()
