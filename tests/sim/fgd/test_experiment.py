"""The experiment loop: one attempt per pod, the allocation ratio, determinism per seed."""

from __future__ import annotations

import numpy as np

from tests.sim.fgd.builders import make_nodes, make_pods
from toposolve.sim.fgd import (
    Experiment,
    experiment,
    load_nodes,
    load_pods,
    make_policy,
    run_experiment,
    typical_pods,
)


def test_one_attempt_and_allocation_ratio():
    nodes = make_nodes([2], [8000])
    pods = make_pods([(1000, 1, 1, 700), (1000, 1, 2, 1000), (1000, 1, 1, 500),
                      (1000, 1, 1, 300)])
    exp = Experiment(pods, np.array([0]), 0)
    run = run_experiment(nodes, exp, make_policy("BestFit", exp.rank, 0, typical_pods(pods)),
                         "BestFit")
    # 700 on device 0; two whole GPUs no longer fit (dropped); 500 on device 1; 300 on device 0
    assert run.node.tolist() == [0, -1, 0, 0]
    assert run.arrived.tolist() == [700, 2700, 3200, 3500]
    assert run.allocated.tolist() == [700, 700, 1200, 1500]
    assert run.ratio == 1500 / 2000
    assert run.ratio_at(1.0) == 700 / 2000  # when arrivals first reach 100 % of capacity


def test_openb_seed_deterministic_and_ordered():
    nodes = load_nodes()
    trace = load_pods(nodes.models)
    tp = typical_pods(trace)
    exp = experiment(nodes, trace, 42, ratio=1.1)
    runs = {name: run_experiment(nodes, exp, make_policy(name, exp.rank, 42, tp), name)
            for name in ("Random", "FGD")}
    again = run_experiment(nodes, exp, make_policy("FGD", exp.rank, 42, tp), "FGD")
    assert np.array_equal(again.node, runs["FGD"].node)
    assert runs["FGD"].ratio > runs["Random"].ratio
    curve = runs["FGD"].curve(0.1)
    assert [x for x, _ in curve[:-1]] == [round(0.1 * k, 4) for k in range(1, 11)]
    assert curve[-1] == (round(runs["FGD"].arrived[-1] / 6212000, 6), round(runs["FGD"].ratio, 6))
    assert all(a <= b for (_, a), (_, b) in zip(curve, curve[1:], strict=False))
