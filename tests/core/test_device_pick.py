"""One pod's devices under each device rule: first fit (Volcano's gpushare) and KAI's pack."""

from __future__ import annotations

import numpy as np

from toposolve.core.device_pick import FIRST_FIT, PACK, pick_devices


def test_lowest_index_device_that_fits():
    free = np.array([200, 400, 700, 1000])
    assert pick_devices(free, 300, 1) == (1,)  # Volcano gpushare: ids[0] of the fitting ones
    assert pick_devices(free, 500, 1) == (2,)
    assert pick_devices(free, 800, 1) == (3,)
    assert pick_devices(free, 300, 2) == (1, 2)
    assert pick_devices(free, 1000, 2) is None
    assert pick_devices(np.array([1000, 1000, 0, 1000]), 1000, 2) == (0, 1)



def test_pack_takes_the_fullest_device_that_fits():
    free = np.array([200, 400, 700, 1000, 400])
    assert pick_devices(free, 300, 1, PACK) == (1,)  # 600m used: the most that still fits
    assert pick_devices(free, 300, 1, FIRST_FIT) == (1,)
    assert pick_devices(free, 150, 1, PACK) == (0,)  # 800m used beats the rest
    assert pick_devices(free, 150, 1, FIRST_FIT) == (0,)
    assert pick_devices(free, 500, 1, PACK) == (2,)
    assert pick_devices(free, 300, 2, PACK) == (1, 4)  # equal room: the lower index first
    assert pick_devices(free, 300, 3, PACK) == (1, 2, 4)
    assert pick_devices(np.array([1000, 600, 900]), 100, 1, PACK) == (1,)
    assert pick_devices(np.array([1000, 600, 900]), 100, 1, FIRST_FIT) == (0,)
    assert pick_devices(free, 1000, 2, PACK) is None
