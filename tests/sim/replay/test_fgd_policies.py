"""FGD's policies as replay engines: checked plans on devices, deterministic, refusals."""

from __future__ import annotations

import pytest

from toposolve.core.errors import InputError
from toposolve.core.instance import Instance, Node
from toposolve.formats.trace.native import load_trace_documents
from toposolve.sim.replay import replay
from toposolve.sim.replay.fgd_policies import ENGINES

GPU = "nvidia.com/gpu"


def cluster():
    return Instance(nodes=[
        Node(name=f"n{i}", labels={"alibaba.com/gpu-model": "V100M16"},
             allocatable={"cpu": 16 + 16 * i, "memory": "64Gi", GPU: 2 + 2 * (i % 2)})
        for i in range(4)])


def trace(shared=True, replicas=1):
    jobs = []
    for k, (milli, cpu) in enumerate([(500, 2), (300, 8), (1000, 4), (700, 1)] * 5):
        task = {"name": "w", "replicas": replicas,
                "requests": {"cpu": cpu, "memory": "1Gi", GPU: f"{milli}m"}}
        if shared and milli < 1000:
            task["deviceShare"] = {"milli": milli}
        jobs.append({"name": f"j{k}", "arrival": k, "tasks": [task]})
    return load_trace_documents([{"apiVersion": "toposolve/v1", "kind": "Trace",
                                  "jobs": jobs}], "t")


@pytest.mark.parametrize("engine", ENGINES)
def test_each_policy_replays_with_checked_plans_and_repeats(engine):
    first = replay(cluster(), trace(), engine, cycle=3, max_wait=0, seed=42)
    again = replay(cluster(), trace(), engine, cycle=3, max_wait=0, seed=42)
    assert first.summary["jobs_dropped"] < first.summary["jobs"]  # every plan was checked
    assert [r["status"] for r in first.jobs] == [r["status"] for r in again.jobs]
    assert first.summary["final_allocation_ratio"] == again.summary["final_allocation_ratio"]


def test_pooled_sharing_and_gangs_are_refused_in_one_line():
    with pytest.raises(InputError, match="needs per-device sharing"):
        replay(cluster(), trace(shared=False), "fgd:FGD", cycle=3, max_wait=0)
    with pytest.raises(InputError, match="one-pod jobs only"):
        replay(cluster(), trace(replicas=2), "fgd:FGD", cycle=3, max_wait=0)
    with pytest.raises(InputError, match="unknown engine"):
        replay(cluster(), trace(), "fgd:Best", cycle=3)
