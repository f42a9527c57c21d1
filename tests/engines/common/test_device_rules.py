"""The device kernel's rules (first fit, KAI's pack) and the device-aware capacity's rollback."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tests.device_cases import gpu_nodes, share
from toposolve.core.instance import Instance
from toposolve.core.problem import compile_problem
from toposolve.engines.common.capacity import Capacity
from toposolve.engines.common.devices import (
    PACK,
    DeviceCapacity,
    capacity_for,
    device_fit,
    pick_devices,
)


@given(st.lists(st.integers(0, 1000), min_size=1, max_size=8),
       st.sampled_from([100, 250, 300, 500, 700, 1000]), st.integers(1, 3))
def test_pack_fit_is_what_pods_placed_one_by_one_take(free, milli, count):
    free = np.array(free, dtype=np.int64)
    room, placed = free.copy(), 0
    while (picked := pick_devices(room, milli, count, PACK)) is not None:
        assert len(set(picked)) == count and (room[list(picked)] >= milli).all()
        room[list(picked)] -= milli
        placed += 1
    assert device_fit(free[None, :], milli, count, PACK)[0] == placed


def test_device_capacity_takes_devices_and_rolls_them_back():
    running = share("r", 600, running={0: "n0"}, device_use={0: {1: 600}})
    problem = compile_problem(Instance(nodes=gpu_nodes(2), jobs=[running, share("a", 300,
                                                                               replicas=3)]))
    cap = capacity_for(problem, PACK)
    assert isinstance(cap, DeviceCapacity)
    group = next(g for g in range(len(problem.group_pending)) if problem.group_pending[g])
    saved = cap.snapshot()
    assert cap.fit_counts_of(group, np.array([0]))[0] == 4  # 1000m // 300 + 400m // 300
    cap.take(group, 0, 2)
    assert cap.picks == {(group, 0): [(1,), (0,)]}  # the 600m device first, then the idle one
    assert cap.room.free[0].tolist() == [700, 100]
    cap.restore(saved.copy())
    assert cap.picks == {} and cap.room.free[0].tolist() == [1000, 400]
    cap.take(group, 0, 1)
    cap.restore(saved.copy())  # a snapshot restores again, untouched by the takes between
    assert cap.picks == {} and cap.room.free[0].tolist() == [1000, 400]


def test_without_devices_the_plain_capacity():
    problem = compile_problem(Instance(nodes=gpu_nodes(2), jobs=[]))
    assert type(capacity_for(problem, PACK)) is Capacity
