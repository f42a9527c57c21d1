"""Each policy's choice on a small hand-made cluster (scores worked out in the comments)."""

from __future__ import annotations

import numpy as np

from tests.sim.fgd.builders import make_nodes, make_pods
from toposolve.policy.fgd_measure import TargetWorkload
from toposolve.sim.fgd import State, make_policy, place

# target workload: 0.5-GPU shares only
SHARES = TargetWorkload(cpu=np.array([1000]), milli=np.array([500]), count=np.array([1]),
                     access=np.array([[True, True]]), weight=np.array([1.0]))


def cluster() -> tuple[State, object]:
    """n0: 2 free GPUs, 8 CPUs; n1: 8 GPUs, device 0 has 600 left, 96 CPUs (1 used)."""
    state = State.empty(make_nodes([2, 8], [8000, 97000]))
    pods = make_pods([(1000, 1, 1, 400), (1000, 1, 1, 200), (500, 1, 0, 0)])
    place(state, pods, 0, 1, (0,))
    return state, pods


def choose(name: str, rank: list[int], pod: int = 1):
    state, pods = cluster()
    policy = make_policy(name, np.array(rank), 0, SHARES)
    return policy.choose(state, pods, pod, np.array([0, 1]))


def test_best_fit_prefers_least_left():
    # n0: 1 - (7000/128000 + 1800/8000)/2 = 0.860 -> 86; n1: 1 - (95000/128000 + 7400/8000)/2
    # = 0.166 -> 16; a share takes the fullest device it fits (both free: the first)
    assert choose("BestFit", [0, 1]) == (0, (0,))
    assert choose("BestFit", [1, 0]) == (0, (0,))


def test_gpu_packing_prefers_used_devices():
    # n0 untouched: max(33 - 2, 2) = 31; n1: the share fits device 0 (600 left, 60 %):
    # 100 - 60 // 10 = 94; it goes on the best-fit device, device 0
    assert choose("GpuPacking", [0, 1]) == (1, (0,))
    # a CPU-only pod scores 0 everywhere: the lowest-rank node
    assert choose("GpuPacking", [1, 0], pod=2)[0] == 1
    assert choose("GpuPacking", [0, 1], pod=2)[0] == 0


def test_fgd_keeps_room_for_typical_shares():
    # before: n0 and n1 have no fragment (every free device fits a 0.5 share)
    # n0 device 0 -> 800 left: still fits 0.5: delta 0, sigmoid(0) -> 50
    # n1 device 0 -> 400 left: 400 lost: sigmoid(-0.4) -> 40; device 1 -> 800: 50
    # tie at 50 between n0 (device 0) and n1 (device 1): the lower rank wins
    assert choose("FGD", [0, 1]) == (0, (0,))
    assert choose("FGD", [1, 0]) == (1, (1,))


def test_random_is_feasible_and_seeded():
    state, pods = cluster()
    picks = []
    for seed in range(30):
        policy = make_policy("Random", np.array([0, 1]), seed, SHARES)
        picks.append(policy.choose(state, pods, 1, np.array([0, 1])))
    again = make_policy("Random", np.array([0, 1]), 7, SHARES).choose(state, pods, 1,
                                                                        np.array([0, 1]))
    assert again == picks[7]
    assert {node for node, _ in picks} == {0, 1}
    assert all(state.gpu_left[node][d] >= 200 for node, (d,) in picks)
    assert len({devs for node, devs in picks if node == 1}) > 1  # devices drawn too
