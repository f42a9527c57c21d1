"""A cycle compiled incrementally equals compile_problem of the same instance."""

from __future__ import annotations

import numpy as np

from toposolve.generate import generate
from toposolve.problem import compile_problem
from toposolve.replay import Replay, ReplayOptions
from toposolve.replay.engine import cycle_solver
from toposolve.replay.native_trace import load_trace_documents


def test_cycle_problems_equal_a_full_compile():
    cluster = generate("superpod", nodes=32, load=0.5, seed=2, leaf_size=8, fanout=(2,), occupancy=0.3)
    trace = load_trace_documents([{"apiVersion": "toposolve/v1", "kind": "Trace", "jobs": [
        {"name": "t-{i}", "count": 12, "every": 20, "duration": "3m",
         "tasks": [{"name": "w", "replicas": 4, "requests": {"nvidia.com/gpu": 8, "cpu": "24", "memory": "200Gi"},
                    "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}}]}]}], "t")
    solve = cycle_solver("volcano", None, time_limit=None, seed=0, evict=None)
    compared = []

    def solver(problem):
        full = compile_problem(problem.instance)
        assert full.resources == problem.resources
        for name in ("allocatable", "used", "schedulable", "group_job", "group_subjob", "group_request", "group_feasible"):
            assert np.array_equal(getattr(full, name), getattr(problem, name)), name
        for name in ("group_pending", "group_running", "running_pods", "pod_group", "group_priority", "group_task"):
            assert getattr(full, name) == getattr(problem, name), name
        assert [vars(j) for j in full.jobs] == [vars(j) for j in problem.jobs]
        assert full.topology.names == problem.topology.names
        compared.append(len(problem.jobs))
        return solve(problem)

    Replay(cluster, trace, solver, ReplayOptions(cycle=10)).run()
    assert len(compared) > 5 and max(compared) > len(cluster.jobs)
