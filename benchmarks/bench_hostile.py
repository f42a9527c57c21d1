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
        **cases_sweep(folder),
    }


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
