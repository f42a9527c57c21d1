"""The device kernel: which devices a pod takes and how many pods of a shape fit."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from toposolve.core.limits import UNLIMITED
from toposolve.engines.common.devices import device_fit, pick_devices


def test_shapes_without_devices_fit_unlimited():
    assert device_fit(np.zeros((3, 2), dtype=np.int64), 0, 0).tolist() == [UNLIMITED] * 3


def _sequential(free, milli, count):
    room, placed = free.copy(), 0
    while (picked := pick_devices(room, milli, count)) is not None:
        room[list(picked)] -= milli
        placed += 1
    return placed


@given(st.lists(st.integers(0, 1000), min_size=1, max_size=8),
       st.sampled_from([100, 250, 300, 500, 700, 1000]), st.integers(1, 3))
def test_fit_is_what_pods_placed_one_by_one_take(free, milli, count):
    free = np.array(free, dtype=np.int64)
    assert device_fit(free[None, :], milli, count)[0] == _sequential(free, milli, count)
