"""The fragmented case builder (``generate/defrag.py``) of ``bench_defrag.py --families``."""

from __future__ import annotations

import numpy as np
import pytest

from toposolve import defrag
from toposolve.core.problem import compile_problem
from toposolve.generate import generate
from toposolve.generate.defrag import GPU, fragmented


def _free_by_leaf(instance):
    topo = compile_problem(instance).topology
    index = {n.name: i for i, n in enumerate(instance.nodes)}
    free = np.array([n.allocatable[GPU] for n in instance.nodes])
    for job in instance.jobs:
        for task in job.tasks:
            for node in task.running.values():
                free[index[node]] -= task.requests[GPU]
    return free, np.asarray(topo.node_home)


def test_target_blocked_in_every_leaf_but_idle_gpus_suffice():
    case = fragmented(generate("nvl72", nodes=72, seed=1), target_pods=12, target_gpus=4,
                      seed=1, pod_gpus=(1,), pod_weights=(1.0,))
    inst = case.instance
    free, home = _free_by_leaf(inst)
    assert (free >= 0).all()
    for leaf in set(home.tolist()):
        assert (free[home == leaf] >= 4000).sum() < 12  # no rack holds the target as it is
    assert free.sum() == case.idle_gpus * 1000 >= 12 * 4000
    running = [j for j in inst.jobs if j.key != case.target]
    assert len(running) == case.running_jobs
    assert sum(len(t.running) for j in running for t in j.tasks) == case.running_pods
    assert {j.priority_class for j in running} == {"low"}
    target = next(j for j in inst.jobs if j.key == case.target)
    assert target.priority_class == "high" and target.network_topology.highest_tier_allowed == 1
    plan = defrag(inst, [case.target], engine="greedy")  # fragmentation only: moves admit it
    assert plan.stats["defrag"]["admitted"] == [case.target]
    assert plan.stats["defrag"]["moved_jobs"]


def test_seeded_and_checked():
    base = generate("nvl72", nodes=72, seed=0)
    a = fragmented(base, target_pods=10, target_gpus=4, seed=3)
    b = fragmented(base, target_pods=10, target_gpus=4, seed=3)
    assert a.instance.model_dump() == b.instance.model_dump()
    with pytest.raises(ValueError, match="no leaf"):
        fragmented(base, target_pods=19, target_gpus=4)
