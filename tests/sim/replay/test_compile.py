"""A cycle compiled incrementally equals compile_problem of the same instance."""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from toposolve.core.problem import Problem, compile_problem
from toposolve.formats.trace.native import load_trace_documents
from toposolve.generate import generate
from toposolve.sim.replay import Replay, ReplayOptions
from toposolve.sim.replay.cycle import USAGE_NAMESPACE
from toposolve.sim.replay.engine import cycle_solver


def assert_same_problem(full: Problem, cycle: Problem) -> None:
    """Every field of the dataclass equal (arrays by value, nested dataclasses by their fields)."""
    for f in fields(Problem):
        a, b = getattr(full, f.name), getattr(cycle, f.name)
        if f.name == "instance":
            assert a is b
        elif f.name == "topology":
            assert a.names == b.names and np.array_equal(a.parent, b.parent)
        elif isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b), f.name
        elif f.name in ("jobs", "subjobs"):
            assert [vars(x) for x in a] == [vars(x) for x in b], f.name
        else:
            assert a == b, f.name


def test_cycle_problems_equal_a_full_compile():
    cluster = generate(
        "superpod", nodes=32, load=0.5, seed=2, leaf_size=8, fanout=(2,), occupancy=0.3
    )
    trace = load_trace_documents(
        [
            {
                "apiVersion": "toposolve/v1",
                "kind": "Trace",
                "queues": [{"name": "research"}],
                "jobs": [
                    {
                        "name": "t-{i}",
                        "count": 12,
                        "every": 20,
                        "duration": "3m",
                        "tasks": [
                            {
                                "name": "w",
                                "replicas": 4,
                                "requests": {"nvidia.com/gpu": 8, "cpu": "24", "memory": "200Gi"},
                                "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
                            }
                        ],
                    },
                    {
                        "name": "r-{i}",
                        "count": 8,
                        "arrival": 5,
                        "every": 30,
                        "duration": "2m",
                        "queue": "research",
                        "tasks": [
                            {
                                "name": "w",
                                "replicas": 3,
                                "requests": {"nvidia.com/gpu": 2, "cpu": "8"},
                            }
                        ],
                    },
                ],
            }
        ],
        "t",
    )
    solve = cycle_solver("volcano", None, time_limit=None, seed=0, evict=None)
    compared, queues = [], set()

    def solver(problem):
        assert_same_problem(compile_problem(problem.instance), problem)
        compared.append(len(problem.jobs))
        queues.update(
            job.queue for job in problem.instance.jobs if job.namespace == USAGE_NAMESPACE
        )
        return solve(problem)

    Replay(cluster, trace, solver, ReplayOptions(cycle=10)).run()
    assert len(compared) > 5 and max(compared) > len(cluster.jobs)
    assert queues == {"default", "research"}  # usage jobs of two queues were compiled


def test_cycle_problems_with_devices_equal_a_full_compile():
    from toposolve.core.instance import Instance, Node

    cluster = Instance(nodes=[Node(name=f"n{i}", allocatable={"cpu": 32, "nvidia.com/gpu": 4})
                              for i in range(4)])
    shared = {"name": "w", "replicas": 2, "requests": {"nvidia.com/gpu": "300m", "cpu": "1"},
              "deviceShare": {"milli": 300}}
    whole = {"name": "w", "replicas": 1, "requests": {"nvidia.com/gpu": 2, "cpu": "1"}}
    trace = load_trace_documents([{"apiVersion": "toposolve/v1", "kind": "Trace", "jobs": [
        {"name": "s-{i}", "count": 12, "every": 7, "duration": "40s", "tasks": [shared]},
        {"name": "w-{i}", "count": 6, "arrival": 3, "every": 11, "duration": "30s",
         "tasks": [whole]}]}], "t")
    solve = cycle_solver("volcano", None, time_limit=None, seed=0, evict=None)
    held = []

    def solver(problem):
        assert_same_problem(compile_problem(problem.instance), problem)
        held.append(int((problem.device_used[problem.device_used < 1000]).sum()))
        return solve(problem)

    Replay(cluster, trace, solver, ReplayOptions(cycle=5)).run()
    assert len(held) > 5 and max(held) > 0  # running pods' devices reached the cycles
