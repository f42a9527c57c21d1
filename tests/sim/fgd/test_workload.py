"""FGD's workload: shuffle, tuning to a GPU load, target workload, the openb data."""

from __future__ import annotations

import numpy as np
import pytest

from tests.sim.fgd.builders import make_pods
from toposolve.sim.fgd import experiment, load_nodes, load_pods, tune, typical_pods


def test_tune_up_stops_at_first_copy_past_target():
    base = make_pods([(100, 1, 1, 300)] * 3 + [(100, 1, 0, 0)])  # 900 milli asked
    for seed in range(20):
        tuned = tune(base, capacity=1000, ratio=2.05, rng=np.random.default_rng(seed))
        total = int(tuned.gpu_milli.sum())
        assert 2050 - 300 < total <= 2050  # one more 300-milli copy would pass the target
        assert tuned.names[:4] == base.names
        assert all(n.split("-tuned-")[0] in base.names for n in tuned.names[4:])


def test_tune_checks_milli_per_device_as_the_simulator_does():
    # an 8-GPU copy is checked by its per-device milli (8000 + 1000 <= 12000) but adds 8000,
    # passing the target; the next copy stops (16000 + 1000 > 12000)
    base = make_pods([(100, 1, 8, 1000)])
    tuned = tune(base, capacity=8000, ratio=1.5, rng=np.random.default_rng(0))
    assert tuned.gpu_milli.sum() == 16000 and len(tuned) == 2


def test_tune_down_removes_pods():
    base = make_pods([(100, 1, 1, 1000)] * 10)
    tuned = tune(base, capacity=10_000, ratio=0.5, rng=np.random.default_rng(3))
    assert tuned.gpu_milli.sum() == 5000 and set(tuned.names) <= set(base.names)


def test_typical_pods_cut_at_popularity():
    rows = [(1000, 1, 1, 500)] * 60 + [(2000, 1, 1, 1000)] * 36 + [(500, 1, 0, 0)] * 4
    tp = typical_pods(make_pods(rows))
    assert tp.milli.tolist() == [500, 1000]  # 60 % + 36 % ≥ 95 %: the CPU shape is cut
    assert tp.weight.tolist() == pytest.approx([60 / 96, 36 / 96])
    tp = typical_pods(make_pods(rows), threshold=100)
    assert tp.milli.tolist() == [500, 1000, 0] and not tp.access[2].any()


def test_openb_experiment_deterministic_per_seed():
    nodes = load_nodes()
    trace = load_pods(nodes.models)
    assert (len(nodes.names), int(nodes.gpus.sum()), len(trace)) == (1213, 6212, 8152)
    a, b, c = (experiment(nodes, trace, s) for s in (42, 42, 43))
    assert a.pods.names == b.pods.names and np.array_equal(a.rank, b.rank)
    assert a.pods.names != c.pods.names
    load = a.pods.gpu_milli.sum() / nodes.gpu_capacity
    assert 1.3 - 8 / 6212 < load <= 1.3
    assert sorted(a.pods.names[:8152]) == sorted(trace.names)
