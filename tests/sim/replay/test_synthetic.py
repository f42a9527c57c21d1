"""Synthetic traces: seeded, offered load as asked, constraints at tiers the tree has."""

from __future__ import annotations

import time

import numpy as np
import pytest

from toposolve.core.errors import InputError
from toposolve.generate import generate
from toposolve.sim.replay.synthetic import synthetic_trace


@pytest.fixture(scope="module")
def cluster():
    return generate("superpod", nodes=64, load=0.0, seed=0, leaf_size=8, fanout=(2, 2))


def test_seeded_and_sorted(cluster):
    a = synthetic_trace(cluster, jobs=50, seed=4)
    b = synthetic_trace(cluster, jobs=50, seed=4)
    assert [(tj.key, tj.arrival, tj.duration) for tj in a.jobs] == [
        (tj.key, tj.arrival, tj.duration) for tj in b.jobs
    ]
    assert a.jobs[0].arrival == 0 and [tj.arrival for tj in a.jobs] == sorted(
        tj.arrival for tj in a.jobs
    )
    assert {pc.name for pc in a.priority_classes} == {"high", "normal", "low"}


def test_offered_load_matches(cluster):
    trace = synthetic_trace(cluster, jobs=400, load=0.7, duration="1h", seed=2)
    gpus = np.array(
        [
            tj.job.tasks[0].replicas * tj.job.tasks[0].requests["nvidia.com/gpu"] / 1000
            for tj in trace.jobs
        ]
    )
    work = float((gpus * np.array([tj.duration for tj in trace.jobs])).sum())
    span = trace.jobs[-1].arrival
    assert work / span / 512 == pytest.approx(0.7, rel=0.15)


def test_constraints_at_real_tiers(cluster):
    trace = synthetic_trace(cluster, jobs=200, hard=1.0, soft=0.0, partitioned=0.0, seed=1)
    tiers = {
        tj.job.network_topology.highest_tier_allowed for tj in trace.jobs if tj.job.network_topology
    }
    assert tiers and tiers <= {1, 2, 3, 4}  # leaves, spines, cores, top
    hard = [
        tj
        for tj in trace.jobs
        if tj.job.network_topology and tj.job.network_topology.mode == "hard"
    ]
    assert len(hard) > 150


def test_an_unknown_job_mix_is_refused(cluster):
    with pytest.raises(InputError, match="mix"):
        synthetic_trace(cluster, mix="tpu")


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"jobs": 0}, "jobs"),
        ({"jobs": 10**9}, "jobs"),
        ({"jobs": 2.5}, "jobs"),
        ({"load": float("nan")}, "load"),
        ({"load": float("inf")}, "load"),
        ({"load": 1e12}, "load"),
        ({"load": 0}, "load"),
        ({"sigma": -1}, "sigma"),
        ({"sigma": 1e9}, "sigma"),
        ({"hard": 2}, "hard"),
        ({"seed": -1}, "seed"),
        ({"duration": "forever"}, "duration"),
        ({"duration": 1e308, "sigma": 10}, "duration"),  # durations past any float
    ],
)
def test_options_are_refused_at_once_naming_the_option(cluster, kwargs, field):
    start = time.perf_counter()
    with pytest.raises(InputError) as info:
        synthetic_trace(cluster, **{"jobs": 20, **kwargs})
    assert info.value.field == field and info.value.obj == "synthetic trace"
    assert time.perf_counter() - start < 5
