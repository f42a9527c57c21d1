"""Instances with per-device GPU sharing for the engines' device tests (builders and a
hypothesis strategy)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from toposolve.check.checker import check_plan
from toposolve.core.assignment import to_plan
from toposolve.core.instance import (
    HyperNode,
    Instance,
    Job,
    Member,
    NetworkTopology,
    Node,
    Task,
)
from toposolve.core.problem import compile_problem

GPU = "nvidia.com/gpu"


def share(name, milli, replicas=1, count=1, **extra):
    task = Task(name="w", replicas=replicas, requests={"cpu": 1, GPU: f"{milli * count}m"},
                device_share={"milli": milli, "count": count}, **extra)
    return Job(name=name, min_available=replicas, tasks=[task])


def whole(name, gpus, replicas=1, **extra):
    task = Task(name="w", replicas=replicas, requests={"cpu": 1, GPU: gpus}, **extra)
    return Job(name=name, min_available=replicas, tasks=[task])


def gpu_nodes(*gpus):
    return [Node(name=f"n{i}", allocatable={"cpu": 64, GPU: g}) for i, g in enumerate(gpus)]


def racked(nodes, jobs, **extra):
    """An instance of ``nodes`` under one rack HyperNode (Kueue's TAS needs a Topology)."""
    rack = HyperNode(name="rack", tier=1, members=[Member.exact(n.name) for n in nodes])
    return Instance(nodes=nodes, hypernodes=[rack], jobs=jobs, **extra)


@st.composite
def device_instances(draw, max_nodes=6, max_jobs=8, shares=(100, 250, 500, 600, 1000)):
    """Nodes of 0-8 GPUs under 1-2 racks, running pods on consistent devices, pending shared,
    multi-device shared and whole-GPU jobs (gangs of 1-3 pods, some with a hard rack limit)."""
    gpus = draw(st.lists(st.sampled_from([0, 1, 2, 4, 8]), min_size=1, max_size=max_nodes))
    nodes = gpu_nodes(*gpus)
    racks = [HyperNode(name=f"rack{r}", tier=1, members=[
        Member.exact(n.name) for n in nodes[r::2]])
        for r in range(min(2, len(nodes)))]
    free = [np.full(g, 1000) for g in gpus]
    jobs = []
    for k in range(draw(st.integers(0, 6))):  # running shared pods on devices with room
        n = draw(st.integers(0, len(nodes) - 1))
        milli = draw(st.sampled_from([100, 300, 500, 700]))
        fits = np.flatnonzero(free[n] >= milli)
        if fits.size:
            d = int(fits[draw(st.integers(0, fits.size - 1))])
            free[n][d] -= milli
            jobs.append(share(f"run{k}", milli, running={0: nodes[n].name},
                              device_use={0: {d: milli}}))
    for k in range(draw(st.integers(1, max_jobs))):
        replicas = draw(st.integers(1, 3))
        kind = draw(st.sampled_from(["share", "multi", "whole"]))
        if kind == "whole":
            job = whole(f"p{k}", draw(st.integers(1, 4)), replicas=replicas)
        else:
            count = 1 if kind == "share" else 2
            job = share(f"p{k}", draw(st.sampled_from(shares)), replicas,
                        count=count)
        if draw(st.booleans()):
            job.network_topology = NetworkTopology(mode="hard", highest_tier_allowed=1)
        jobs.append(job)
    return Instance(nodes=nodes, hypernodes=racks, jobs=jobs)


def checked_device_plan(instance, engine, run):
    """``run``'s plan of ``instance`` (named ``engine``), asserted checker-valid with devices on
    every binding exactly when the instance shares a resource per device."""
    problem = compile_problem(instance)
    plan = to_plan(problem, run(problem), engine=engine, status="FEASIBLE")
    assert check_plan(instance, plan, eviction_mode="none") == []
    shared = instance.device_resource is not None
    assert all((b.devices is not None) == shared for b in plan.bindings)
    return plan
