"""``toposolve bench SUITE``: named suites of generated instances through every engine.

Each run writes a JSON record (per instance: sizes, per-engine metrics, times, status, gap, peak
memory) and prints a summary table. Suites:

* ``small`` — CI-sized (runs in the tests): three tiny superpods and a fat tree, 5 s limit.
* ``superpod-1k`` — 1,024-node superpods with 60 pending jobs at 90 % demand, 10 seeds.
* ``scale-6k`` — 6,144 nodes, ≥ 9,000 HyperNodes, 200 pending jobs incl. a 3,000-pod job.
"""

from __future__ import annotations

import json
import platform
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toposolve.core.errors import InputError
from toposolve.core.paths import write_file
from toposolve.core.problem import compile_problem
from toposolve.formats.native.reader import load_native
from toposolve.generate import generate_document
from toposolve.policy.metrics import plan_metrics
from toposolve.policy.profiles import load_profile
from toposolve.solve import SolveOptions, solve_problem


@dataclass
class Case:
    name: str
    preset: str
    nodes: int | None
    seed: int
    options: dict[str, Any] = field(default_factory=dict)
    load: float = 0.9


@dataclass
class Suite:
    cases: list[Case]
    engines: tuple[str, ...] = ("volcano", "cpsat")
    time_limit: float = 30.0


def _big_job_case(seed: int) -> Case:
    return Case(f"scale-6k-s{seed}", "scale-6k", None, seed, {"big_job": 3000})


SUITES: dict[str, Suite] = {
    "small": Suite(
        [
            Case("superpod-64-s0", "superpod", 64, 0, {"jobs": 8}),
            Case("superpod-64-s1", "superpod", 64, 1, {"jobs": 8, "occupancy": 0.3}),
            Case("superpod-128-s2", "superpod", 128, 2, {"jobs": 10}),
            Case("fattree-s0", "fattree", None, 0, {"arity": 4, "depth": 3, "jobs": 6}),
        ],
        time_limit=5.0,
    ),
    "superpod-1k": Suite([Case(f"superpod-1k-s{s}", "superpod", 1024, s,
                               {"jobs": 60}) for s in range(10)]),
    "scale-6k": Suite([_big_job_case(0)], time_limit=60.0),
}


def _document(case: Case) -> dict[str, Any]:
    options = dict(case.options)
    big = options.pop("big_job", None)
    doc = generate_document(case.preset, nodes=case.nodes, load=case.load, seed=case.seed,
                            **options)
    if big:
        top = max(level["tier"] for level in doc["topology"]["levels"])
        job = {
            "name": f"big-{big}",
            "priorityClass": doc["priorityClasses"][-1]["name"] if doc.get("priorityClasses")
            else None,
            "networkTopology": {"mode": "hard", "highestTierAllowed": top},
            "tasks": [{"name": "worker", "replicas": big,
                       "requests": {"nvidia.com/gpu": 8, "cpu": "96"}}],
        }
        job = {k: v for k, v in job.items() if v is not None}
        doc = {**doc, "jobs": [job, *doc["jobs"][:199]]}
    return doc


def run_case(case: Case, suite: Suite, profile_name: str | None = None,
             time_limit: float | None = None) -> dict[str, Any]:
    profile = load_profile(profile_name)
    instance = load_native([_document(case)], source=case.name)
    problem = compile_problem(instance)
    record: dict[str, Any] = {
        "instance": case.name,
        "nodes": len(instance.nodes),
        "hypernodes": len(instance.hypernodes),
        "jobs": len(instance.jobs),
        "pending_pods": sum(len(p) for p in problem.group_pending),
        "engines": {},
    }
    for engine in suite.engines:
        start = time.perf_counter()
        plan = solve_problem(problem, engine, profile,
                             SolveOptions(time_limit=time_limit or suite.time_limit))
        metrics = plan_metrics(problem, plan, profile.objective, profile.comm).to_dict()
        metrics.pop("jobs")
        metrics["elapsed_s"] = round(time.perf_counter() - start, 3)
        metrics["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                                        1)
        record["engines"][engine] = metrics
    return record


def run_suite(
    name: str,
    *,
    output: str | None = None,
    time_limit: float | None = None,
    profile: str | None = None,
    show: Callable[[list[dict[str, Any]]], None] | None = None,
) -> int:
    """Run every case of suite ``name`` through every engine and write the JSON record.

    Parameters
    ----------
    name
        A key of :data:`SUITES`.
    output
        Path of the JSON record (default ``bench-<name>.json``).
    time_limit
        Seconds per engine run (default: the suite's).
    profile
        Profile name or path (default: the default profile).
    show
        Called with the records before they are written (the CLI prints its table).

    Returns
    -------
    int
        The exit status, 0.
    """
    if name not in SUITES:
        raise InputError(f"unknown suite {name!r} (choose from {', '.join(SUITES)})",
                         obj="command line", field="SUITE")
    suite = SUITES[name]
    records = [run_case(case, suite, profile, time_limit) for case in suite.cases]
    if show is not None:
        show(records)
    path = Path(output or f"bench-{name}.json")
    write_file(path, json.dumps({"suite": name, "machine": platform.platform(),
            "python": platform.python_version(), "records": records}, indent=1) + "\n")
    print(f"wrote {path}")
    return 0
