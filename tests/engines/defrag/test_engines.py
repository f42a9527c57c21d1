"""Both defrag engines on instances whose fewest moves are known: by construction (the rack
family) and by brute force (tiny random clusters)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.builders import GPU, hard, inner, leaf, nodes
from toposolve.check.checker import check_plan
from toposolve.core.instance import Instance, Job, Task
from toposolve.defrag import defrag
from toposolve.generate.defrag import TARGET, defrag_family


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("shape", [dict(k=8, lo=1, hi=1), dict(k=6, lo=3, hi=4),
                                   dict(k=7, lo=2, hi=3)])
def test_cpsat_finds_the_known_minimum_and_greedy_a_valid_one(seed, shape):
    fam = defrag_family(6, seed=seed, **shape)
    exact = defrag(fam.instance, [TARGET], engine="cpsat", time_limit=20)
    d = exact.stats["defrag"]
    assert d["admitted"] == [TARGET]
    assert d["move_cost"] == len(d["moved_jobs"]) == fam.minimum
    assert d["proven_minimal"] and d["bound"] == pytest.approx(fam.minimum)
    greedy = defrag(fam.instance, [TARGET], engine="greedy")
    g = greedy.stats["defrag"]
    assert g["admitted"] == [TARGET] and g["move_cost"] >= fam.minimum
    for plan in (exact, greedy):
        assert check_plan(fam.instance, plan, eviction_mode="none") == []
        assert len(plan.bindings) == shape["k"] and not plan.evictions


def _tiny(seed: int) -> Instance:
    """Two racks of two 4-GPU nodes, a few running 1-2 pod jobs, a 2-3 pod pending gang hard-
    limited to one rack."""
    rng = np.random.default_rng(seed)
    cluster = nodes(4, gpus=4000)
    tree = [leaf("r0", ["node0", "node1"]), leaf("r1", ["node2", "node3"]),
            inner("spine", ["r0", "r1"], 2)]
    free = {n.name: 4 for n in cluster}
    jobs = []
    for i in range(int(rng.integers(3, 6))):
        pods, gpus = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        running = {}
        for p in range(pods):
            fits = [n for n, f in free.items() if f >= gpus]
            if not fits:
                break
            node = fits[int(rng.integers(len(fits)))]
            free[node] -= gpus
            running[p] = node
        if len(running) < pods:
            continue
        topo = hard(1) if rng.random() < 0.3 and len({running[p][:5] for p in running}) else None
        job = Job(name=f"j{i}", min_available=pods, network_topology=topo, tasks=[Task(
            name="w", replicas=pods, requests={GPU: gpus * 1000}, running=running)])
        jobs.append(job)
    target = Job(name="big", min_available=2, network_topology=hard(1),
                 tasks=[Task(name="w", replicas=2, requests={GPU: int(rng.integers(2, 5)) * 1000})])
    return Instance(nodes=cluster, hypernodes=tree, jobs=[*jobs, target])


RACK = {"node0": "r0", "node1": "r0", "node2": "r1", "node3": "r1"}


def _tier(names: list[str]) -> int:
    return 1 if len({RACK[n] for n in names}) == 1 else 2


def _fits(instance: Instance, moved: set[str]) -> bool:
    """Exhaustive: can the moved jobs and the target all be placed within the rules?"""
    free = {n.name: n.allocatable[GPU] for n in instance.nodes}
    pods = []  # (job, request, allowed tier)
    for job in instance.jobs[:-1]:
        task = job.tasks[0]
        if job.name in moved:
            was = _tier(list(task.running.values()))
            pods += [(job.name, task.requests[GPU], was)] * task.replicas
        else:
            for node in task.running.values():
                free[node] -= task.requests[GPU]
    target = instance.jobs[-1].tasks[0]
    pods += [("big", target.requests[GPU], 1)] * target.replicas
    names = list(free)
    for choice in itertools.product(names, repeat=len(pods)):
        left = dict(free)
        for (_, req, _), node in zip(pods, choice, strict=True):
            left[node] -= req
        if min(left.values()) < 0:
            continue
        where: dict[str, list[str]] = {}
        for (job, _, _), node in zip(pods, choice, strict=True):
            where.setdefault(job, []).append(node)
        if all(_tier(where[job]) <= tier for job, _, tier in pods):
            return True
    return False


def _brute_minimum(instance: Instance) -> int | None:
    running = [j for j in instance.jobs[:-1]]
    best = None
    for size in range(len(running) + 1):
        for subset in itertools.combinations(running, size):
            cost = sum(j.tasks[0].replicas for j in subset)
            if (best is None or cost < best) and _fits(instance, {j.name for j in subset}):
                best = cost
    return best


@pytest.mark.parametrize("seed", range(8))
def test_cpsat_matches_brute_force_on_tiny_clusters(seed):
    instance = _tiny(seed)
    expected = _brute_minimum(instance)
    plan = defrag(instance, ["default/big"], engine="cpsat", time_limit=10)
    d = plan.stats["defrag"]
    if expected is None:
        assert d["admitted"] == [] and plan.job("default/big").reason
    else:
        assert d["admitted"] == ["default/big"] and d["proven_minimal"]
        assert d["move_cost"] == expected
    greedy = defrag(instance, ["default/big"], engine="greedy").stats["defrag"]
    if greedy["admitted"]:
        assert expected is not None and greedy["move_cost"] >= expected


def test_a_full_model_too_large_to_build_falls_back_to_the_greedy_plan(monkeypatch):
    from toposolve.engines.defrag import cpsat

    fam = defrag_family(6, seed=0, k=6, lo=3, hi=4)
    exact = defrag(fam.instance, free={1: 6})  # no 6 racks can be idle: the master's fail
    assert exact.stats["path"] == "full model" and len(exact.stats["defrag"]["freed"]) == 3
    monkeypatch.setattr(cpsat, "FULL_MODEL_LIMIT", 0)
    plan = defrag(fam.instance, free={1: 6})
    greedy = defrag(fam.instance, free={1: 6}, engine="greedy")
    assert plan.stats["path"].startswith("greedy: full model too large (")
    assert plan.moves == greedy.moves and plan.bound is None
    assert not plan.stats["defrag"]["proven_minimal"]
    assert "not proven" in plan.stats["defrag"]["free_reason"]
    assert check_plan(fam.instance, plan, eviction_mode="none") == []
