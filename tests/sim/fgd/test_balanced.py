"""BalancedFGD: FGD's score first, then the CPU-to-GPU balance gain, then the node rank."""

from __future__ import annotations

import numpy as np
import pytest

from tests.sim.fgd.builders import make_nodes, make_pods
from toposolve.policy.fgd_measure import TargetWorkload
from toposolve.sim.fgd import State, feasible, make_policy, place
from toposolve.sim.fgd.balanced import BalancedFGDPolicy, balance_gain, cpu_per_gpu
from toposolve.sim.fgd.policies import FGDPolicy


def workload(rows: list[tuple[int, int, int, float]]) -> TargetWorkload:
    """A target workload from ``(cpu, milli, count, share)`` rows (model A and B allowed)."""
    col = [np.array([r[j] for r in rows]) for j in range(4)]
    access = np.array([[r[1] > 0] * 2 for r in rows], dtype=bool)
    return TargetWorkload(cpu=col[0].astype(np.int64), milli=col[1].astype(np.int64),
                       count=col[2].astype(np.int64), access=access, weight=col[3] / col[3].sum())


# 0.5-GPU shares with one core each: 2 milli-CPU per milli-GPU
SHARES = workload([(1000, 500, 1, 1.0)])


def test_cpu_per_gpu_weighs_shapes_by_popularity():
    # CPU: .5 × 4000 + .5 × 8000 = 6000; GPU: .5 × 500 (the CPU-only shape adds none) = 250
    assert cpu_per_gpu(workload([(4000, 500, 1, 1.0), (8000, 0, 0, 1.0)])) == 24.0
    assert cpu_per_gpu(workload([(2000, 1000, 2, 3.0), (1000, 500, 1, 1.0)])) == pytest.approx(
        (0.75 * 2000 + 0.25 * 1000) / (0.75 * 2000 + 0.25 * 500))
    with pytest.raises(ValueError, match="no GPU"):
        cpu_per_gpu(workload([(4000, 0, 0, 1.0)]))


def test_balance_gain_in_whole_cores():
    cpu, gpu = np.array([20000, 8000, 10000]), np.array([1000, 1000, 500])
    # ratio 10: imbalance |20000 - 10000| = 10000 -> |12000 - 5000| = 7000: 3 cores better;
    # |8000 - 10000| = 2000 -> |0 - 5000| = 5000: 3 cores worse; |10000 - 5000| = 5000 ->
    # |2000 - 0| = 2000: 3 cores better
    assert balance_gain(cpu, gpu, 8000, 500, 10.0).tolist() == [3, -3, 3]
    # rounded to the nearest core, half to even: 1499 -> 1, 1500 -> 2, 2500 -> 2
    assert balance_gain(np.array([9000] * 3), np.array([0] * 3), 0, 0, 1.0).tolist() == [0] * 3
    gains = [balance_gain(np.array([10000]), np.array([0]), c, 0, 1.0)[0]
             for c in (1499, 1500, 2500)]
    assert gains == [1, 2, 2]


def test_breaks_fgd_ties_by_balance_not_rank():
    # a CPU-only pod of 4 cores: both nodes keep 1 core for the 0.5 shares, FGD scores 50 on
    # both and takes the lowest rank; balance (2 milli-CPU per milli-GPU): n0 has 5000 CPU for
    # 2000 milli-GPU (1000 over) -> 1000 CPU (3000 short): 2 cores worse; n1 64000 -> 60000
    # for 2000 milli-GPU: 4 cores better
    state = State.empty(make_nodes([2, 2], [5000, 64000]))
    pods = make_pods([(4000, 1, 0, 0)])
    both = np.array([0, 1])
    assert make_policy("FGD", np.array([0, 1]), 0, SHARES).choose(state, pods, 0, both)[0] == 0
    for rank in ([0, 1], [1, 0]):
        assert make_policy("BalancedFGD", np.array(rank), 0, SHARES).choose(
            state, pods, 0, both) == (1, ())


def test_equal_gain_goes_to_the_lowest_rank():
    state = State.empty(make_nodes([2, 2], [8000, 8000]))
    pods = make_pods([(1000, 1, 1, 500)])
    both = np.array([0, 1])
    assert make_policy("BalancedFGD", np.array([0, 1]), 0, SHARES).choose(
        state, pods, 0, both) == (0, (0,))
    assert make_policy("BalancedFGD", np.array([1, 0]), 0, SHARES).choose(
        state, pods, 0, both) == (1, (0,))


def test_fgd_score_comes_before_balance():
    # a whole-GPU pod of 1 core: on n0 (1500 CPU) it leaves 500 CPU, too little for the
    # shares: 1000 milli-GPU become fragment, int(sigmoid(-1) × 100) = 26; on n1 (4000 CPU)
    # nothing is lost: 50. Balance alone would pick n0 (|1500 - 4000| = 2500 -> |500 - 2000|
    # = 1500: 1 core better; n1: 0 -> |3000 - 2000|: 1 core worse)
    state = State.empty(make_nodes([2, 2], [1500, 4000]))
    pods = make_pods([(1000, 1, 1, 1000)])
    policy = make_policy("BalancedFGD", np.array([0, 1]), 0, SHARES)
    score, _ = policy.node_scores(state, pods, 0, np.array([0, 1]))
    assert score.tolist() == [26, 50]
    assert policy.choose(state, pods, 0, np.array([0, 1])) == (1, (0,))


def test_every_choice_has_fgds_best_score_and_is_repeatable():
    rng = np.random.default_rng(5)
    nodes = make_nodes(rng.integers(1, 5, 12).tolist(), rng.integers(8, 40, 12).tolist())
    nodes = make_nodes(nodes.gpus.tolist(), (nodes.cpu * 1000).tolist())
    shapes = [(2000, 1, 1, 500), (4000, 1, 1, 1000), (1000, 1, 1, 300), (6000, 1, 0, 0),
              (3000, 1, 2, 1000)]
    pods = make_pods([shapes[k] for k in rng.integers(len(shapes), size=80)])
    tp = workload([(s[0], s[3], s[2], 1.0) for s in shapes])
    plans = []
    for _ in range(2):
        state, plan = State.empty(nodes), []
        policy = BalancedFGDPolicy(np.arange(12)[::-1].copy(), rng, tp)
        judge = FGDPolicy(np.arange(12), rng, tp)
        for i in range(len(pods)):
            ok = np.flatnonzero(feasible(state, pods, i))
            if not len(ok):
                plan.append(None)
                continue
            score, _ = judge.node_scores(state, pods, i, ok)
            node, devices = policy.choose(state, pods, i, ok)
            assert score[ok == node][0] == score.max()
            place(state, pods, i, node, devices)  # raises if the devices do not fit
            plan.append((node, devices))
        plans.append(plan)
    assert plans[0] == plans[1]
    assert sum(p is not None for p in plans[0]) > 20
