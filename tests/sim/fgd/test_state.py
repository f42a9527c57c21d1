"""Device placement rules of the per-device state."""

from __future__ import annotations

import numpy as np
import pytest

from tests.sim.fgd.builders import make_nodes, make_pods
from toposolve.sim.fgd import State, feasible, place


def test_shared_pod_takes_part_of_one_device():
    state = State.empty(make_nodes([2], [8000]))
    pods = make_pods([(1000, 10, 1, 600), (1000, 10, 1, 500), (1000, 10, 1, 600)])
    place(state, pods, 0, 0, (0,))
    assert state.gpu_left[0].tolist() == [400, 1000]
    assert feasible(state, pods, 1).tolist() == [True]  # device 1 still has room
    place(state, pods, 1, 0, (1,))
    # 400 + 500 free in all, but no one device has 600: the node is full for this pod
    assert feasible(state, pods, 2).tolist() == [False]
    with pytest.raises(ValueError):
        place(state, pods, 2, 0, (0,))
    assert state.allocated_milli() == 1100
    assert state.allocation_ratio() == pytest.approx(1100 / 2000)


def test_whole_gpu_pods_need_free_devices():
    state = State.empty(make_nodes([2, 4], [8000, 8000]))
    pods = make_pods([(100, 1, 1, 100), (100, 1, 2, 1000), (100, 1, 1, 1000)])
    place(state, pods, 0, 0, (1,))  # a 0.1 share makes device 1 of node 0 not free
    assert feasible(state, pods, 1).tolist() == [False, True]
    assert feasible(state, pods, 2).tolist() == [True, True]
    with pytest.raises(ValueError):
        place(state, pods, 1, 0, (0, 1))
    with pytest.raises(ValueError):
        place(state, pods, 1, 1, (2, 2))  # two distinct devices
    place(state, pods, 1, 1, (2, 3))
    assert state.gpu_left[1].tolist() == [1000, 1000, 0, 0]


def test_cpu_memory_and_model_respected():
    state = State.empty(make_nodes([2, 0], [4000, 8000], mem=100))
    pods = make_pods([(5000, 10, 0, 0), (1000, 200, 0, 0), (1000, 10, 0, 0),
                      (1000, 10, 1, 500, {1})])
    assert feasible(state, pods, 0).tolist() == [False, True]
    assert feasible(state, pods, 1).tolist() == [False, False]
    assert feasible(state, pods, 2).tolist() == [True, True]
    assert feasible(state, pods, 3).tolist() == [False, False]  # model B is on no node
    with pytest.raises(ValueError):
        place(state, pods, 0, 0, ())
    place(state, pods, 2, 0, ())
    assert (state.cpu_left[0], state.mem_left[0], state.version[0]) == (3000, 90, 1)
    assert np.array_equal(state.gpu_left[0], [1000, 1000])
    assert state.gpu_left[1].tolist() == [0, 0]  # a GPU-less node's slots hold nothing
