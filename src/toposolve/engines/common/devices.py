"""Per-device room: how many pods of a device shape fit on a node, and which devices they take.

The one device rule of the engines (docs/formats.md, "Per-device GPU sharing"), Volcano's
``gpushare`` allocation: a pod taking ``milli`` of ``count`` devices takes the ``count``
lowest-index devices that still have ``milli`` free (first fit); whole-device pods
(``milli`` = 1000) so take the lowest free devices.
"""

from __future__ import annotations

import numpy as np

from toposolve.core.instance import DEVICE_MILLI
from toposolve.core.limits import UNLIMITED
from toposolve.core.problem import Problem


def pick_devices(free: np.ndarray, milli: int, count: int) -> tuple[int, ...] | None:
    """The devices one pod takes under the module's rule, or None if it does not fit.

    Parameters
    ----------
    free
        [D] free thousandths of each device of the node.
    milli, count
        The pod's shape: thousandths of each device, and how many devices.

    Returns
    -------
    tuple of int or None
        ``count`` device indexes, ascending.
    """
    fits = np.flatnonzero(free >= milli)
    if len(fits) < count:
        return None
    return tuple(int(d) for d in fits[:count])


def device_fit(free: np.ndarray, milli: int, count: int) -> np.ndarray:
    """How many pods of one shape fit in each row of ``free``, taking devices by the rule.

    Parameters
    ----------
    free
        [rows, D] free thousandths of each device.
    milli, count
        The shape; ``count`` 0 takes no device (every row: ``UNLIMITED``).

    Returns
    -------
    numpy.ndarray
        [rows] int64 pod counts.
    """
    rows = free.shape[0]
    if count == 0:
        return np.full(rows, UNLIMITED, dtype=np.int64)
    per_device = np.maximum(free, 0) // milli
    if count == 1:
        return per_device.sum(axis=1).astype(np.int64)
    if milli == DEVICE_MILLI:  # whole devices: lowest free ones, count at a time
        return (per_device.sum(axis=1) // count).astype(np.int64)
    out = np.zeros(rows, dtype=np.int64)
    for r in np.flatnonzero(per_device.sum(axis=1) >= count):  # rare: shared multi-device pods
        room = free[r].copy()
        while (picked := pick_devices(room, milli, count)) is not None:
            room[list(picked)] -= milli
            out[r] += 1
    return out


class DeviceRoom:
    """Free thousandths per node and device ([N, D]) of a problem with per-device sharing."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.free = DEVICE_MILLI - problem.device_used

    def shape(self, group: int) -> tuple[int, int]:
        p = self.problem
        return int(p.group_device_milli[group]), int(p.group_device_count[group])

    def fit_counts(self, group: int, nodes: np.ndarray) -> np.ndarray:
        """[len(nodes)] pods of ``group`` the devices of ``nodes`` still hold."""
        return device_fit(self.free[nodes], *self.shape(group))

    def take(self, group: int, node: int, count: int) -> list[tuple[int, ...]]:
        """Place ``count`` pods of ``group`` on ``node``: their devices, one tuple per pod."""
        milli, devices = self.shape(group)
        if devices == 0:
            return []
        picks = []
        for _ in range(count):
            picked = pick_devices(self.free[node], milli, devices)
            if picked is None:
                raise ValueError(f"pod of group {group} does not fit the devices of node {node}")
            self.free[node, list(picked)] -= milli
            picks.append(picked)
        return picks

    def give_back(self, group: int, node: int, picks: list[tuple[int, ...]]) -> None:
        """Undo :meth:`take`."""
        milli = self.shape(group)[0]
        for picked in picks:
            self.free[node, list(picked)] += milli
